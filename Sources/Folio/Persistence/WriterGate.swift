import Synchronization
import FolioStorage

/// The persistence's single writer slot, first come first served: a write transaction
/// holds it from begin to commit.
///
/// A lock and a queue of waiting continuations rather than actor state, so that taking a
/// free slot and giving it back are plain calls: an update that finds the writer free
/// never suspends or changes threads for the slot. Each hop costs a thread wake-up (tens of
/// microseconds on a small machine), several times per `persist`, which was a third of a
/// single-record commit once a commit cost one fdatasync (Docs/Benchmarks.md).
///
/// A waiting writer whose task is cancelled leaves the queue and throws `CancellationError`;
/// the writers behind it move up. A free slot is taken without looking at cancellation, and
/// a holder is never interrupted: what it does with the slot decides how it ends.
final class WriterGate: Sendable {
    private struct Waiter {
        let ticket: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var busy = false
        var waiting: [Waiter] = []
        /// Numbers the waiters, so that a cancellation removes its own.
        var nextTicket: UInt64 = 0
    }
    private let state = Mutex(State())

    /// Takes the slot: at once if it is free, otherwise after the writers already waiting.
    /// Throws `CancellationError`, without the slot, if the task is cancelled while waiting
    /// (also if the slot was handed to it as the cancellation came: it is handed on).
    func acquire() async throws(CancellationError) {
        let ticket = state.withLock { state -> UInt64? in
            if !state.busy {
                state.busy = true
                return nil
            }
            state.nextTicket += 1
            return state.nextTicket
        }
        guard let ticket else { return }
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let outcome = state.withLock { state -> Bool? in
                        // Released between the two locks: take it now rather than wait for nobody.
                        if !state.busy {
                            state.busy = true
                            return true
                        }
                        // Cancelled before queueing: the handler already ran and found nothing
                        // to remove (a task is marked cancelled before its handlers run).
                        if Task.isCancelled { return false }
                        state.waiting.append(Waiter(ticket: ticket, continuation: continuation))
                        return nil
                    }
                    switch outcome {
                    case true?: continuation.resume()
                    case false?: continuation.resume(throwing: CancellationError())
                    case nil: break
                    }
                }
            } onCancel: {
                // Still queued: leave the queue. Already granted (removed by `release`):
                // nothing to do here; the check below hands the slot on.
                let removed = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                    guard let position = state.waiting.firstIndex(where: { $0.ticket == ticket }) else { return nil }
                    return state.waiting.remove(at: position).continuation
                }
                removed?.resume(throwing: CancellationError())
            }
        } catch {
            throw CancellationError()
        }
        // Granted while (or just before) being cancelled: give the slot to the next writer
        // rather than start a transaction for a task that no longer wants it.
        if Task.isCancelled {
            release()
            throw CancellationError()
        }
    }

    /// Takes the slot if it is free and nobody waits; returns whether it did.
    func tryAcquire() -> Bool {
        state.withLock { state in
            if state.busy { return false }
            state.busy = true
            return true
        }
    }

    /// Gives the slot to the next writer in line, or frees it.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if state.waiting.isEmpty {
                state.busy = false
                return nil
            }
            // Handed straight to the next in line: `busy` stays true.
            return state.waiting.removeFirst().continuation
        }
        next?.resume()
    }

    /// The writers waiting for the slot (for tests and diagnostics).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Whether a writer holds the slot (for tests and diagnostics).
    var isHeld: Bool { state.withLock { $0.busy } }
}
