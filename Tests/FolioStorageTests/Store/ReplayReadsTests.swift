import Testing
import Foundation
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// A replay reads the commit pages along the chain in blocks (`CommitPageWindow`) and keeps
/// the first pass's oldest commits for the second: every commit still comes back once, in
/// order, with its changes and its views, whatever the page sizes and batch bounds.
@Suite struct ReplayReadsTests {
    let path = "/stores/s"

    /// Commits `count` transactions of one new key each into `store`; returns the keys.
    func commitOneKeyEach(_ count: Int, into store: Store) throws -> [[UInt8]] {
        var keys: [[UInt8]] = []
        for i in 0..<count {
            let key: [UInt8] = [UInt8(i >> 8), UInt8(i & 0xFF)]
            try store.write { try $0.put(Array("value \(i)".utf8), for: key, in: "t") }
            keys.append(key)
        }
        return keys
    }

    /// Each notification is the next generation, changes exactly its key, and its views see
    /// the store before and after it.
    func expectEachCommitOnce(
        _ notifications: [CommitNotification], after start: UInt64, keys: [[UInt8]]
    ) throws {
        #expect(notifications.map(\.generation) == Array((start + 1)...(start + UInt64(keys.count))))
        for (notification, key) in zip(notifications, keys) {
            let changed = notification.changes.trees.flatMap { $0.entries.map(\.key) }
            #expect(changed == [key], "generation \(notification.generation)")
            let i = Int(key[0]) << 8 | Int(key[1])
            #expect(try notification.after?.get(key, in: "t") == Array("value \(i)".utf8))
            #expect(try notification.before?.get(key, in: "t") == nil)
        }
    }

    /// 700 commits replayed at once read their commit pages a block at a time: far fewer
    /// reads than commits (one read per page, as before, would be 1,400: one per pass).
    @Test func aLongReplayReadsItsCommitPagesInBlocks() throws {
        let store = try Store.open(at: path, options: testOptions(try memoryFileSystem()))
        defer { store.close() }
        let start = store.generation
        let keys = try commitOneKeyEach(700, into: store)
        let before = store.ioStatistics
        let notifications = try store.commits(after: start)
        let reads = store.ioStatistics.since(before).pagesRead
        try expectEachCommitOnce(notifications, after: start, keys: keys)
        // The views' first reads of tree pages come on top; the bound leaves room for them.
        #expect(reads < 100, "\(reads) reads for 700 commit pages")
    }

    /// Commits whose runs are large (several leaves of large values each) leave their commit
    /// pages far apart: each is read alone, so the replay reads little more than those pages,
    /// not the runs between them.
    @Test func commitPagesFarApartAreReadAlone() throws {
        let store = try Store.open(at: path, options: testOptions(try memoryFileSystem()))
        defer { store.close() }
        let start = store.generation
        let count = 200
        for i in 0..<count {
            try store.write { transaction in
                for tree in ["a", "b", "c"] {
                    for part in 0..<3 {
                        let key: [UInt8] = [UInt8(i >> 8), UInt8(i & 0xFF), UInt8(part)]
                        try transaction.put([UInt8](repeating: UInt8(part), count: 1_000), for: key, in: tree)
                    }
                }
            }
        }
        let before = store.ioStatistics
        let notifications = try store.commits(after: start)
        let read = store.ioStatistics.since(before)
        #expect(notifications.map(\.generation) == Array((start + 1)...(start + UInt64(count))))
        #expect(notifications.allSatisfy { $0.changes.trees.map(\.entries.count) == [3, 3, 3] })
        // Both passes (the first keeps what it decoded): at most a page a commit a pass.
        #expect(read.pagesRead <= 2 * count, "\(read.pagesRead) reads")
        // The runs are over 9 KB each; their commit pages are a few hundred bytes.
        #expect(read.bytesRead < count * 2_048, "\(read.bytesRead) bytes read for \(count) commit pages")
    }

    /// A reader that catches up after many commits replays them in batches of its bound, the
    /// first ones from what the first pass kept, the rest read again: every commit once, in
    /// order.
    @Test(arguments: [1, 8, 300])
    func aReaderCatchingUpGetsEveryCommitInBatchesOfItsBound(batch: Int) throws {
        let fileSystem = try memoryFileSystem()
        let writer = try Store.open(at: path, options: testOptions(fileSystem))
        defer { writer.close() }
        var readerOptions = testOptions(fileSystem)
        readerOptions.replay = ReplayBounds(batch: batch, limit: .max)
        let reader = try Store.openReadOnly(at: path, options: readerOptions)
        defer { reader.close() }
        let events = Mutex<[StoreEvent]>([])
        let observation = reader.observe { event in events.withLock { $0.append(event) } }
        defer { observation.cancel() }
        try reader.startFollowing(pollInterval: .seconds(600))
        let start = reader.generation
        let keys = try commitOneKeyEach(600, into: writer)
        reader.catchUp()
        let batches = events.withLock { $0 }.map { event -> [CommitNotification] in
            guard case .committed(let list) = event else { return [] }
            return list
        }
        #expect(batches.allSatisfy { !$0.isEmpty && $0.count <= batch })
        try expectEachCommitOnce(batches.flatMap { $0 }, after: start, keys: keys)
    }

