import Synchronization

/// Whether a writer's watch is paused: while this writer holds its turn or waits for one
/// (`Store.WriterState.holdsLock`, `turnsAwaited`), commits of other processes need no
/// following (none lands during the turn, and the awaited turn's catch-up adopts them all at
/// once), and its own slot writes need no look at all. Pausing spares every writer process
/// a wake-up per commit of each other one.
///
/// Lock order: taken under the store's `state`, and takes nothing of the store's itself.
final class WatchPause: Sendable {
    private struct State {
        var watch: (any PausableWatch)?
        var paused = false
    }
    private let state = Mutex(State())

    /// The watch to pause, once following starts: paused at once if the writer's state
    /// says so.
    func install(_ watch: any FileWatch) {
        state.withLock { state in
            state.watch = watch as? any PausableWatch
            if state.paused { state.watch?.pause() }
        }
    }

    /// Forgets the watch, before it is cancelled (a cancelled watch takes no more pauses).
    func remove() {
        state.withLock { $0.watch = nil }
    }

    /// Whether the watch is (or, once installed, will be) paused.
    var isPaused: Bool { state.withLock { $0.paused } }

    /// Drops what the watch has queued and not delivered: called at the end of a turn, before
    /// the lock is let go, when everything queued is accounted for (see
    /// `Store.releaseLockIfIdle`).
    func discardPending() {
        state.withLock { $0.watch?.discardPending() }
    }

    /// Pauses or resumes the watch, if that changes anything. `caughtUp` (for a resume):
    /// whether the caller accounted for every commit made while the watch was paused, as a
    /// turn's catch-up does; if not, the watch reports a change once on resuming (a paused
    /// watch may have dropped the notifications).
    func set(_ paused: Bool, caughtUp: Bool) {
        state.withLock { state in
            guard state.paused != paused else { return }
            state.paused = paused
            if paused {
                state.watch?.pause()
            } else {
                state.watch?.resume(reportingMissed: !caughtUp)
            }
        }
    }
}
