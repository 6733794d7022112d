// Group commit (Docs/Durability.md §1.4): steps 2-5 of a commit appended in full
// durability. One implementation for blocking and async callers, which differ only in how
// they wait for their turn to sync (`syncTurn`): a blocked thread or a suspended task.
extension Store {
    /// Steps 2-5 of a commit appended in full durability (a no-op in grouped mode, whose
    /// commits are made durable by ``flush()``): returns once the commit of `generation` is
    /// durable and published, its event queued for ``deliverQueued()``. Blocks the calling
    /// thread while it waits for its turn.
    ///
    /// Group commit, with `syncTurn` as the queue: the first waiter takes the turn and
    /// syncs everything appended so far; those that arrive meanwhile wait for the turn, first
    /// come first served, and once they hold it either find their commit published by that
    /// sync (and return at once, without a sync of their own) or sync, at once, every commit
    /// appended while the previous sync ran. Called without `writeSection`, so the writer
    /// appends the next transaction while a sync is in flight. A sync that fails poisons the
    /// store, so every commit waiting behind it that it did not publish fails too, with
    /// `StorageError.needsReopen(path:cause:)`: none of them was acknowledged.
    func waitUntilDurable(_ generation: UInt64) throws(StorageError) {
        guard case .full = options.durability else { return }
        if !isPublished(generation) {
            syncTurn.acquireBlocking()
            try syncInTurn(toPublish: generation)
        }
        CrashPoint.commitBeforeAcknowledge.reach()
    }

    /// ``waitUntilDurable(_:)`` for async callers: the same group commit, but a caller
    /// that finds a sync in flight suspends until its turn instead of blocking its thread,
    /// and a sync that other commits could be waiting on runs on the store's own queue
    /// (`syncQueue`) while its caller stays suspended, resumed by a continuation once the
    /// sync and the slot write are done. On a small thread pool that is what lets other
    /// tasks run, and other writers append (and so share the next sync), while the disk
    /// syncs: a thread of the pool blocked in `fdatasync` is one of two or four
    /// (Docs/Durability.md §1.4, "Where the sync runs"). Cancellation does not end the wait:
    /// the commit is appended, and is acknowledged only once a sync covered it.
    func waitUntilDurable(_ generation: UInt64) async throws(StorageError) {
        guard case .full = options.durability else { return }
        if !isPublished(generation) {
            let tookFreeTurn = syncTurn.tryAcquire()
            if tookFreeTurn, !hasTransactionInFlight {
                // An idle store: no sync in flight, nobody queued for one, no transaction that
                // could append meanwhile. The sync runs on this thread, saving the two thread
                // switches of the hop (Durability.md §1.4 gives the figures).
                try syncInTurn(toPublish: generation)
            } else {
                if !tookFreeTurn { await syncTurn.acquireIgnoringCancellation() }
                // The turn is held across the hop and given back on the queue (`syncInTurn`),
                // so group commit's order is the turn's, whichever thread runs the sync.
                try await syncQueue.run { () throws(StorageError) in try self.syncInTurn(toPublish: generation) }
            }
        }
        CrashPoint.commitBeforeAcknowledge.reach()
    }

    /// The turn of a caller holding `syncTurn`, which this gives back: one group-commit sync
    /// of everything appended so far (`flushQueuingEvents`), unless a sync published the
    /// commit of `generation` while the caller waited (for its turn, or for `rootFileLock`
    /// behind a grouped flush, a compaction or close).
    ///
    /// Invariant: a commit that is published is durable and delivered, so no error is
    /// reported for it: a later sync's failure (of commits appended after it) or a close
    /// that ran meanwhile is not its caller's error. Reporting it would tell the caller
    /// that a durable commit failed, and a caller that retried after reopening would apply
    /// it twice.
    private func syncInTurn(toPublish generation: UInt64) throws(StorageError) {
        defer { syncTurn.release() }
        do throws(StorageError) {
            try flushQueuingEvents(unlessPublished: generation)
        } catch {
            guard isPublished(generation) else { throw error }
        }
    }

    /// Whether a write transaction is open: one that may append while this sync runs, and
    /// whose task may need the thread a sync in place would hold.
    private var hasTransactionInFlight: Bool {
        state.withLock { ($0.writer?.activeTransactions ?? 0) > 0 }
    }

    private func isPublished(_ generation: UInt64) -> Bool {
        state.withLock { $0.current.record.generation >= generation }
    }
}
