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

    /// ``waitUntilDurable(_:)`` for async callers: the same group commit, but a caller that
    /// finds a sync in flight suspends until its turn instead of blocking its thread. On a
    /// small thread pool that is what lets other writers append while a sync runs, and so
    /// share the next one: a blocked waiter would hold one of the pool's few threads idle
    /// (Docs/Durability.md §1.4). The sync itself still blocks the thread of the caller whose
    /// turn it is, as every commit's did before. Cancellation does not end the wait: the
    /// commit is appended, and is acknowledged only once a sync covered it.
    func waitUntilDurable(_ generation: UInt64) async throws(StorageError) {
        guard case .full = options.durability else { return }
        if !isPublished(generation) {
            await syncTurn.acquireIgnoringCancellation()
            try syncInTurn(toPublish: generation)
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

    private func isPublished(_ generation: UInt64) -> Bool {
        state.withLock { $0.current.record.generation >= generation }
    }
}
