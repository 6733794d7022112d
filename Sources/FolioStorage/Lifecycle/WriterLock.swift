import Foundation
import Synchronization

/// A store's writer lock: its lock file, opened once when a writer opens the store and kept
/// open until it closes, taken for each turn of writing and released when the turn ends
/// (Store+WriterTurns.swift).
///
/// Only one thread of a store tries it at a time (the store's exclusive mode says which), so
/// the `flock` calls of one open file description never interleave: a try cannot succeed
/// on a lock this process is in the middle of releasing. A holder that is killed releases
/// the lock with its process (`flock` belongs to the open file), so no lock outlives its
/// writer.
final class WriterLock: Sendable {
    /// The longest pause between two tries: a waiter notices a release within this time.
    /// Short, because `flock` does not queue: a process committing in a loop frees the lock
    /// for microseconds between its turns, and a waiter gets a turn only if a try lands
    /// then, so the more often it tries, the sooner it does. A try costs a wake-up and a
    /// system call, a few microseconds: four times that every 4 ms is nothing.
    static let longestPause: Duration = .milliseconds(4)

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

    /// One try: true if this writer holds the lock now, false at once if another does.
    func tryAcquire() throws(StorageError) -> Bool {
        if try file.tryLock() { return true }
        failedTries.add(1, ordering: .relaxed)
        return false
    }

    /// Takes the lock, waiting up to `timeout` (zero: one try) while another holder has it;
    /// throws `StorageError.lockedByAnotherWriter(path:)` once it has waited that long. The
    /// wait blocks the calling thread.
    func acquire(waitingUpTo timeout: Duration) throws(StorageError) {
        var wait = LockWait(timeout: timeout)
        while !(try tryAcquire()) {
            guard let pause = wait.nextPause() else { throw .lockedByAnotherWriter(path: file.path) }
            LockWait.sleep(pause)
        }
    }

    /// Releases the lock if this writer holds it.
    func release() { file.unlock() }

    /// Releases the lock and closes the lock file.
    func close() { file.close() }
}

/// The pauses of a wait for a lock another process holds: never a spin. 1 ms after the
/// first failed try, twice as long after each further one up to
/// ``WriterLock/longestPause``, until the timeout has passed.
struct LockWait {
    private let started = ContinuousClock.now
    private let deadline: ContinuousClock.Instant
    private var pause: Duration = .milliseconds(1)

    /// A wait that gives up `timeout` from now (zero or less: after the first try).
    init(timeout: Duration) {
        deadline = started + timeout
    }

    /// How long this wait has lasted.
    var waited: Duration { ContinuousClock.now - started }

    /// The pause before the next try, or nil once the timeout has passed.
    mutating func nextPause() -> Duration? {
        let now = ContinuousClock.now
        guard now < deadline else { return nil }
        defer { pause = min(pause * 2, WriterLock.longestPause) }
        return min(pause, deadline - now)
    }

    /// Blocks the calling thread for `duration`.
    static func sleep(_ duration: Duration) {
        Thread.sleep(
            forTimeInterval: Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }
}
