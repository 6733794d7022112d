import Foundation
import Synchronization

/// A store's writer lock: its lock file, opened once, taken and released many times, and
/// waited for up to a timeout when another writer holds it.
///
/// Waiting never spins: after a failed try it sleeps, 1 ms at first and twice as long after
/// each further failure up to ``longestSleep``, until the lock is taken or the timeout has
/// passed; then it throws `StorageError.lockedByAnotherWriter(path:)`. A timeout of zero
/// or less is one try. `flock` has a blocking form, but it cannot be given a deadline. The
/// wait blocks the calling thread (nothing interrupts it before its deadline): callers on
/// Swift's cooperative pool should keep the timeout short. A holder that is killed releases
/// the lock with its process (`flock` belongs to the open file), so no lock outlives its
/// writer. Its ``unlock()`` (as the ``FileLock`` a writer keeps) closes the file: a writer
/// that lets the lock go and takes it again opens a new one.
///
/// Today a writer takes it once, at open, and holds it until close; the catch-up after
/// another writer (Store+CatchUp.swift) is what a writer will run each time it takes it
/// again, once writers take it per transaction.
final class WriterLock: Sendable {
    /// The longest sleep between two tries: a waiter notices a release within this time.
    static let longestSleep: Duration = .milliseconds(16)

    private let file: any LockFile
    /// The failed tries so far, over every acquisition: how tests see a writer waiting.
    private let failedTries = Atomic<Int>(0)

    /// Opens (creating if missing) the lock file at `path`, without locking it.
    init(path: String, fileSystem: any FileSystem) throws(StorageError) {
        file = try fileSystem.openLockFile(path)
    }

    /// The lock file's path.
    var path: String { file.path }

    /// Failed tries so far, over every acquisition.
    var failedTryCount: Int { failedTries.load(ordering: .relaxed) }

    /// Takes the lock, waiting up to `timeout` (zero: one try) while another holder has it;
    /// throws `StorageError.lockedByAnotherWriter(path:)` once it has waited that long.
    func acquire(waitingUpTo timeout: Duration) throws(StorageError) {
        let deadline = ContinuousClock.now + timeout
        var sleep: Duration = .milliseconds(1)
        while true {
            if try file.tryLock() { return }
            failedTries.add(1, ordering: .relaxed)
            let now = ContinuousClock.now
            guard now < deadline else { throw .lockedByAnotherWriter(path: file.path) }
            Thread.sleep(forTimeInterval: Self.seconds(min(sleep, deadline - now)))
            sleep = min(sleep * 2, Self.longestSleep)
        }
    }

    /// Releases the lock if this writer holds it.
    func release() { file.unlock() }

    /// Releases the lock and closes the lock file.
    func close() { file.close() }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// ``WriterLock`` as the ``FileLock`` a writer's state keeps: releasing it closes the file.
extension WriterLock: FileLock {
    func unlock() { close() }
}
