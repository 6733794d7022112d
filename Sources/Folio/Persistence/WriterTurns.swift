import Dispatch
import FolioStorage
import Synchronization

/// A persistence's writers' turns: write transactions run at once, each in a *shared*
/// turn; what must run alone (a transaction's retry after a conflict, compaction, commits of
/// the key-value store's queued values, close) takes the *exclusive* turn, which waits
/// until no shared turn is held and keeps new ones waiting meanwhile.
///
/// Built on one first-come, first-served ``AsyncGate``: a shared turn passes through it
/// (takes it, counts itself, gives it back at once), an exclusive turn keeps it and then
/// waits for the shared turns already counted to end. So turns are granted in the order
/// they were asked for: a shared turn asked for after an exclusive one waits for it, and an
/// exclusive turn is never starved by a stream of shared ones.
///
/// Why it is safe: the count changes under one lock; only the holder of the gate waits for
/// the count to reach zero (so one waiter slot is enough), and it registers under the same
/// lock that the last shared release reads, so the wake-up is never lost. Cancellation ends
/// only the wait for the gate (as ``AsyncGate/acquire()`` does); the wait for running
/// transactions to end is not cancellable, as a transaction is never interrupted.
package final class WriterTurns: Sendable {
    private enum Wake {
        case task(CheckedContinuation<Void, Never>)
        case thread(DispatchSemaphore)

        func wake() {
            switch self {
            case .task(let continuation): continuation.resume()
            case .thread(let semaphore): semaphore.signal()
            }
        }
    }

    private struct State {
        /// Shared turns held.
        var shared = 0
        /// The exclusive turn's holder, waiting for `shared` to reach zero.
        var drained: Wake?
    }

    private let gate = AsyncGate()
    private let state = Mutex(State())

    package init() {}

    /// Takes a shared turn: once every exclusive turn asked for before it has ended.
    /// Throws `CancellationError` if the task is cancelled while it waits.
    package func acquireShared() async throws(CancellationError) {
        try await gate.acquire()
        state.withLock { $0.shared += 1 }
        gate.release()
    }

    /// Ends a shared turn.
    package func releaseShared() {
        let wake = state.withLock { state -> Wake? in
            state.shared -= 1
            guard state.shared == 0, let drained = state.drained else { return nil }
            state.drained = nil
            return drained
        }
        wake?.wake()
    }

    /// Takes the exclusive turn: after every turn asked for before it, once no shared turn
    /// is held. Throws `CancellationError` if the task is cancelled while it waits for its
    /// place in the queue.
    package func acquire() async throws(CancellationError) {
        try await gate.acquire()
        await waitForSharedTurnsToEnd()
    }

    /// Takes the exclusive turn if `needed()` still says so once its place in the queue is
    /// reached (every turn asked for before it has ended); otherwise gives the place up at
    /// once and returns false, without waiting for the shared turns held. For work that may
    /// have been done meanwhile by whoever was ahead in the queue: the exclusive turn holds
    /// every new shared turn back until the held ones end, so taking it for nothing stalls
    /// writers (and a transaction that waits for another to begin, never).
    package func acquire(ifStill needed: () -> Bool) async throws(CancellationError) -> Bool {
        try await gate.acquire()
        guard needed() else {
            gate.release()
            return false
        }
        await waitForSharedTurnsToEnd()
        return true
    }

    /// The exclusive turn's holder waits here until no shared turn is held.
    private func waitForSharedTurnsToEnd() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let drained = state.withLock { state -> Bool in
                if state.shared == 0 { return true }
                state.drained = .task(continuation)
                return false
            }
            if drained { continuation.resume() }
        }
    }

    /// Takes the exclusive turn, blocking the thread, by `deadline`; returns whether it did.
    /// For synchronous callers (close); see ``AsyncGate``'s caution about blocking.
    package func acquireBlocking(deadline: DispatchTime) -> Bool {
        guard gate.acquireBlocking(deadline: deadline) else { return false }
        let semaphore = DispatchSemaphore(value: 0)
        let waits = state.withLock { state -> Bool in
            if state.shared == 0 { return false }
            state.drained = .thread(semaphore)
            return true
        }
        guard waits, semaphore.wait(timeout: deadline) == .timedOut else { return true }
        // The deadline passed: leave, unless the last shared turn just ended and is waking us.
        let left = state.withLock { state -> Bool in
            guard state.drained != nil else { return false }
            state.drained = nil
            return true
        }
        if left {
            gate.release()
            return false
        }
        semaphore.wait()
        return true
    }

    /// Ends the exclusive turn.
    package func release() {
        gate.release()
    }

    /// Callers waiting for a turn (for tests and diagnostics).
    package var waitingCount: Int { gate.waitingCount }

    /// Whether the exclusive turn is held (or being handed over), for tests and diagnostics.
    package var isHeld: Bool { gate.isHeld }

    /// Shared turns held now (for tests).
    package var sharedCount: Int { state.withLock { $0.shared } }
}