    /// Commit pages larger than the first block (a transaction that changed thousands of keys
    /// lists them all) between small ones: each is read alone, and the replay is the same.
    @Test func commitPagesLargerThanTheFirstBlockAreReadAlone() throws {
        let store = try Store.open(at: path, options: testOptions(try memoryFileSystem()))
        defer { store.close() }
        let start = store.generation
        var expected: [[[UInt8]]] = []
        for round in 0..<3 {
            let wide = (0..<3_000).map { i -> [UInt8] in [UInt8(round), UInt8(i >> 8), UInt8(i & 0xFF), 0x77] }
            try store.write { transaction in
                for key in wide { try transaction.put([1], for: key, in: "t") }
            }
            expected.append(wide)
            let small: [UInt8] = [0xFF, UInt8(round)]
            try store.write { try $0.put([2], for: small, in: "t") }
            expected.append([small])
        }
        let notifications = try store.commits(after: start)
        #expect(notifications.map(\.generation) == Array((start + 1)...(start + 6)))
        for (notification, keys) in zip(notifications, expected) {
            let changed = notification.changes.trees.flatMap { $0.entries.map(\.key) }
            #expect(
                changed.sorted { $0.lexicographicallyPrecedes($1) } == keys.sorted { $0.lexicographicallyPrecedes($1) })
        }
        #expect(notifications.count == 6)
    }

    /// A history longer than the bound is refused from the generations alone: no commit page
    /// is read (the walk used to read the bound's worth of them before giving up).
    @Test func aHistoryLongerThanTheBoundIsRefusedWithoutReadingIt() throws {
        var options = testOptions(try memoryFileSystem())
        options.replay = ReplayBounds(batch: 4, limit: 10)
        let store = try Store.open(at: path, options: options)
        defer { store.close() }
        let start = store.generation
        _ = try commitOneKeyEach(11, into: store)
        let view = try store.read()
        let before = store.ioStatistics
        var batches = 0
        #expect(throws: StorageError.historyUnavailable(from: start)) {
            try store.replayCommits(after: start, upTo: view) { _ in batches += 1 }
        }
        #expect(store.ioStatistics.since(before).pagesRead == 0)
        #expect(batches == 0)
        // Within the bound, the same call replays.
        var replayed: [UInt64] = []
        try store.replayCommits(after: start + 1, upTo: view) { replayed += $0.map(\.generation) }
        #expect(replayed == Array((start + 2)...(start + 11)))
    }

    /// With little room to keep decoded commits between the passes, the first pass keeps only
    /// the oldest few and the second reads the rest again, forward, in blocks: every commit
    /// still comes back once, in order, in batches of the bound.
    @Test func aReplayBeyondWhatItKeepsReadsTheRestAgain() throws {
        var options = testOptions(try memoryFileSystem())
        options.replay = ReplayBounds(batch: 8, limit: .max, rememberedBytes: 2 << 10)
        let store = try Store.open(at: path, options: options)
        defer { store.close() }
        let start = store.generation
        let keys = try commitOneKeyEach(600, into: store)
        let view = try store.read()
        var batches: [[CommitNotification]] = []
        let before = store.ioStatistics
        try store.replayCommits(after: start, upTo: view) { batches.append($0) }
        let reads = store.ioStatistics.since(before).pagesRead
        #expect(batches.allSatisfy { !$0.isEmpty && $0.count <= 8 })
        try expectEachCommitOnce(batches.flatMap { $0 }, after: start, keys: keys)
        // Both passes in blocks: still far fewer reads than pages (1,200, one a page a pass).
        #expect(reads < 200, "\(reads) reads")
    }

    /// A store whose first commit carries a later generation (a backup's) replays from
    /// generation 0 whatever the gap: the chain is one commit long, within any bound.
    @Test func aBackupReplaysFromGenerationZeroWhateverItsGeneration() throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        _ = try commitOneKeyEach(30, into: store)
        _ = try store.backup(to: "/stores/backup")
        store.close()
        var options = testOptions(fileSystem)
        options.replay = ReplayBounds(batch: 4, limit: 10)
        let backup = try Store.open(at: "/stores/backup", options: options)
        defer { backup.close() }
        #expect(backup.generation > 10)
        let replayed = try backup.commits(after: 0)
        #expect(replayed.map(\.generation) == [backup.generation])
    }
}
