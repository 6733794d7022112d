import Dispatch
import Synchronization

/// A store's own serial queue for the syncs of async callers: a task whose turn it is to
/// sync (group commit, Docs/Durability.md §1.4) hands the sync to this queue and suspends
/// until it is done, resumed by a continuation, so that no thread of Swift's cooperative
/// pool is blocked while the disk syncs.
///
/// Why a queue of the store's own rather than the task's thread: the cooperative pool has
/// one thread per core (two on a small machine), and `fdatasync` takes from tens of
/// microseconds to tens of milliseconds. A task blocked in it holds its thread for all that
/// time, so a few stores syncing at once stall every other task. A queue's work runs on a
/// thread of libdispatch's own (not the cooperative pool's), created when work arrives, so
/// an idle store holds no thread.
///
/// Serial: at most one sync of the store runs on it at a time, and group commit's turn
/// (`Store.syncTurn`) already makes the syncs one at a time; the queue only says where
/// they run.
package final class SyncQueue: Sendable {
    private let queue: DispatchQueue
    /// The thread running the queue's work (`currentThreadIdentity()`), 0 when none is: how
    /// a test tells the queue's thread from others.
    private let runningThread = Atomic<UInt>(0)

    /// A serial queue named `label` (shown by debuggers and profilers).
    package init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `work` on the queue and returns its result, suspending the calling task (never
    /// blocking its thread) until it is done. Cancellation does not interrupt the wait:
    /// `work` has started or will start, and its outcome is what the caller must report.
    package func run<Value: Sendable>(
        _ work: @escaping @Sendable () throws(StorageError) -> Value
    ) async throws(StorageError) -> Value {
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Value, StorageError>, Never>) in
            queue.async { [self] in
                runningThread.store(currentThreadIdentity(), ordering: .relaxed)
                let outcome: Result<Value, StorageError>
                do throws(StorageError) {
                    outcome = .success(try work())
                } catch {
                    outcome = .failure(error)
                }
                runningThread.store(0, ordering: .relaxed)
                continuation.resume(returning: outcome)
            }
        }
        return try outcome.get()
    }

    /// Whether the calling code runs on this queue (for tests and assertions).
    package var isCurrent: Bool {
        runningThread.load(ordering: .relaxed) == currentThreadIdentity()
    }
}
