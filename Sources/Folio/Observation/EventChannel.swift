import Synchronization
import FolioStorage

/// A single-consumer queue between the observation hub and one observer's iterator, with
/// a bounded buffer. Its policy when the consumer is slow is fixed at creation:
///
/// - `.signalOverflow(limit)`: at most `limit` elements wait; when one more arrives, the
///   waiting ones are dropped and the consumer's next element is an overflow marker (the
///   observer turns it into a "reload" event). Memory stays bounded and nothing is lost
///   silently.
/// - `.restartFromNewest(limit)`: at most `limit` elements wait; when one more arrives, the
///   waiting ones are dropped and the new one is kept (one instance's values: the consumer
///   skips values it was too slow for, but never sees an older value after a newer one).
/// - `.keepLatest`: only the newest element waits (a live query's result set: an older
///   one has no value once a newer exists).
final class EventChannel<Element: Sendable>: Sendable {
    enum Policy: Sendable {
        case signalOverflow(limit: Int)
        case restartFromNewest(limit: Int)
        case keepLatest
    }

    enum Pulled: Sendable {
        case element(Element)
        case overflow
        case finished
    }

    private struct State {
        var buffer: [Element] = []
        var head = 0
        var overflowed = false
        var finished = false
        var waiter: CheckedContinuation<Pulled, Never>?
        var count: Int { buffer.count - head }
    }

    private let state = Mutex(State())
    let policy: Policy

    init(policy: Policy) {
        self.policy = policy
    }

    func push(_ element: Element) {
        let waiter = state.withLock { state -> CheckedContinuation<Pulled, Never>? in
            if state.finished { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            switch policy {
            case .keepLatest:
                state.buffer = [element]
                state.head = 0
            case .signalOverflow(let limit):
                if state.count >= limit {
                    state.buffer = []
                    state.head = 0
                    state.overflowed = true
                } else {
                    state.buffer.append(element)
                }
            case .restartFromNewest(let limit):
                // Invariant: what waits is always a run of consecutive elements ending with
                // the newest, so the consumer never goes back in time.
                if state.count >= limit {
                    state.buffer = [element]
                    state.head = 0
                } else {
                    state.buffer.append(element)
                }
            }
            return nil
        }
        waiter?.resume(returning: .element(element))
    }

    /// Ends the sequence after the elements already queued.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Pulled, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.count == 0 && !state.overflowed ? state.waiter : nil
        }
        waiter?.resume(returning: .finished)
    }

    func pull() async -> Pulled {
        if let ready = state.withLock({ state in Self.take(&state) }) { return ready }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Pulled? in
                    if let ready = Self.take(&state) { return ready }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish()
        }
    }

    private static func take(_ state: inout State) -> Pulled? {
        if state.overflowed {
            state.overflowed = false
            return .overflow
        }
        if state.count > 0 {
            let element = state.buffer[state.head]
            state.head += 1
            if state.head > 64 && state.head * 2 > state.buffer.count {
                state.buffer.removeFirst(state.head)
                state.head = 0
            }
            return .element(element)
        }
        return state.finished ? .finished : nil
    }
}
