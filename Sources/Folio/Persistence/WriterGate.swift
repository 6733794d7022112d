import Synchronization
import FolioStorage

/// The persistence's single writer slot, first come first served: a write transaction
/// holds it from begin to commit.
///
/// A lock and a queue of waiting continuations rather than actor state, so that taking a
/// free slot and giving it back are plain calls: an update that finds the writer free
/// never suspends or changes threads for the slot. Each hop costs a thread wake-up (tens of
/// microseconds on a small machine), several times per `persist`, which was a third of a
/// single-record commit once a commit cost one fdatasync (Docs/Benchmarks.md, issue 12).
final class WriterGate: Sendable {
    private struct State {
        var busy = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    /// Takes the slot: at once if it is free, otherwise after the writers already waiting.
    func acquire() async {
        let free = state.withLock { state -> Bool in
            if state.busy { return false }
            state.busy = true
            return true
        }
        if free { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                // Released between the two locks: take it now rather than wait for nobody.
                if !state.busy {
                    state.busy = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    /// Gives the slot to the next writer in line, or frees it.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty {
                state.busy = false
                return nil
            }
            // Handed straight to the next in line: `busy` stays true.
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
