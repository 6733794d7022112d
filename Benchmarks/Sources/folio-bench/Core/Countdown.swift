import Synchronization

/// An async countdown: tasks ``arrive()`` (or ``fail(_:)``), and ``wait()`` suspends until
/// `count` arrivals or the first failure. No thread blocks: the waiter is a continuation.
final class Countdown: Sendable {
    private struct State {
        var remaining: Int
        var failure: (any Error)?
        var waiter: CheckedContinuation<Void, any Error>?
    }
    private let state: Mutex<State>

    init(_ count: Int) {
        state = Mutex(State(remaining: count))
    }

    /// One arrival; the last one resumes the waiter.
    func arrive() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// A failure: the waiter (now or later) throws `error` (the first one reported).
    func fail(_ error: any Error) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if state.failure == nil { state.failure = error }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(throwing: error)
    }

    /// Suspends until every arrival, or throws the first failure. One waiter at a time.
    func wait() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> Result<Void, any Error>? in
                if let failure = state.failure { return .failure(failure) }
                if state.remaining <= 0 { return .success(()) }
                state.waiter = continuation
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }
}
