import Testing
import Foundation
import FolioStorage
import FolioTestSupport

/// Locks and readers across processes, with the project's own `folio-torture` executable as
/// the second process (written as timelines, after GRDB's concurrency tests).
@Suite(.serialized) struct MultiProcessTests {
    /// Timeline: the child begins a transaction (its turn takes the lock) → we try to open
    /// for writing → refused at once → a reader opens meanwhile → the child ends its
    /// transaction and exits → we open. Then the reverse: we hold a transaction → the
    /// child is refused; we commit (the turn ends) → the child opens.
    @Test func aWriterInAnotherProcessIsRefusedWhileATurnHoldsTheLock() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        try Store.open(at: path, options: testOptions()).close()
        let tool = try ProjectExecutable.path("folio-torture")

        let holder = try ChildProcess(tool, ["hold-writer", path])
        try holder.waitForLine { $0 == "ready" }
        let start = ContinuousClock.now
        #expect(throws: StorageError.lockedByAnotherWriter(path: "\(path)/lock")) {
            _ = try Store.open(at: path, options: testOptions())
        }
        #expect(ContinuousClock.now - start < .seconds(1), "refusal must not wait for the lock")
        // A reader opens while the writer holds the lock.
        let reader = try Store.openReadOnly(at: path, options: testOptions())
        #expect(reader.generation >= 1)
        holder.closeInput()
        #expect(try holder.wait() == 0)
        try Store.open(at: path, options: testOptions()).close()

        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        let transaction = try store.beginWrite()
        try transaction.put([1], for: [1], in: "t")
        let contender = try ChildProcess(tool, ["try-writer", path])
        let line = try contender.waitForLine { $0.hasPrefix("locked") || $0 == "opened" }
        #expect(line.hasPrefix("locked"))
        #expect(try contender.wait() == 0)
        try transaction.commit()
        let second = try ChildProcess(tool, ["try-writer", path])
        #expect(try second.waitForLine { $0.hasPrefix("locked") || $0 == "opened" } == "opened")
        #expect(try second.wait() == 0)
    }

    /// Idle means unlocked: a writer process that has the store open with no transaction in
    /// flight holds no lock, as another process sees it (a non-blocking `flock` of the lock
    /// file succeeds, and a writer with no busy timeout opens and commits, which it could not
    /// if the lock were held), and `/proc/locks` lists no lock of that process.
    @Test func anIdleWriterHoldsNoLock() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        try Store.open(at: path, options: testOptions()).close()
        let tool = try ProjectExecutable.path("folio-torture")
        let idle = try ChildProcess(tool, ["idle-writer", path])
        try idle.waitForLine { $0 == "ready" }
        #if os(Linux)
        let locks = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
        let idlesLocks = locks.split(separator: "\n").filter { $0.split(separator: " ").contains("\(idle.pid)") }
        #expect(idlesLocks.isEmpty, "the idle writer holds \(idlesLocks)")
        #endif
        let probe = try ChildProcess(tool, ["try-lock", "\(path)/lock"])
        #expect(try probe.waitForLine { $0 == "locked" || $0 == "busy" } == "locked")
        #expect(try probe.wait() == 0)
        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        try store.write { try $0.put([1], for: [1], in: "t") }
        #expect(!store.holdsWriterLock, "the turn ended with the commit")
        idle.closeInput()
        #expect(try idle.wait() == 0)
    }

    /// A writer between turns follows another writer process's commits (`refresh()`), and
    /// then, while nothing changes, each look is one read of the root file: no file is
    /// opened and no root loaded again (it remembers what it followed).
    @Test func anIdleWriterFollowsAnotherProcessAndThenLooksCheaply() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let recording = RecordingFileSystem(wrapping: POSIXFileSystem())
        var options = testOptions(recording)
        options.autoCompaction = nil
        let store = try Store.open(at: path, options: options)
        defer { store.close() }
        try store.write { try $0.put([1], for: [1], in: "t") }
        let before = store.generation
        let child = try ChildProcess(try ProjectExecutable.path("folio-torture"), ["writer", path, "3"])
        #expect(try child.wait() == 0, "\(child.errorOutput)")
        #expect(try store.refresh())
        #expect(store.generation == before + 3)
        #expect(try store.read().get(Array("k0".utf8), in: "consistency") != nil)
        recording.reset()
        for _ in 0..<3 { #expect(try store.refresh() == false) }
        #expect(!recording.operations.contains { $0.kind == .open }, "\(recording.operations.map(\.kind))")
        // Its next turn builds on what it followed.
        try store.write { try $0.put([2], for: [2], in: "t") }
        #expect(store.generation == before + 4)
        #expect(store.verify().isClean)
    }

    /// A killed writer's lock is free at once (the kernel drops flock locks with the process).
    @Test func killedWritersLockIsFreeAtOnce() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        try Store.open(at: path, options: testOptions()).close()
        let holder = try ChildProcess(try ProjectExecutable.path("folio-torture"), ["hold-writer", path])
        try holder.waitForLine { $0 == "ready" }
        holder.kill()
        _ = try holder.wait()
        try Store.open(at: path, options: testOptions()).close()
    }

    /// Timeline: a read-only child follows the store (refreshing) while this process commits
    /// 300 transactions and compacts every 50: every view the child takes is consistent
    /// (all keys of one generation), and it sees many generations.
    @Test func readerInAnotherProcessReadsWhileTheWriterCommitsAndCompacts() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        var options = testOptions()
        options.retention = SnapshotRetention(gracePeriod: .milliseconds(200))
        let store = try Store.open(at: path, options: options)
        try store.write { txn in
            for k in 0..<20 {
                try txn.put(Array(String(txn.generation).utf8), for: Array("k\(k)".utf8), in: "consistency")
            }
        }
        let reader = try ChildProcess(try ProjectExecutable.path("folio-torture"), ["reader", path, "4"])
        for i in 0..<300 {
            try store.write { txn in
                let generation = Array(String(txn.generation).utf8)
                for k in 0..<20 { try txn.put(generation, for: Array("k\(k)".utf8), in: "consistency") }
            }
            if i % 50 == 49 { try store.compact() }
        }
        let summary = try reader.waitForLine(timeout: 60) { $0.hasPrefix("views") }
        #expect(try reader.wait() == 0, "reader failed: \(reader.errorOutput)")
        let parts = summary.split(separator: " ")
        #expect(Int(parts[1])! > 10)
        #expect(Int(parts[3])! > 1, "the reader should have followed several generations")
        #expect(store.verify().isClean)
        store.close()
    }

    /// In one process, a second writer on the same store is refused with its own error.
    @Test func secondOpenInTheSameProcessIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let store = try Store.open(at: path, options: testOptions())
        #expect(throws: StorageError.alreadyOpenInThisProcess(path: path)) {
            _ = try Store.open(at: path, options: testOptions())
        }
        store.close()
        try Store.open(at: path, options: testOptions()).close()
    }
}
