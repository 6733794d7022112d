// How a writer waits for its turn while another process holds the store's lock: the
// pauses between tries, the request it makes once it has waited long (TurnRequest), and the
// tries it skips while another process commits (PoliteWait). One wait, whether the caller
// blocks its thread (`Store.beginWrite()`) or suspends its task (Folio's transactions).

/// One caller's wait for a turn (Store+WriterTurns.swift): asks, after a failed try, how long
/// to pause, and after the pause whether to pause again instead of trying. The caller sleeps
/// as it can (blocking or suspending) and calls ``end()`` once it stops waiting, whether it
/// got the turn or not.
struct TurnWait {
    private let store: Store
    private var wait: LockWait
    private var polite: PoliteWait
    /// Counted in the writer's `turnsAwaited` (its watch paused meanwhile).
    private var awaiting = false
    /// Counted in the store's asking waiters: it has waited ``TurnRequest/askAfter``.
    private var asking = false
    /// The request deadline this wait stored last (0: none).
    private var stored: UInt64 = 0
    /// The last pause followed a yield (``Store/enterTurn(_:yielded:)``), not a failed try.
    private var yielded = false

    init(store: Store) {
        self.store = store
        wait = LockWait(timeout: store.options.busyTimeout)
        polite = PoliteWait(newestGeneration: store.rootGlance.map { glance in { glance.newestGeneration() } })
    }

    /// The pause after a try that did not get the turn: ``TurnRequest/yieldPause`` if it
    /// yielded to another process's request (not counted against the timeout: a yield must
    /// never make a write fail that the lock alone would have let through), the next pause
    /// of the wait otherwise. Throws `StorageError.lockedByAnotherWriter(path:)` once the
    /// busy timeout has passed.
    mutating func pause(afterYielding yielded: Bool) throws(StorageError) -> Duration {
        self.yielded = yielded
        if yielded { return TurnRequest.yieldPause }
        if !awaiting {
            awaiting = true
            store.noteTurnAwaited(true)
        }
        let pause = try nextPause()
        polite.noteFailedTry()
        return pause
    }

    /// After a pause: another pause instead of a try if another process committed during
    /// it and this waiter is not the one whose request the holder yields to (PoliteWait),
    /// nil to try now. Throws as ``pause(afterYielding:)`` does.
    mutating func pauseAgain() throws(StorageError) -> Duration? {
        if yielded { return nil }
        let front = asking && stored != 0 && store.turnRequest?.liveRequest() == stored
        guard polite.skipsTry(front: front) else { return nil }
        return try nextPause()
    }

    /// Ends the wait: withdraws its request once no other waiter of this process asks
    /// (another process's request, cleared with it, is renewed at its next try), and stops
    /// counting as a waiter (a wait that gave up adopted nothing: the watch reports what it
    /// may have missed).
    func end() {
        if asking, store.askingWaiters.subtract(1, ordering: .relaxed).newValue == 0 {
            store.turnRequest?.withdraw()
        }
        if awaiting { store.noteTurnAwaited(false) }
    }

    /// The pause before the next try, or `lockedByAnotherWriter` once the timeout has passed.
    /// A waiter that has waited ``TurnRequest/askAfter`` asks for the lock: it renews its
    /// request before each pause and pauses at most ``TurnRequest/askingPause``, unless
    /// another waiter's request is live, which it leaves be (pausing as usual).
    private mutating func nextPause() throws(StorageError) -> Duration {
        guard let pause = wait.nextPause() else { throw .lockedByAnotherWriter(path: store.layout.lock) }
        guard let turnRequest = store.turnRequest, wait.waited >= TurnRequest.askAfter else { return pause }
        if !asking {
            asking = true
            store.askingWaiters.add(1, ordering: .relaxed)
        }
        let now = TurnRequest.now()
        if let live = turnRequest.liveRequest(now: now), live != stored { return pause }
        stored = turnRequest.ask(at: now)
        return min(pause, TurnRequest.askingPause)
    }
}

/// Whether a waiter tries the lock after a pause: a waiter that sees that another process
/// committed during its pause (the root slots name a newer generation) skips the try, up to
/// ``mostSkips`` times in a row, unless it is the waiter at the front (the one whose request
/// the holder yields to, ``TurnRequest``).
///
/// Why: a process committing in a loop frees the lock for some microseconds between its
/// turns, and a waiter's try that lands there takes the lock. Such a hand-off comes before
/// its time (the holder's streak, ``TurnRequest/askAfter``, is what passes the lock between
/// busy processes) and costs both: the taker catches up on the holder's commits, and the
/// holder waits out the taker's turn and catches up in its turn. With several waiters trying
/// every few milliseconds, these hand-offs were most of the hand-offs between busy
/// processes. A commit during the pause says the holder is in such a streak, and that the
/// try would mostly fail or land in a gap. Skipping never makes a write fail that the lock
/// would let through: the waiter still asks when its turn to ask comes, the holder yields to
/// the asker, and a waiter tries at least every ``mostSkips`` + 1 pauses (a holder that does
/// not yield, whose busy timeout is short, still leaves gaps a try can land in).
struct PoliteWait {
    /// The most tries skipped in a row.
    static let mostSkips = 7

    /// The newest generation the root slots name now (``RootGlance``); nil where the root
    /// file cannot be mapped, and then every try is made.
    let newestGeneration: (() -> UInt64)?
    /// The newest generation the slots named at the last look.
    private var seen: UInt64?
    private var skipped = 0

    init(newestGeneration: (() -> UInt64)?) {
        self.newestGeneration = newestGeneration
    }

    /// Records a failed try: what the slots name now is what the next look compares with.
    mutating func noteFailedTry() {
        seen = newestGeneration?()
    }

    /// Whether to skip the try after a pause (then pause again); `front` says whether this
    /// waiter's request is the live one.
    mutating func skipsTry(front: Bool) -> Bool {
        guard let newestGeneration, let seen, !front, skipped < Self.mostSkips else {
            skipped = 0
            return false
        }
        let newest = newestGeneration()
        self.seen = newest
        guard newest != seen else {
            skipped = 0
            return false
        }
        skipped += 1
        return true
    }
}
