import Testing
import Foundation
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// A publish signal (what wakes a replicator in the same process) is raised once for each
/// root slot the writer writes, and, not being an observer, never starts the writer's watch.
@Suite(.serialized) struct PublishSignalTests {
    @Test func eachCommitRaisesTheSignalOnceWithoutStartingTheWatch() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try WatchPauseTests.openFollowingWriter(at: directory.child("store"))
        defer { store.close() }
        let raised = Atomic<Int>(0)
        let signal = store.signalOnPublish { raised.add(1, ordering: .relaxed) }
        let before = store.generation
        for value in 0..<5 { try store.write { try $0.put([UInt8(value)], for: [1], in: "t") } }
        #expect(store.generation == before + 5)
        #expect(raised.load(ordering: .relaxed) == 5)
        #expect(!store.isWatching, "a publish signal started the writer's watch")

        signal.cancel()
        try store.write { try $0.put([9], for: [1], in: "t") }
        #expect(raised.load(ordering: .relaxed) == 5, "a cancelled signal was raised")
    }
}
