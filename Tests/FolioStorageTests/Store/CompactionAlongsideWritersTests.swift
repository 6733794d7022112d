import Dispatch
import Foundation
import Synchronization
import Testing
import FolioStorage
import FolioTestSupport

/// Compaction copies a pinned generation while writers go on, then catches up to the tip
/// holding the writer slot (Docs/Durability.md §1.3): commits complete during the copy, the
/// compacted store is exactly the tip, automatic compaction runs off the committing thread,
/// and close stops a running compaction.
@Suite struct CompactionAlongsideWritersTests {
    /// The second snapshot file: the copy of a store's first compaction.
    static let newFile = "0000000000000002.folio"

    /// Rewrites `count` random keys of `model`'s trees in one commit.
    static func rewrite(
        _ count: Int, of model: borrowing Mutex<TreeModel>, in store: Store, rng: inout SplitMix64, tag: String
    )
        throws
    {
        var chosen: [(tree: String, key: [UInt8])] = []
        model.withLock { model in
            for _ in 0..<count {
                let tree = rng.pick(["first", "second"])
                guard let entries = model.trees[tree], !entries.isEmpty else { continue }
                chosen.append((tree, entries[rng.index(entries.count)].key))
            }
        }
        try store.write { txn in
            for (tree, key) in chosen { try txn.put(bytes(tag), for: key, in: tree) }
        }
        model.withLock { model in for (tree, key) in chosen { model.put(bytes(tag), for: key, in: tree) } }
    }

    /// A timeline: while the compaction writes its new file (its copy of the generation it
    /// pinned), this thread commits twice, into the old file; both commits complete, and
    /// the compacted store holds them. Before compaction ran alongside writers, it held the
    /// writer slot from its start, and these commits failed with writeTransactionInProgress.
    @Test func commitsCompleteWhileTheCompactionCopies() throws {
        let fileSystem = WriteHookFileSystem(wrapping: try memoryFileSystem())
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        let model = Mutex(sampleModel(count: 2_000, seed: 3))
        try write(model.withLock { $0 }, to: store)
        var rng = SplitMix64(seed: 4)
        for round in 0..<5 { try Self.rewrite(40, of: model, in: store, rng: &rng, tag: "round \(round)") }
        let pinned = store.generation
        let before = try store.statistics()

        let during = Mutex<(commits: Int, errors: [String])>((0, []))
        fileSystem.setHook { path in
            guard path.hasSuffix(Self.newFile), during.withLock({ $0.commits + $0.errors.count < 2 }) else { return }
            do {
                let n = during.withLock { $0.commits }
                try store.write { txn in
                    try txn.put(bytes("during \(n)"), for: bytes("during-key-\(n)"), in: "first")
                    try txn.put(bytes("new tree \(n)"), for: bytes("k\(n)"), in: "third")
                    _ = try txn.remove(bytes("key-0"), from: "second")
                }
                model.withLock { model in
                    model.put(bytes("during \(n)"), for: bytes("during-key-\(n)"), in: "first")
                    model.put(bytes("new tree \(n)"), for: bytes("k\(n)"), in: "third")
                    model.remove(bytes("key-0"), from: "second")
                }
                during.withLock { $0.commits += 1 }
            } catch {
                during.withLock { $0.errors.append("\(error)") }
            }
        }
        let report = try store.compact()
        fileSystem.setHook(nil)
        let seen = during.withLock { $0 }
        #expect(seen.errors.isEmpty, "commits during the copy failed: \(seen.errors)")
        #expect(seen.commits == 2)
        // The compaction commit follows the commits made during the copy: same contents as
        // that tip, one generation later.
        #expect(report.generation == pinned + UInt64(seen.commits) + 1)
        #expect(store.generation == report.generation)
        #expect(try contents(of: store.read()) == model.withLock { $0 })
        #expect(store.verify().isClean)
        let after = try store.statistics()
        #expect(after.fileCount == 1 && after.deadBytes < before.deadBytes)
        store.close()
        let reopened = try Store.open(at: "/stores/s", options: testOptions(fileSystem.wrapped))
        defer { reopened.close() }
        #expect(reopened.generation == report.generation)
        #expect(try contents(of: reopened.read()) == model.withLock { $0 })
        #expect(reopened.verify().isClean)
    }

