import Foundation
import Testing
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// Waiting for the writer lock (`WriterLock`, `StoreOptions.busyTimeout`): a writer waits,
/// sleeping between tries, while another holds the lock, takes it once it is released, and
/// is refused once its timeout has passed; a second writer in this process is refused at
/// once whatever its timeout.
@Suite struct BusyTimeoutTests {
    /// Two writer locks of one lock file (in memory), the first holding it.
    static func heldLockAndWaiter() throws -> (holder: WriterLock, waiter: WriterLock) {
        let fileSystem = try memoryFileSystem()
        let holder = try WriterLock(path: "/stores/lock", fileSystem: fileSystem)
        try holder.acquire(waitingUpTo: .zero)
        return (holder, try WriterLock(path: "/stores/lock", fileSystem: fileSystem))
    }

    /// Timeline: 1. the first holder has the lock; 2. the second asks, with a long timeout,
    /// and is seen failing a try (it waits); 3. the first releases; 4. the second has it.
    @Test func aWaiterTakesTheLockOnceItsHolderReleasesIt() throws {
        let (holder, waiter) = try Self.heldLockAndWaiter()
        defer {
            holder.close()
            waiter.close()
        }
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Void, StorageError>?>(nil)
        Thread {
            let result = Result { () throws(StorageError) in try waiter.acquire(waitingUpTo: .seconds(600)) }
            outcome.withLock { $0 = result }
            done.signal()
        }.start()
        // Hang guards, not timings: a lock that stopped excluding would leave this loop.
        var guardian = HangGuard()
        while waiter.failedTryCount < 1 && !guardian.expired() { usleep(1_000) }
        #expect(outcome.withLock { $0 } == nil, "still waiting while the holder has it")
        holder.release()
        #expect(done.wait(timeout: .now() + 300) == .success)
        #expect(throws: Never.self) { try outcome.withLock { $0 }!.get() }
        // Now the holder is the one refused.
        #expect(throws: StorageError.lockedByAnotherWriter(path: "/stores/lock")) {
            try holder.acquire(waitingUpTo: .zero)
        }
    }

    /// Once its timeout has passed the waiter is refused with the error that names the lock;
    /// it slept between tries (a waiter that spun would try thousands of times in 100 ms; the
    /// sleeps, doubling from 1 ms up to 4 ms, allow about 27).
    @Test func aWaiterIsRefusedOnceItsTimeoutHasPassedAndNeverSpins() throws {
        let (holder, waiter) = try Self.heldLockAndWaiter()
        defer {
            holder.close()
            waiter.close()
        }
        #expect(throws: StorageError.lockedByAnotherWriter(path: "/stores/lock")) {
            try waiter.acquire(waitingUpTo: .milliseconds(100))
        }
        #expect(waiter.failedTryCount >= 2, "it tried again before giving up")
        #expect(waiter.failedTryCount <= 40, "\(waiter.failedTryCount) tries in 100 ms")
    }

    /// A second writer of the same store in this process is refused at once, not after its
    /// timeout: waiting could never end, the lock being this process's own.
    @Test func aSecondWriterInThisProcessIsRefusedAtOnceWhateverItsTimeout() throws {
        let fileSystem = try memoryFileSystem()
        let first = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        defer { first.close() }
        var options = testOptions(fileSystem)
        // Were it waited for, the lock being this process's own, the open would fail after
        // it with another error.
        options.busyTimeout = .seconds(30)
        #expect(throws: StorageError.alreadyOpenInThisProcess(path: "/stores/s")) {
            try Store.open(at: "/stores/s", options: options)
        }
    }

    /// Across processes, as a timeline: 1. a writer process holds the store (an open with
    /// no timeout is refused); 2. an open with a timeout is seen trying the lock more than
    /// once (it waits); 3. the holder closes; 4. the open succeeds and commits.
    @Test func anOpenWaitsForAWriterInAnotherProcessToClose() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        try Store.open(at: path, options: testOptions()).close()
        let holder = try ChildProcess(try ProjectExecutable.path("folio-torture"), ["hold-writer", path])
        defer { holder.kill() }
        try holder.waitForLine { $0 == "ready" }
        #expect(throws: StorageError.lockedByAnotherWriter(path: "\(path)/lock")) {
            try Store.open(at: path, options: testOptions())
        }
        let recording = RecordingFileSystem(wrapping: POSIXFileSystem())
        var waiting = testOptions(recording)
        waiting.busyTimeout = .seconds(600)
        let options = waiting
        let outcome = Mutex<Result<Store, StorageError>?>(nil)
        Thread {
            let result = Result { () throws(StorageError) in try Store.open(at: path, options: options) }
            outcome.withLock { $0 = result }
        }.start()
        let tries = { recording.operations.filter { if case .tryLock = $0 { true } else { false } }.count }
        #expect(await eventually { tries() >= 2 }, "the open waits, trying again")
        #expect(outcome.withLock { $0 } == nil)
        holder.closeInput()  // the holder closes its store and exits
        #expect(try holder.wait() == 0)
        #expect(await eventually { outcome.withLock { $0 } != nil })
        let store = try outcome.withLock { $0 }!.get()
        try store.write { try $0.put([1], for: [1], in: "t") }
        store.close()
    }
}
