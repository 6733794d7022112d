import Dispatch
import Synchronization

/// Tells a running compaction to stop: checked between the pages it copies and while it
/// waits for the writer slot.
final class CompactionStop: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Whether the compaction was told to stop.
    var isStopped: Bool { flag.load(ordering: .acquiring) }

    func stop() { flag.store(true, ordering: .releasing) }
}

/// The store's turn to compact: one compaction at a time, automatic ones on a worker thread
/// of their own (never a thread of Swift's cooperative pool: a compaction reads and writes
/// for seconds), manual ones on the caller's thread. ``stopAndWait(wakingWaiter:)``, called
/// by `Store.close()`, stops the one running and returns once it has finished, its file
/// removed or switched to; no compaction starts after it. So close never returns while a
/// compaction still writes, as it never returns while a commit does (Docs/Durability.md
/// §1.2.1).
final class CompactionTurn: Sendable {
    private struct State {
        var running: CompactionStop?
        /// Set by close: nothing starts any more.
        var closing = false
        /// Threads waiting for the running compaction to finish.
        var waiters: [DispatchSemaphore] = []
    }

    private let state = Mutex(State())
    /// Called after each background pass of a compaction, with the pass's number (from 1),
    /// with no lock held and without the writer slot: where tests commit during a compaction.
    let passHook = Mutex<(@Sendable (Int) -> Void)?>(nil)

    /// Starts `body` on a worker thread, unless a compaction runs or the store is closing;
    /// returns whether it started.
    func startInBackground(_ body: @escaping @Sendable (CompactionStop) -> Void) -> Bool {
        let stop = CompactionStop()
        let started = state.withLock { state -> Bool in
            guard state.running == nil, !state.closing else { return false }
            state.running = stop
            return true
        }
        guard started else { return false }
        DispatchQueue.global(qos: .utility).async {
            body(stop)
            self.finish()
        }
        return true
    }

    /// Runs `body` on this thread once no other compaction runs (waiting for one that does);
    /// throws `StorageError.closed` once the store is closing.
    func runHere<Result>(
        path: String, _ body: (CompactionStop) throws(StorageError) -> Result
    ) throws(StorageError) -> Result {
        let stop = CompactionStop()
        while true {
            let waiter = DispatchSemaphore(value: 0)
            let taken = try state.withLock { (state) throws(StorageError) -> Bool in
                if state.closing { throw .closed(path: path) }
                if state.running == nil {
                    state.running = stop
                    return true
                }
                state.waiters.append(waiter)
                return false
            }
            if taken { break }
            waiter.wait()
        }
        defer { finish() }
        return try body(stop)
    }

    /// Whether close has begun stopping compactions.
    var isClosing: Bool { state.withLock { $0.closing } }

    /// Returns once no compaction runs (one may start afterwards).
    func waitUntilIdle() {
        let waiter = DispatchSemaphore(value: 0)
        let idle = state.withLock { state -> Bool in
            if state.running == nil { return true }
            state.waiters.append(waiter)
            return false
        }
        if !idle { waiter.wait() }
    }

    /// Stops the running compaction, calls `wakingWaiter` (which wakes it if it waits for
    /// the writer slot), and returns once it has finished. Nothing starts afterwards.
    func stopAndWait(wakingWaiter: () -> Void) {
        let running = state.withLock { state -> CompactionStop? in
            state.closing = true
            return state.running
        }
        guard let running else { return }
        running.stop()
        wakingWaiter()
        waitUntilIdle()
    }

    private func finish() {
        let waiters = state.withLock { state -> [DispatchSemaphore] in
            state.running = nil
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.signal() }
    }
}