    /// A model test: random commits (puts of small and overflow values, removes, new trees,
    /// dropped trees, bulk writes that make the next pass large) after every background
    /// pass of every compaction, so that each compaction copies, copies again and catches
    /// up over commits it did not see; after each, the store equals the model and verifies.
    @Test(arguments: [11, 12, 13] as [UInt64]) func compactedStoreEqualsTheTip(seed: UInt64) throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        let model = Mutex(sampleModel(count: 4_000, seed: seed))
        try write(model.withLock { $0 }, to: store)
        let rng = Mutex(SplitMix64(seed: seed &* 31))
        let passes = Mutex<[Int]>([])
        let failures = Mutex<[String]>([])
        store.onCompactionPass { pass in
            passes.withLock { $0.append(pass) }
            do {
                try rng.withLock { rng in try Self.randomCommit(store, model: model, rng: &rng, bulk: pass < 3) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        for round in 0..<6 {
            for _ in 0..<5 { try rng.withLock { try Self.randomCommit(store, model: model, rng: &$0, bulk: false) } }
            let before = store.generation
            let report = try store.compact()
            #expect(report.generation > before + 1, "round \(round): commits came between the copy and the catch-up")
            #expect(try contents(of: store.read()) == model.withLock { $0 }, "round \(round)")
            let verification = store.verify()
            #expect(verification.isClean, "round \(round): \(verification.problems)")
        }
        store.onCompactionPass(nil)
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(passes.withLock { $0 }.contains(3), "some compaction made a third pass: \(passes.withLock { $0 })")
        store.close()
        let reopened = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        defer { reopened.close() }
        #expect(try contents(of: reopened.read()) == model.withLock { $0 })
        #expect(reopened.verify().isClean)
    }

    /// One random commit, mirrored in `model`. `bulk` sometimes writes 100 values of 3,000
    /// bytes, so that the next pass copies more than a small pass and another follows.
    static func randomCommit(
        _ store: Store, model: borrowing Mutex<TreeModel>, rng: inout SplitMix64, bulk: Bool
    ) throws {
        var next = model.withLock { $0 }
        try store.write { txn in
            if bulk && rng.index(2) == 0 {
                for i in 0..<100 {
                    let value = (0..<3_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                    let key = bytes("bulk-\(rng.index(1_000))-\(i)")
                    try txn.put(value, for: key, in: "first")
                    next.put(value, for: key, in: "first")
                }
                return
            }
            for _ in 0..<(1 + rng.index(20)) {
                let tree = rng.pick(["first", "second", "third", "fourth"])
                switch rng.index(10) {
                case 0..<5:
                    let length = rng.index(8) == 0 ? 3_000 : 1 + rng.index(100)
                    let value = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                    let key = bytes("key-\(rng.index(100_003))")
                    try txn.put(value, for: key, in: tree)
                    next.put(value, for: key, in: tree)
                case 5..<8:
                    guard let entries = next.trees[tree], !entries.isEmpty else { continue }
                    let key = entries[rng.index(entries.count)].key
                    _ = try txn.remove(key, from: tree)
                    next.remove(key, from: tree)
                case 8:
                    if tree == "third" || tree == "fourth" {
                        _ = try txn.dropTree(tree)
                        _ = next.drop(tree)
                    }
                default:
                    let key = bytes("key-\(rng.index(100_003))")
                    try txn.put([], for: key, in: tree)
                    next.put([], for: key, in: tree)
                }
            }
        }
        model.withLock { $0 = next }
    }

    /// The commit that crosses the automatic compaction's bound returns without compacting:
    /// the compaction runs on a thread of its own, and commits complete while it copies.
    /// Before, it ran inside that commit, on the committing thread.
    @Test func automaticCompactionRunsOffTheCommittingThread() throws {
        let fileSystem = WriteHookFileSystem(wrapping: try memoryFileSystem())
        var options = testOptions(fileSystem)
        options.autoCompaction = AutoCompaction(slackBytes: 256 << 10, deadToLiveRatio: 0)
        let store = try Store.open(at: "/stores/s", options: options)
        defer { store.close() }
        let model = Mutex(sampleModel(count: 2_000, seed: 5))
        try write(model.withLock { $0 }, to: store)
        struct Timeline {
            var compactedInsideCommit = false
            var held = false
        }
        let timeline = Mutex(Timeline())
        let testThread = ObjectIdentifier(Thread.current)
        let blocked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        fileSystem.setHook { path in
            guard path.hasSuffix(Self.newFile) else { return }
            let hold = timeline.withLock { timeline -> Bool in
                if ObjectIdentifier(Thread.current) == testThread {
                    timeline.compactedInsideCommit = true
                    return false
                }
                defer { timeline.held = true }
                return !timeline.held
            }
            guard hold else { return }
            blocked.signal()
            release.wait()
        }
        var rng = SplitMix64(seed: 6)
        var round = 0
        // Commit until the compaction has started (and is held at its first write).
        while !timeline.withLock({ $0.held || $0.compactedInsideCommit }) && round < 400 {
            try Self.rewrite(40, of: model, in: store, rng: &rng, tag: "round \(round)")
            round += 1
        }
        let compactedInside = timeline.withLock { $0.compactedInsideCommit }
        #expect(!compactedInside, "the crossing commit compacted on the committing thread")
        guard !compactedInside, timeline.withLock({ $0.held }) else { return }
        blocked.wait()
        // The compaction is held in its copy: commits go on.
        for extra in 0..<3 { try Self.rewrite(10, of: model, in: store, rng: &rng, tag: "extra \(extra)") }
        release.signal()
        store.waitForCompaction()
        fileSystem.setHook(nil)
        #expect(try contents(of: store.read()) == model.withLock { $0 })
        #expect(store.verify().isClean)
        let statistics = try store.statistics()
        #expect(statistics.fileCount == 1)
        #expect(try fileSystem.contentsOfDirectory("/stores/s/snapshots").contains(Self.newFile))
    }

    /// Close stops a compaction in its copy and returns once it is gone: its file removed,
    /// the store as the last commit left it, nothing written after close returned.
    /// The replaced file is unlinked after the compaction's last turn has let the store's
    /// lock go (unlinking a large file takes the file system a while, and no writer of any
    /// process need wait for it), and before the compaction lock is let go. Read from the
    /// order of the file system calls.
    @Test func theReplacedFileIsRemovedAfterTheLastTurn() throws {
        let recording = RecordingFileSystem(wrapping: try memoryFileSystem())
        var options = testOptions(recording)
        options.autoCompaction = nil
        options.retention = SnapshotRetention(gracePeriod: .zero, maximumRetainedFiles: 1, maximumRetainedBytes: 0)
        let store = try Store.open(at: "/s", options: options)
        defer { store.close() }
        for i in 0..<50 { try store.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        recording.reset()
        try store.compact()
        let calls = recording.operations
        let removal = try #require(
            calls.firstIndex {
                if case .remove(let path) = $0 { path.hasSuffix("0000000000000001.folio") } else { false }
            },
            "the replaced file was not removed: \(calls)")
        let storeLock = calls[..<removal].last { operation in
            switch operation {
            case .tryLock(let path), .unlock(let path): path == "/s/lock"
            default: false
            }
        }
        #expect(
            storeLock.map { if case .unlock = $0 { true } else { false } } == true,
            "last store lock call: \(String(describing: storeLock))")
        let compactionUnlock = calls.firstIndex {
            if case .unlock(let path) = $0 { path.hasSuffix("compaction.lock") } else { false }
        }
        #expect(compactionUnlock.map { $0 > removal } ?? true, "the compaction lock went before the removal")
    }

    @Test func closeStopsARunningCompaction() throws {
        let fileSystem = WriteHookFileSystem(wrapping: try memoryFileSystem())
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        let model = sampleModel(count: 2_000, seed: 9)
        try write(model, to: store)
        let generation = store.generation
        let blocked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let once = Mutex(false)
        fileSystem.setHook { path in
            guard path.hasSuffix(Self.newFile),
                once.withLock({ first in
                    defer { first = true }; return !first
                })
            else { return }
            blocked.signal()
            release.wait()
        }
        let outcome = Mutex<Result<CompactionReport, StorageError>?>(nil)
        let compacted = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            do throws(StorageError) {
                let report = try store.compact()
                outcome.withLock { $0 = .success(report) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            compacted.signal()
        }
        blocked.wait()
        let closed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            store.close()
            closed.signal()
        }
        while !store.isStoppingCompactions { Thread.sleep(forTimeInterval: 0.001) }
        release.signal()
        closed.wait()
        compacted.wait()
        #expect(outcome.withLock { $0 } == .failure(.closed(path: "/stores/s")))
        #expect(fileSystem.itemKind(at: "/stores/s/snapshots/\(Self.newFile)") == nil)
        let reopened = try Store.open(at: "/stores/s", options: testOptions(fileSystem.wrapped))
        defer { reopened.close() }
        #expect(reopened.generation == generation)
        #expect(try contents(of: reopened.read()) == model)
        #expect(reopened.verify().isClean)
    }
}
