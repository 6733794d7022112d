import Testing
import Foundation
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// The edges of a writer's turn (Store+WriterTurns.swift): what keeps the store's lock
/// held, who is woken, and what an observer may do while a turn starts. Each was a bug of
/// the first version of turns, seen failing before its fix: a grouped flush's slot write
/// after the lock was let go, an observer's write waiting for its own thread, a waiter
/// never woken by close, a cancelled async begin trying the lock in a loop, and retired
/// files left at close.
@Suite(.serialized) struct WriterTurnEdgeTests {
    static let path = "/stores/s"

    /// Grouped durability: a flush in flight (pending commits taken, sync running) and a
    /// transaction that begins and rolls back on another thread. The lock stays held until
    /// the flush's slot write: another holder cannot take it, and no slot is written while
    /// another holder has it.
    @Test func groupedFlushInFlightKeepsTheLock() throws {
        let memory = try memoryFileSystem()
        let gate = BlockingSyncFileSystem(wrapping: memory, paths: { $0.contains("/snapshots/") })
        let store = try Store.open(
            at: Self.path, options: testOptions(gate, durability: .grouped(window: .seconds(3600))))
        defer { store.close() }
        try store.write { try $0.put([1], for: [1], in: "t") }
        #expect(store.holdsWriterLock)
        let slotBefore = try Store.openReadOnly(at: Self.path, options: testOptions(memory)).generation
        gate.holdNextSync()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? store.flush()
            done.signal()
        }
        gate.waitUntilBlocked()
        let transaction = try store.beginWrite()
        transaction.rollback()
        let heldDuringFlush = store.holdsWriterLock
        let other = try memory.openLockFile(Self.path + "/lock")
        let otherGotIt = try other.tryLock()
        gate.release()
        done.wait()
        let slotAfter = try Store.openReadOnly(at: Self.path, options: testOptions(memory)).generation
        other.close()
        #expect(heldDuringFlush, "released while the flush's sync and slot write were still to come")
        #expect(!otherGotIt, "another holder took the lock while the flush was in flight")
        #expect(
            !(otherGotIt && slotAfter > slotBefore),
            "slot written (\(slotBefore) -> \(slotAfter)) while another holder had the lock")
    }

    /// An observer that writes, called with the events of the commits a turn's catch-up
    /// adopted: they are delivered once exclusive use has ended, so the write begins.
    @Test func observerWritingDuringATurnsCatchUpDelivery() throws {
        let fs = try memoryFileSystem()
        let first = try Store.open(at: Self.path, options: testOptions(fs))
        defer { first.close() }
        let wrote = Mutex(false)
        let observation = first.observe { event in
            guard case .committed = event else { return }
            let already = wrote.withLock { value -> Bool in
                defer { value = true }
                return value
            }
            if already { return }
            try? first.write { try $0.put([9], for: [9], in: "t") }
        }
        defer { observation.cancel() }
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? first.withWriterLockReleased {
                let other = try Store.open(at: Self.path, options: testOptions(fs))
                defer { other.close() }
                try other.write { try $0.put([2], for: [2], in: "t") }
            }
            finished.signal()
        }
        #expect(finished.wait(timeout: .now() + 60) == .success, "deadlock: observer's write waits for its own thread")
    }

    /// close() while a turn's acquisition holds exclusive use (its observer delivery is
    /// held here) and another thread's beginWrite waits for it: close wakes the waiter, which
    /// finds the store closed.
    @Test func closeDuringAnAcquisitionWakesWaitingWriters() throws {
        let fs = try memoryFileSystem()
        let first = try Store.open(at: Self.path, options: testOptions(fs))
        let inObserver = DispatchSemaphore(value: 0)
        let letGo = DispatchSemaphore(value: 0)
        let once = Mutex(false)
        let observation = first.observe { _ in
            let already = once.withLock { value -> Bool in
                defer { value = true }
                return value
            }
            if already { return }
            inObserver.signal()
            letGo.wait()
        }
        defer { observation.cancel() }
        Thread.detachNewThread {
            _ = try? first.withWriterLockReleased {
                let other = try Store.open(at: Self.path, options: testOptions(fs))
                defer { other.close() }
                try other.write { try $0.put([2], for: [2], in: "t") }
            }
        }
        inObserver.wait()
        let waiterDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? first.beginWrite()
            waiterDone.signal()
        }
        usleep(300_000)
        first.close()
        letGo.signal()
        #expect(waiterDone.wait(timeout: .now() + 60) == .success, "beginWrite never woken after close")
    }

    /// A cancelled task waiting in beginWriteSuspending for another holder's lock pauses
    /// between tries as any waiter does (a cancelled task's sleep returns at once).
    @Test func cancelledSuspendingBeginDoesNotSpin() async throws {
        let fs = try memoryFileSystem()
        var options = testOptions(fs)
        options.busyTimeout = .milliseconds(200)
        let store = try Store.open(at: Self.path, options: options)
        defer { store.close() }
        let holder = try fs.openLockFile(Self.path + "/lock")
        #expect(try holder.tryLock())
        let task = Task { () -> Int in
            withUnsafeCurrentTask { $0?.cancel() }
            _ = try? await store.beginWriteSuspending()
            return store.failedLockTries
        }
        let tries = await task.value
        holder.close()
        #expect(tries < 100, "\(tries) failed tries in 200 ms")
    }

    /// Close after an idle period removes retired files whose grace period is over, although
    /// the last turn has ended (it takes the lock with one try).
    @Test func closeRemovesExpiredRetiredFiles() throws {
        let fs = try memoryFileSystem()
        var options = testOptions(fs)
        options.retention = SnapshotRetention(gracePeriod: .milliseconds(100))
        let store = try Store.open(at: Self.path, options: options)
        for key: UInt8 in 0..<5 { try store.write { try $0.put([key], for: [key], in: "t") } }
        try store.compact()
        let before = try fs.contentsOfDirectory(Self.path + "/snapshots")
        usleep(300_000)
        store.close()
        let after = try fs.contentsOfDirectory(Self.path + "/snapshots")
        #expect(after.count < before.count, "before \(before), after close \(after)")
    }

    /// A transaction that spilled and rolled back leaves no run for the next turns' catch-up
    /// to walk: an empty turn after it reads what an empty turn reads (the slots and one
    /// page header), not every spilled page (about 1,200 reads and 1.3 MB before the fix).
    @Test func aRolledBackSpillIsNotReadAtEveryTurn() throws {
        let memory = try memoryFileSystem()
        let recording = RecordingFileSystem(wrapping: memory)
        let store = try Store.open(at: Self.path, options: testOptions(recording))
        defer { store.close() }
        try store.write { try $0.put([1], for: [1], in: "t") }
        let big = try store.beginWrite()
        for i in 0..<4000 { try big.put(Array(repeating: 7, count: 200), for: Array("key\(i)".utf8), in: "t") }
        big.rollback()
        recording.reset()
        _ = try store.catchUpWithOtherWriters()
        #expect(recording.statistics.bytesRead < 64 << 10, "\(recording.statistics.reads) reads")
        try store.write { try $0.put([2], for: [2], in: "t") }
        #expect(try store.read().get([2], in: "t") == [2])
        #expect(store.verify().isClean)
    }
}
