import Testing
import Foundation
import Synchronization
import FolioStorage
import FolioTestSupport

@Suite(.serialized) struct FollowingTests {
    /// A read-only store follows the writer by itself (inotify here) and replays every
    /// commit in order, with views before and after, across a compaction.
    @Test func readerFollowsAndReplaysCommits() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        var options = testOptions()
        options.retention = SnapshotRetention(gracePeriod: .seconds(60))
        let writer = try Store.open(at: path, options: options)
        let reader = try Store.openReadOnly(at: path, options: testOptions())
        let events = Mutex<[StoreEvent]>([])
        let observation = reader.observe { event in events.withLock { $0.append(event) } }
        try reader.startFollowing(pollInterval: .seconds(60))  // notification, not polling, must do it
        for i in 0..<30 {
            try writer.write { try $0.put(Array("v\(i)".utf8), for: [UInt8(i % 7)], in: "t") }
            if i == 15 { try writer.compact() }
        }
        let target = writer.generation
        #expect(await eventually(every: .milliseconds(10)) { reader.generation == target })
        let commits = events.withLock { $0 }.flatMap { event -> [CommitNotification] in
            if case .committed(let list) = event { return list }
            Issue.record("unexpected \(event)")
            return []
        }
        #expect(commits.map(\.generation) == Array(2...target), "every generation once, in order")
        // Each transaction commit says which key changed, and its views show old and new values.
        for commit in commits where !commit.changes.isEmpty {
            let key = commit.changes.trees[0].entries[0].key
            let new = try commit.after?.get(key, in: "t")
            #expect(new != nil)
            if commit.changes.trees[0].entries[0].kind == .updated {
                #expect(try commit.before?.get(key, in: "t") != new)
            }
        }
        observation.cancel()
        reader.close()
        writer.close()
    }

    /// History whose file is gone (compacted twice, no retention) cannot be replayed:
    /// observers are told to reload instead, and the store still moves to the newest
    /// generation. (After one compaction the follower still has the replaced file open, and
    /// replays through it: FollowingEdgeTests.)
    @Test func lostHistoryIsSignalled() throws {
        let fileSystem = try memoryFileSystem()
        let writer = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(fileSystem))
        let events = Mutex<[StoreEvent]>([])
        _ = reader.observe { event in events.withLock { $0.append(event) } }
        try reader.startFollowing(pollInterval: .seconds(60))
        try writer.write { try $0.put([1], for: [1], in: "t") }
        try writer.compact()  // grace 0: file 1 goes at once (the reader still has it open)
        try writer.write { try $0.put([2], for: [2], in: "t") }
        try writer.compact()  // file 2 goes too, which the reader never opened
        try writer.write { try $0.put([3], for: [3], in: "t") }
        reader.catchUp()
        #expect(reader.generation == writer.generation)
        let last = events.withLock { $0.last }
        if case .historyUnavailable(let from, let to)? = last {
            #expect(from == 1 && to == writer.generation)
        } else {
            Issue.record("expected historyUnavailable, got \(String(describing: last))")
        }
        #expect(throws: StorageError.historyUnavailable(from: 1)) { _ = try reader.commits(after: 1) }
        #expect(try reader.commits(after: writer.generation - 1).count == 1)
    }
}
