import Dispatch
import Foundation
import Synchronization
import FolioTestSupport
import Testing

/// A cooperative pool of one thread: a serial dispatch queue as a task executor, which a
/// test can hold as a synchronous test holds a thread of the real pool.
final class OneThreadPool: TaskExecutor {
    let queue = DispatchQueue(label: "folio.test.one-thread-pool")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

/// A flag tasks and threads share.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// `eventually` and its hang guard, on a pool other jobs hold (Eventually.swift).
@Suite struct EventuallyTests {
    /// A waiter held off the pool past its bound, waiting for a task that needs several
    /// turns of the same pool, is not a hang: it keeps looking after the bound, and each of
    /// its looks comes after a turn of the task. (Calling it a hang at its first look past
    /// the bound failed whole-suite runs whose waits were queued behind minutes of other
    /// tests' jobs.)
    @Test func aWaiterHeldPastItsBoundStillSeesWorkThatNeedsThePool() async {
        let pool = OneThreadPool()
        let done = Flag()
        let held = await withTaskExecutorPreference(pool) { () async -> Bool in
            let worker = Task(executorPreference: pool) {
                for _ in 0..<5 { await Task.yield() }
                done.set()
            }
            // Another test's synchronous job holds the pool's thread well past the bound.
            pool.queue.async { Thread.sleep(forTimeInterval: 0.3) }
            let held = await eventually(within: .milliseconds(50)) { done.isSet }
            await worker.value
            return held
        }
        #expect(held, "the wait was called a hang while the work it waited for had no turn")
    }

    /// A condition that never holds is still a hang: the wait ends, false, once its bound
    /// and the looks after it have passed.
    @Test func aConditionThatNeverHoldsEndsTheWait() async {
        let looks = Mutex(0)
        let held = await eventually(within: .milliseconds(20)) {
            looks.withLock { $0 += 1 }
            return false
        }
        #expect(!held)
        #expect(looks.withLock { $0 } > HangGuard.lateLooks)
    }

    /// A watchdog whose bound passes while the pool is held does not act before the task
    /// it guards has had its turns: its looks queue behind them. (A watchdog that slept a
    /// fixed time opened a timeline's latches before its steps had run, failing CI.)
    @Test func aWatchdogHeldPastItsBoundActsOnlyAfterTheGuardedWorkHadItsTurns() async {
        let pool = OneThreadPool()
        let done = Flag()
        let doneWhenItActed = Mutex<Bool?>(nil)
        await withTaskExecutorPreference(pool) {
            let watchdog = hangWatchdog(after: .milliseconds(50), every: .milliseconds(1), on: pool) {
                doneWhenItActed.withLock { $0 = done.isSet }
            }
            // The watchdog's first job runs (its bound starts) before the pool is held.
            await Task.yield()
            let worker = Task(executorPreference: pool) {
                for _ in 0..<5 { await Task.yield() }
                done.set()
            }
            pool.queue.async { Thread.sleep(forTimeInterval: 0.3) }
            await worker.value
            await watchdog.value
        }
        #expect(doneWhenItActed.withLock { $0 } == true, "acted before the guarded work had a turn")
    }

    /// A watchdog acts once nothing cancels it, and never after it was cancelled.
    @Test func aWatchdogActsUnlessCancelled() async {
        let acted = Flag(), cancelledActed = Flag()
        let cancelled = hangWatchdog(after: .milliseconds(20), every: .milliseconds(1)) { cancelledActed.set() }
        cancelled.cancel()
        await hangWatchdog(after: .milliseconds(20), every: .milliseconds(1)) { acted.set() }.value
        await cancelled.value
        #expect(acted.isSet)
        #expect(!cancelledActed.isSet)
    }
}
