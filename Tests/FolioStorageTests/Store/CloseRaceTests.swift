import Testing
import Foundation
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// `close()` against in-flight commits. Set `FOLIO_STRESS_TESTS=1` for the
/// long run (more rounds and threads); the default takes a second or two.
@Suite struct CloseRaceTests {
    static var isLong: Bool { ProcessInfo.processInfo.environment["FOLIO_STRESS_TESTS"] == "1" }

    /// A transaction begun before close but committed after it gets `.closed` and leaves
    /// nothing on disk (committing it without the writer would write a root after close,
    /// slot 1 empty).
    @Test(arguments: [Durability.full, .grouped(window: .seconds(60))])
    func commitAfterCloseThrowsClosedAndKeepsNothing(durability: Durability) throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem, durability: durability))
        try store.write { try $0.put(bytes("kept"), for: bytes("a"), in: "t") }
        let late = try store.beginWrite()
        try late.put(bytes("lost"), for: bytes("b"), in: "t")
        store.close()
        #expect(throws: StorageError.closed(path: "/stores/s")) { try late.commit() }
        let reopened = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        defer { reopened.close() }
        let view = try reopened.read()
        #expect(try view.get(bytes("a"), in: "t") == bytes("kept"))
        #expect(try view.get(bytes("b"), in: "t") == nil)
        #expect(reopened.verify().isClean)
    }

    /// Many threads commit in a loop while the main thread closes the store at a varying
    /// moment and at once opens it again (a new writer on the same path). Every commit that
    /// returned must be in the store after the last reopen, and the store must open and
    /// verify clean.
    @Test(arguments: [Durability.full, .grouped(window: .zero)])
    func closeRacingCommitsKeepsEveryAcknowledgedCommit(durability: Durability) throws {
        let rounds = Self.isLong ? 400 : 25
        let threads = Self.isLong ? 8 : 4
        let fileSystem = try memoryFileSystem()
        let path = "/stores/s"
        let acknowledged = Mutex<[Int]>([])
        var rng = SplitMix64(seed: 13)
        for round in 0..<rounds {
            let store = try Store.open(at: path, options: testOptions(fileSystem, durability: durability))
            let group = DispatchGroup()
            for thread in 0..<threads {
                DispatchQueue.global().async(group: group) {
                    var n = 0
                    while true {
                        let key = (round * 1_000 + thread) * 10_000 + n
                        n += 1
                        do {
                            let transaction = try store.beginWrite()
                            try transaction.put(bytes("v\(key)"), for: KeyEncoding.encode(Int64(key)), in: "t")
                            try transaction.commit()
                            acknowledged.withLock { $0.append(key) }
                        } catch StorageError.writeConflict {
                            continue  // another thread committed to "t" first: retry
                        } catch {
                            return  // closed: this writer is done
                        }
                    }
                }
            }
            usleep(UInt32(Int.random(in: 0..<3_000, using: &rng)))
            store.close()
            // A new writer at once, while the old threads may still be inside a commit.
            if let next = try? Store.open(at: path, options: testOptions(fileSystem, durability: durability)) {
                try next.write { try $0.put(bytes("x"), for: bytes("round \(round)"), in: "meta") }
                next.close()
            }
            group.wait()
        }
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        defer { store.close() }
        let view = try store.read()
        var missing: [Int] = []
        for key in acknowledged.withLock({ $0 }) where try view.get(KeyEncoding.encode(Int64(key)), in: "t") == nil {
            missing.append(key)
        }
        #expect(missing.isEmpty, "\(missing.count) acknowledged commits lost, first \(missing.prefix(5))")
        #expect(store.verify().isClean)
    }
}
