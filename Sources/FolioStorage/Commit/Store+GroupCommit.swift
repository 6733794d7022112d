// Group commit (Docs/Durability.md §1.4): steps 2-5 of a commit appended in full
// durability, for blocking and async callers.
extension Store {
    /// Steps 2-5 of a commit appended in full durability (a no-op in grouped mode, whose
    /// commits are made durable by ``flush()``): returns once the commit of `generation` is
    /// durable and published, its event queued for ``deliverQueued()``.
    ///
    /// Group commit, with `rootFileLock` as the queue: the first waiter takes the lock and
    /// syncs everything appended so far; those that arrive meanwhile wait for the lock, and
    /// once they hold it either find their commit published by that sync (and return at
    /// once, without a sync of their own) or sync, at once, every commit appended while the
    /// previous sync ran. Called without `writeSection`, so the writer appends the next
    /// transaction while a sync is in flight. A sync that fails poisons the store, so every
    /// commit waiting behind it that it did not publish fails too, with
    /// `StorageError.needsReopen(path:cause:)`: none of them was acknowledged.
    func waitUntilDurable(_ generation: UInt64) throws(StorageError) {
        guard case .full = options.durability else { return }
        if !isPublished(generation) { try flush(toPublish: generation) }
        CrashPoint.commitBeforeAcknowledge.reach()
    }

    /// One group-commit sync of everything appended so far (`flushQueuingEvents`), for the
    /// commit of `generation`, unless a sync published it while this caller waited for the
    /// root file lock.
    ///
    /// Invariant: a commit that is published is durable and delivered, so no error is
    /// reported for it: a later sync's failure (of commits appended after it) or a close
    /// that ran meanwhile is not its caller's error. Reporting it would tell the caller
    /// that a durable commit failed, and a caller that retried after reopening would apply
    /// it twice.
    private func flush(toPublish generation: UInt64) throws(StorageError) {
        do throws(StorageError) {
            try flushQueuingEvents(unlessPublished: generation)
        } catch {
            guard isPublished(generation) else { throw error }
        }
    }

    /// ``waitUntilDurable(_:)`` for async callers: the same group commit, but a caller that
    /// finds a sync in flight suspends until it ends instead of blocking its thread on the
    /// root file lock. On a small thread pool that is what lets other writers append while
    /// a sync runs, and so share the next one: a blocked follower would hold one of the
    /// pool's few threads idle (Docs/Durability.md §1.4). The leader's own `fdatasync`
    /// still blocks its thread, as every commit's did before.
    func waitUntilDurable(_ generation: UInt64) async throws(StorageError) {
        guard case .full = options.durability else { return }
        while !isPublished(generation) {
            let leads = syncLeadership.withLock { leadership -> Bool in
                if leadership.syncing { return false }
                leadership.syncing = true
                return true
            }
            guard leads else {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = syncLeadership.withLock { leadership -> Bool in
                        // The sync ended between the two locks: look again rather than wait.
                        if !leadership.syncing { return true }
                        leadership.followers.append(continuation)
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
                continue
            }
            defer {
                let followers = syncLeadership.withLock { leadership in
                    leadership.syncing = false
                    defer { leadership.followers = [] }
                    return leadership.followers
                }
                for follower in followers { follower.resume() }
            }
            try flush(toPublish: generation)
        }
        CrashPoint.commitBeforeAcknowledge.reach()
    }

    private func isPublished(_ generation: UInt64) -> Bool {
        state.withLock { $0.current.record.generation >= generation }
    }
}
