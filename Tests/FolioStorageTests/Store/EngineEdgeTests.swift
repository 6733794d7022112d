import Testing
import Foundation
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// Engine edges: reused file descriptors, snapshot files the root does not name (a newer
/// file kept, a directory that cannot be listed), and on-disk integers that do not fit the
/// platform's types.
@Suite struct EngineEdgeTests {
    /// Readers of one POSIX file race its close while other files are opened (reusing
    /// descriptor numbers). A read returns the file's own bytes or fails; it never returns
    /// another file's bytes through a reused descriptor.
    @Test func aReadNeverUsesAReusedDescriptor() throws {
        let directory = TemporaryDirectory("descriptors")
        defer { directory.remove() }
        let fs = POSIXFileSystem()
        let rounds = CloseRaceTests.isLong ? 5_000 : 300
        var foreign = 0
        for round in 0..<rounds {
            let own = directory.path + "/own"
            let file = try fs.open(own, mode: .truncate)
            try file.write([UInt8](repeating: 0xAA, count: 64), at: 0)
            let wrong = Atomic<Int>(0)
            let group = DispatchGroup()
            for _ in 0..<3 {
                DispatchQueue.global().async(group: group) {
                    for _ in 0..<200 {
                        guard let read = try? file.read(at: 0, count: 64) else { return }
                        if read.contains(where: { $0 != 0xAA }) { wrong.add(1, ordering: .relaxed) }
                    }
                }
            }
            file.close()
            // Reuse the number at once with a file of other bytes.
            let other = try fs.open(directory.path + "/other\(round % 4)", mode: .truncate)
            try other.write([UInt8](repeating: 0x55, count: 64), at: 0)
            group.wait()
            other.close()
            foreign += wrong.load(ordering: .relaxed)
        }
        #expect(foreign == 0, "\(foreign) reads returned another file's bytes")
    }

    /// After opening at root slot 1 (slot 0 damaged), the newer file is kept by that open
    /// (the log names it beside the unusable slot); once a root has been written and no slot
    /// names it, the next writer open reclaims it to its header (it held no commit: it is
    /// the compaction's copy, Docs/Durability.md §3 step 8), and the number stays taken.
    @Test func newerFileKeptAsEvidenceIsReclaimedAtTheNextOpen() throws {
        let fileSystem = try memoryFileSystem()
        let path = "/stores/s"
        var options = testOptions(fileSystem)
        options.retention = SnapshotRetention(gracePeriod: .seconds(60))
        let store = try Store.open(at: path, options: options)
        try store.write { try $0.put(bytes("1"), for: bytes("a"), in: "t") }
        let before = fileSystem.contents(of: "\(path)/root")!
        try store.compact()
        store.close()
        try putOlderRoot(from: before, intoSlotOneOf: "\(path)/root", in: fileSystem)
        var root = fileSystem.contents(of: "\(path)/root")!
        root[30] ^= 1
        fileSystem.setContents(root, of: "\(path)/root")
        let evidence = "\(path)/snapshots/0000000000000002.folio"
        let fallback = try Store.open(at: path, options: options)
        try fallback.write { try $0.put(bytes("2"), for: bytes("b"), in: "t") }
        fallback.close()
        #expect(fileSystem.contents(of: evidence) != nil)
        let messages = Mutex<[String]>([])
        options.log = { line in messages.withLock { $0.append(line) } }
        let next = try Store.open(at: path, options: options)
        #expect(fileSystem.contents(of: evidence)?.count == 64, "reclaimed to its header")
        #expect(messages.withLock { $0.contains { $0.contains("reclaiming 0000000000000002.folio") } })
        // A compaction numbers its file above the reclaimed one.
        try next.compact()
        #expect(fileSystem.contents(of: "\(path)/snapshots/0000000000000003.folio") != nil)
        #expect(next.verify().isClean)
        next.close()
    }

    /// A compaction that cannot list the snapshot directory fails instead of
    /// guessing a file number (it could truncate a kept file).
    @Test func compactionPropagatesAListingError() throws {
        let memory = try memoryFileSystem()
        let faults = FaultInjectingFileSystem(wrapping: memory, countedKinds: [.list])
        let store = try Store.open(at: "/stores/s", options: testOptions(faults))
        defer { store.close() }
        try store.write { try $0.put(bytes("1"), for: bytes("a"), in: "t") }
        faults.reset()
        faults.plan = FaultPlan(failingCall: 1)
        #expect(throws: StorageError.self) { try store.compact() }
        #expect(try store.read().get(bytes("a"), in: "t") == bytes("1"))
    }

    /// The conversion of on-disk integers refuses values over the target type
    /// (on 64-bit Linux, Int cannot be narrowed: a narrow type stands in for a 32-bit Int).
    @Test func onDiskIntegersThatDoNotFitAreRejected() {
        #expect(OnDiskInteger.narrow(UInt32(Int16.max), to: Int16.self) == Int16.max)
        #expect(OnDiskInteger.narrow(UInt32(Int16.max) + 1, to: Int16.self) == nil)
        #expect(OnDiskInteger.narrow(UInt32.max, to: Int32.self) == nil)
        #expect(OnDiskInteger.count(UInt32.max) == (Int.bitWidth > 32 ? Int(UInt32.max) : nil))
        #expect(StorageLimits.maximumValueLength == Int(clamping: UInt32.max) - 4096)
    }
}
