import Dispatch

// Writers in several processes take turns (Docs/Durability.md §1.6). A writer holds the
// store's lock only during a turn: from the moment something of this process needs to write
// (its first active write transaction, or a compaction) until nothing does (no transaction
// active, no compaction, and every commit durable and named in a root slot). At the start of
// each turn it catches up on the commits other processes made while it held no lock
// (Store+CatchUp.swift). Idle, it holds no lock, so any other process may write, and a
// suspended process holds nothing another needs.
//
// Why a turn never writes on a stale tip: the tip moves only in this process's own commits
// (which need the turn), in the catch-up, which runs holding the lock in exclusive mode
// before the first transaction of the turn takes the tip, and in the following between
// turns (Store+Refresh.swift), in exclusive mode too and only while no turn is held. Another process commits only
// while it holds the lock, so between the catch-up and the end of the turn nothing but this
// process writes the store.
//
// Why a release never leaves a write unprotected: it happens under `state`, when no
// transaction is active (a commit's append and a spill happen inside one), no compaction
// holds the turn, nothing is exclusive (a catch-up or an acquisition), nothing waits to be
// synced or named in a slot (`ahead`, `pendingNotifications`), and no flush is between
// taking the pending commits and its slot write (`flushesInFlight`: in grouped mode the
// pending list is empty while the flush syncs): the flush releases the lock after its slot
// write. Only a poisoned store releases with commits pending, since it writes nothing more.
//
// Why one process's tries never race its release: a try happens in exclusive mode, which a
// release waits out (it needs `exclusive == false`), and the release's `flock` call runs
// under `state`, which the try's start takes; so a release is never interleaved with a try
// of the same open file description, which would leave the lock released while this
// process believed it held.

extension Store {
    /// What needs a turn: a write transaction, or a compaction (briefly before its copy, to
    /// catch up, and for its catch-up, root switch and removal of retired files; not while
    /// it copies, which the compaction lock alone protects: CompactionLock.swift).
    enum TurnUser {
        case transaction
        case compaction
    }

    /// What ``enterTurn(_:)`` found under `state`.
    private enum TurnEntry {
        /// In the turn: the tip to build on.
        case entered(CommittedRoot)
        /// A compaction's catch-up or another thread's acquisition uses the store alone:
        /// wait on the semaphore (bounded work, signalled when it ends), then try again.
        case wait(DispatchSemaphore)
        /// No turn is held: this caller has exclusive use and tries the lock.
        case acquire
    }

    /// One attempt to enter this writer's turn for `user`: returns the tip to build on, or
    /// nil if another process holds the store's lock (the caller pauses and tries again,
    /// up to its timeout). If no turn is held, this takes the lock and catches up on the
    /// commits other processes made since this writer last held it; a catch-up that fails
    /// poisons the store and throws.
    func enterTurn(_ user: TurnUser) throws(StorageError) -> CommittedRoot? {
        var yielded = false
        return try enterTurn(user, yielded: &yielded)
    }

    /// ``enterTurn(_:)``; `yielded` is set when it returned nil because it gave the try up to
    /// another process's request (``TurnRequest``), the lock being free: a caller that waits
    /// tries again after ``TurnRequest/yieldPause`` whatever its timeout, since a yield
    /// must never make a write fail that the lock alone would have let through.
    func enterTurn(_ user: TurnUser, yielded: inout Bool) throws(StorageError) -> CommittedRoot? {
        guard let writerLock else { throw .readOnly(path: path) }
        while true {
            let entry = try state.withLock { (state) throws(StorageError) -> TurnEntry in
                if state.closed { throw .closed(path: path) }
                guard var writer = state.writer else { throw .readOnly(path: path) }
                if let cause = writer.poisoned { throw .needsReopen(path: path, cause: cause) }
                defer { state.writer = writer }
                if let waiter = waitForExclusive(&writer) { return .wait(waiter) }
                if writer.holdsLock {
                    count(in: &writer, user)
                    return .entered(state.tip)
                }
                // Invariant: no lock means no active transaction, no compaction and nothing
                // pending (releaseLockIfIdle), so the catch-up may move the tip.
                writer.exclusive = true
                return .acquire
            }
            switch entry {
            case .entered(let tip): return tip
            case .wait(let semaphore):
                semaphore.wait()
                continue
            case .acquire: break
            }
            // Events the catch-up queued are delivered only once exclusive use has ended: an
            // observer may begin a write, which would otherwise wait for this very thread.
            defer { deliverQueued() }
            let locked: Bool
            do throws(StorageError) {
                // Another process asks for the lock, no waiter of this one does, this one has
                // had it for a while, and its callers wait long enough to get it back: this try
                // fails, so that the asker's next one finds the lock free (TurnRequest).
                if let turnRequest, options.busyTimeout >= TurnRequest.shortestYieldingTimeout,
                    turnRequest.yields(asking: askingWaiters.load(ordering: .relaxed) > 0)
                {
                    yieldedTries.add(1, ordering: .relaxed)
                    yielded = true
                    locked = false
                } else {
                    locked = try writerLock.tryAcquire()
                    if locked { turnRequest?.noteAcquired() }
                }
                if locked {
                    _ = try writeSection.withLock { _ throws(StorageError) in try catchUpHoldingWriteSection() }
                }
            } catch {
                writerLock.release()
                endExclusive()
                // A close that ran meanwhile closed the lock file under the try.
                if state.withLock({ $0.closed }) { throw .closed(path: path) }
                throw error
            }
            guard locked else {
                endExclusive()
                return nil
            }
            let tip = state.withLock { state -> CommittedRoot in
                state.writer?.holdsLock = true
                if state.writer != nil {
                    count(in: &state.writer!, user)
                    pauseWatchIfTurnHeldOrAwaited(state.writer!, caughtUp: true)
                }
                return state.tip
            }
            endExclusive()
            return tip
        }
    }

