import Dispatch
import Synchronization

/// A gate that one holder passes at a time, handed to the waiters in the order they came:
/// the writer slot of a persistence, group commit's sync turn, a datastore's preparation.
///
/// A task waits for it by suspending (``acquire()``, cancellable, or
/// ``acquireIgnoringCancellation()``), a synchronous caller by blocking its thread
/// (``acquireBlocking()``, ``acquireBlocking(deadline:)``), and anyone may take it only if
/// it is free (``tryAcquire()``). All of them wait in one first-come, first-served queue.
/// Taking a free gate and giving it back are two short critical sections of one lock, with
/// no suspension and no thread switch: the common case, a gate nobody contends for, costs
/// what a lock costs.
///
/// Why it is safe (each point is upheld where the comment beside the code says so):
///
/// - **One holder.** `held` is set by whoever takes a free gate, under the lock. A release
///   with waiters does not clear it: it removes the first waiter and hands the gate to it,
///   still held, so nobody can slip in between (no barging; ``tryAcquire()`` fails while
///   anyone waits, because the gate is held whenever anyone waits).
/// - **First come, first served.** Waiters join the back of `waiting` and a release takes
///   the front, both under the lock; a waiter leaves only by being granted or by its own
///   cancellation (or deadline), so the order of those that stay never changes.
/// - **No waiter is lost.** A waiter is in `waiting` from the moment it decides to wait
///   until one of two things removes it, each under the lock: a release (which then wakes
///   it, having handed it the gate) or its cancellation (which then wakes it with
///   `CancellationError`). Exactly one of them finds it there, so it is woken exactly once:
///   never twice (a double resume would trap), never not at all. A task cancelled before it
///   queued sees its cancellation under the same lock and does not queue (a task is marked
///   cancelled before its cancellation handler runs, and the handler, finding nothing to
///   remove, does nothing).
/// - **A cancelled waiter never holds the gate.** If its cancellation removed it, it was
///   not granted. If a release granted it first, it looks at its cancellation once it runs
///   again and, cancelled, hands the gate on (``release()``) before it throws. Either way
///   the gate is never left held by a task that gave up, and the waiters behind it move up.
/// - **A deadline is a cancellation by the clock**, for threads: a blocked waiter whose
///   deadline passes removes itself under the lock if it is still there, and returns false;
///   if a release removed it first, the wake-up is already on its way, and it takes the gate
///   (returns true).
///
/// The gate is not reentrant (a holder that waits for it again waits forever), and it does
/// not know who holds it: any caller may ``release()`` on the holder's behalf.
///
/// One caution for the blocking variants: a gate handed to a task is held until that task
/// runs again, on a thread of Swift's cooperative pool. A thread of that pool blocked on a
/// gate that tasks also wait for could, if every thread of the pool were blocked so,
/// keep that task from ever running. The engine's synchronous callers run on threads of
/// their own (the `folio` tool, tests, a caller's own queue), and `Persistence.close()`
/// waits with a deadline.
package final class AsyncGate: Sendable {
    /// How a waiter is woken when the gate is handed to it.
    private enum Wake {
        /// A task that may be cancelled: resumed normally when granted, with
        /// `CancellationError` when cancelled.
        case cancellableTask(CheckedContinuation<Void, any Error>)
        /// A task that waits until it is granted, whatever happens to it.
        case task(CheckedContinuation<Void, Never>)
        /// A thread blocked on its own semaphore, signalled once when granted.
        case thread(DispatchSemaphore)

        func grant() {
            switch self {
            case .cancellableTask(let continuation): continuation.resume()
            case .task(let continuation): continuation.resume()
            case .thread(let semaphore): semaphore.signal()
            }
        }
    }

    private struct Waiter {
        /// Names the waiter, so that a cancellation or a deadline removes its own entry.
        let ticket: UInt64
        let wake: Wake
    }

    private struct State {
        /// Whether someone holds the gate (or it has been handed to a waiter that has not
        /// run yet). Invariant: `waiting` is empty unless `held` is true.
        var held = false
        /// Oldest first.
        var waiting: [Waiter] = []
        var lastTicket: UInt64 = 0

        /// Takes the gate if it is free.
        mutating func takeIfFree() -> Bool {
            if held { return false }
            held = true
            return true
        }

        /// A ticket for a waiter about to queue.
        mutating func newTicket() -> UInt64 {
            lastTicket += 1
            return lastTicket
        }

        /// Removes the waiter holding `ticket`, if it is still queued (not granted).
        mutating func remove(_ ticket: UInt64) -> Wake? {
            guard let position = waiting.firstIndex(where: { $0.ticket == ticket }) else { return nil }
            return waiting.remove(at: position).wake
        }
    }

    private let state = Mutex(State())
    /// Runs on a blocked waiter's thread once its deadline passed, before it looks at the
    /// queue: where a test releases the gate, to make the deadline race a grant.
    private let deadlinePassed: (@Sendable () -> Void)?

    /// A free gate.
    package init() {
        deadlinePassed = nil
    }

    /// A free gate whose blocked waiters call `deadlinePassed` when their deadline passes,
    /// just before they leave the queue (for tests of that race).
    package init(deadlinePassed: @escaping @Sendable () -> Void) {
        self.deadlinePassed = deadlinePassed
    }

    /// Takes the gate if it is free, and returns whether it did. Never waits. Fails while
    /// anyone waits (the gate is then held, or already handed to the first of them).
    package func tryAcquire() -> Bool {
        state.withLock { $0.takeIfFree() }
    }

    /// Takes the gate: at once if it is free, otherwise after everyone already waiting,
    /// suspending the task (never a thread) meanwhile.
    ///
    /// If the task is cancelled while it waits, it leaves the queue and throws
    /// `CancellationError` without the gate, also when the gate reached it at the same
    /// moment (it is handed on). A free gate is taken without looking at cancellation, and
    /// a holder is never interrupted: what it does with the gate decides how it ends.
    package func acquire() async throws(CancellationError) {
        // The ticket is drawn with the first look, so that a cancellation handler that runs
        // before the waiter queued knows whom to look for, and finds nobody.
        let ticket = state.withLock { state -> UInt64? in state.takeIfFree() ? nil : state.newTicket() }
        guard let ticket else { return }
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let queued = state.withLock { state -> Bool? in
                        // Released since the first look: take it rather than wait for nobody.
                        if state.takeIfFree() { return nil }
                        // Cancelled before queueing: the handler has run, or is about to, and
                        // finds nothing to remove (a task is marked cancelled before its
                        // handlers run, and both look under this lock). Do not queue.
                        if Task.isCancelled { return false }
                        state.waiting.append(Waiter(ticket: ticket, wake: .cancellableTask(continuation)))
                        return true
                    }
                    switch queued {
                    case nil: continuation.resume()
                    case false?: continuation.resume(throwing: CancellationError())
                    case true?: break  // woken by a release, or by the handler below
                    }
                }
            } onCancel: {
                // Still queued: leave the queue, woken with the cancellation. Already granted
                // (a release removed it): nothing here; the check below hands the gate on.
                if case .cancellableTask(let continuation) = state.withLock({ $0.remove(ticket) }) {
                    continuation.resume(throwing: CancellationError())
                }
            }
        } catch {
            throw CancellationError()
        }
        // Granted while (or just before) being cancelled: hand the gate to the next waiter
        // rather than give it to a task that no longer wants it.
        if Task.isCancelled {
            release()
            throw CancellationError()
        }
    }

    /// Takes the gate: at once if it is free, otherwise after everyone already waiting,
    /// suspending the task meanwhile. Cancellation does not end the wait: for a caller that
    /// must have the gate to finish what it started (group commit's sync turn: a commit
    /// already appended is acknowledged only once a sync covered it).
    package func acquireIgnoringCancellation() async {
        if tryAcquire() { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let taken = state.withLock { state -> Bool in
                if state.takeIfFree() { return true }
                state.waiting.append(Waiter(ticket: state.newTicket(), wake: .task(continuation)))
                return false
            }
            if taken { continuation.resume() }
        }
    }

    /// Takes the gate, blocking the calling thread until it is handed over (after everyone
    /// already waiting). The thread sleeps on a semaphore of its own, signalled once by the
    /// release that hands it the gate: no spinning, no polling. For synchronous callers; see
    /// the caution in the type's comment.
    package func acquireBlocking() {
        _ = acquireBlocking(deadline: .distantFuture)
    }

    /// Takes the gate, blocking the calling thread until it is handed over or `deadline`
    /// passes; returns whether it took it. A waiter whose deadline passes leaves the queue
    /// (the waiters behind it move up); if the gate reached it at that same moment, it
    /// keeps it and returns true.
    package func acquireBlocking(deadline: DispatchTime) -> Bool {
        if tryAcquire() { return true }
        let semaphore = DispatchSemaphore(value: 0)
        let ticket = state.withLock { state -> UInt64? in
            if state.takeIfFree() { return nil }
            let ticket = state.newTicket()
            state.waiting.append(Waiter(ticket: ticket, wake: .thread(semaphore)))
            return ticket
        }
        guard let ticket else { return true }
        if semaphore.wait(timeout: deadline) == .success { return true }
        deadlinePassed?()
        // The deadline passed. Still queued: leave. Removed by a release: the gate is ours,
        // and the release's signal has come or is coming; take it.
        let left = state.withLock { $0.remove(ticket) != nil }
        if left { return false }
        semaphore.wait()
        return true
    }

    /// Gives the gate to the first waiter, or frees it if nobody waits. Called by the
    /// holder (or on its behalf) exactly once per acquisition.
    package func release() {
        let next = state.withLock { state -> Wake? in
            assert(state.held, "AsyncGate released while free")
            if state.waiting.isEmpty {
                state.held = false
                return nil
            }
            // Handed straight to the first waiter: `held` stays true, so nobody slips in
            // before it runs.
            return state.waiting.removeFirst().wake
        }
        next?.grant()
    }

    /// The callers waiting for the gate (for tests and diagnostics).
    package var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Whether the gate is held, or handed to a waiter that has not run yet (for tests and
    /// diagnostics).
    package var isHeld: Bool { state.withLock { $0.held } }
}
