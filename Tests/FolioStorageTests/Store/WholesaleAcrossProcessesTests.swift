import Testing
import Foundation
import Synchronization
import FolioStorage
import FolioTestSupport

/// A wholesale commit made by another process, with the default change record key limit
/// (`folio-torture big-transaction` puts 20,000 keys in one transaction): the store becomes
/// format version 3 while a read-only store in this process follows it. The follower moves
/// to the new generation, replays the commit from its commit page as changed wholesale
/// (observers reload), reads the store as version 3 and verifies it; a writer opened after
/// it recovers and verifies.
@Suite(.serialized) struct WholesaleAcrossProcessesTests {
    @Test func aFollowingReaderReplaysAnotherProcessesWholesaleCommit() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let quiet = testOptions(log: { _ in })
        do {
            let writer = try Store.open(at: path, options: quiet)
            try writer.write { try $0.put([1], for: [1], in: "small") }
            writer.close()
        }
        let reader = try Store.openReadOnly(at: path, options: quiet)
        defer { reader.close() }
        #expect(try reader.describe().rootFormatVersion == 2)
        let start = reader.generation
        let received = Mutex<[CommitNotification]>([])
        let observation = reader.observe { event in
            if case .committed(let commits) = event { received.withLock { $0 += commits } }
        }
        defer { observation.cancel() }
        try reader.startFollowing(pollInterval: .milliseconds(20))

        let child = try ChildProcess(
            try ProjectExecutable.path("folio-torture"), ["big-transaction", path, "20000", "\(64 << 20)"])
        #expect(try child.wait() == 0, "\(child.errorOutput)")
        #expect(child.output.last == "count 20000", "\(child.output)")

        // Followed by the directory watch; a catch-up by hand as well, in case the watch is slow.
        let deadline = Date().addingTimeInterval(30)
        while received.withLock({ $0.isEmpty }) && Date() < deadline {
            reader.catchUp()
            Thread.sleep(forTimeInterval: 0.02)
        }
        let commits = received.withLock { $0 }
        #expect(commits.map(\.generation) == [start + 1])
        #expect(commits.first?.changes == ChangeRecord(trees: [.wholesale("big")]))
        #expect(reader.generation == start + 1)
        #expect(try reader.read().count(in: "big") == 20_000)
        #expect(try reader.describe().rootFormatVersion == 3)
        #expect(reader.verify().isClean)

        let writer = try Store.open(at: path, options: quiet)
        #expect(writer.generation == start + 1)
        #expect(try writer.read().changes().isChangedWholesale("big"))
        #expect(writer.verify().isClean)
        writer.close()
    }
}