    /// ``enterTurn(_:)`` until it succeeds: pauses (blocking the thread) while another
    /// process holds the lock, up to the options' `busyTimeout`, then throws
    /// `StorageError.lockedByAnotherWriter(path:)`; gives up with `StorageError.closed(path:)`
    /// as soon as `stop` is set (a compaction, which close waits for).
    func enterTurnWaiting(_ user: TurnUser, stop: CompactionStop? = nil) throws(StorageError) -> CommittedRoot {
        var wait = TurnWait(store: self)
        defer { wait.end() }
        while true {
            if stop?.isStopped == true { throw .closed(path: path) }
            var yielded = false
            if let tip = try enterTurn(user, yielded: &yielded) { return tip }
            var pause = try wait.pause(afterYielding: yielded)
            LockWait.sleep(pause)
            while let next = try wait.pauseAgain() {
                pause = next
                LockWait.sleep(pause)
            }
        }
    }

    /// Counts a caller that starts (`true`) or stops (`false`) waiting for another process's
    /// turn to end (`WriterState.turnsAwaited`).
    func noteTurnAwaited(_ waiting: Bool) {
        state.withLock { state in
            guard var writer = state.writer else { return }
            writer.turnsAwaited += waiting ? 1 : -1
            // A wait that gave up adopted nothing: the watch reports what it may have missed.
            pauseWatchIfTurnHeldOrAwaited(writer, caughtUp: false)
            state.writer = writer
        }
    }

    /// Pauses the watch while `writer` holds its turn or waits for one (``WatchPause``),
    /// resumes it otherwise. Caller holds `state`, `writer` as it will leave it; `caughtUp`
    /// as ``WatchPause/set(_:caughtUp:)`` takes it.
    ///
    /// A resume at the end of a turn must come before the lock is released: a paused watch
    /// may not queue the notifications of a commit another process makes once it can.
    func pauseWatchIfTurnHeldOrAwaited(_ writer: WriterState, caughtUp: Bool) {
        watchPause.set(writer.holdsLock || writer.turnsAwaited > 0, caughtUp: caughtUp)
    }

    /// Ends a compaction's part of the turn; releases the lock if nothing else needs it.
    func leaveCompactionTurn() {
        state.withLock { state in
            guard var writer = state.writer else { return }
            writer.compactionHoldsLock = false
            releaseLockIfIdle(&writer)
            state.writer = writer
        }
    }

    private func count(in writer: inout WriterState, _ user: TurnUser) {
        switch user {
        case .transaction: writer.activeTransactions += 1
        case .compaction: writer.compactionHoldsLock = true
        }
    }

    /// Releases the store's lock if this writer holds it and nothing needs it any more (see
    /// the top of this file). Caller holds `state` (and passes its writer).
    func releaseLockIfIdle(_ writer: inout WriterState) {
        guard writer.holdsLock, writer.activeTransactions == 0, !writer.compactionHoldsLock, !writer.exclusive,
            writer.flushesInFlight == 0
        else { return }
        guard writer.poisoned != nil || (writer.ahead == nil && writer.pendingNotifications.isEmpty) else { return }
        // The watch resumes while the lock is still held (see pauseWatchIfTurnHeldOrAwaited).
        // Then what it queued is dropped: commits of others from before the turn, which its
        // catch-up adopted, or this writer's own writes (a paused inotify watch queues none).
        // Dropped before the release, since afterwards another process may commit, and its
        // notification must be kept. Spares a look (and a wake-up) per turn.
        writer.holdsLock = false
        pauseWatchIfTurnHeldOrAwaited(writer, caughtUp: true)
        watchPause.discardPending()
        // The slots hold only what this writer adopted or wrote until the release.
        rootGlance?.noteSeenNow()
        writerLock?.release()
        turnRequest?.noteReleased()
    }

    /// Releases the lock if nothing needs it: after a flush made the last pending commits
    /// durable.
    func releaseLockIfIdle() {
        state.withLock { state in
            guard var writer = state.writer else { return }
            releaseLockIfIdle(&writer)
            state.writer = writer
        }
    }

    /// Whether this writer's watch is paused now (its turn held or awaited): for tests.
    package var isWatchPaused: Bool { watchPause.isPaused }

    /// Whether this writer holds the store's lock now: for tests.
    package var holdsWriterLock: Bool {
        state.withLock { $0.writer?.holdsLock == true }
    }

    /// Failed tries of the store's lock so far (another process held it): for tests of a
    /// writer that waits.
    package var failedLockTries: Int { writerLock?.failedTryCount ?? 0 }

    /// Tries of the store's lock this writer gave up to another process's request
    /// (``TurnRequest``): for tests.
    package var yieldedLockTries: Int { yieldedTries.load(ordering: .relaxed) }
}
