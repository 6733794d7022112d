import Dispatch

// Flushing (Docs/Durability.md §1.2): the sync of everything appended so far that every
// commit, grouped flush, compaction and close runs, and grouped durability's timer.
extension Store {
    /// Makes every commit so far durable (grouped mode; a no-op when everything is), then
    /// hands their events to observers, in generation order.
    public func flush() throws(StorageError) {
        defer { deliverQueued() }
        try flushQueuingEvents()
    }

    /// ``flush()`` without delivering: the events are queued (under `rootFileLock`, so in
    /// generation order whichever flush runs first) for ``deliverQueued()``. Callable with
    /// or without `writeSection` held: it takes only `rootFileLock` and `state`.
    ///
    /// What it syncs is the tip, the newest appended commit, taken with the pending events
    /// under one `state` lock, so the events are exactly those of the commits up to it. A
    /// commit appended after that waits for the next flush (it holds the lock behind this).
    ///
    /// `unlessPublished`: a group-commit waiter's generation. If it is published by the
    /// time the lock is held (a sync that ran while the waiter queued for the lock covered
    /// it), nothing is done: the commits appended since are their own waiters' to sync
    /// (Docs/Durability.md §1.4 step 3).
    ///
    /// The flush that makes the last pending commit durable ends this writer's turn if
    /// nothing else needs it: the store's lock is released after the slot write
    /// (Store+WriterTurns.swift).
    func flushQueuingEvents(unlessPublished waiter: UInt64? = nil) throws(StorageError) {
        guard !isReadOnly else { return }
        defer { releaseLockIfIdle() }
        try rootFileLock.withLock { (slots) throws(StorageError) in
            let taken = try state.withLock {
                (state) throws(StorageError) -> (CommittedRoot, RootRecord, [CommitNotification])? in
                if let waiter, state.current.record.generation >= waiter { return nil }
                guard var writer = state.writer else { throw StorageError.closed(path: path) }
                let pending = writer.pendingNotifications
                writer.pendingNotifications = []
                writer.flushScheduled = false
                // The turn lasts until this flush's slot write: in grouped mode nothing else
                // says a sync is in flight once the pending events are taken.
                if state.tip.record != writer.durableRecord { writer.flushesInFlight += 1 }
                state.writer = writer
                return (state.tip, writer.durableRecord, pending)
            }
            guard let (tip, durable, pending) = taken else { return }
            guard tip.record != durable else {
                enqueue(.committed(pending))
                return
            }
            do throws(StorageError) {
                if let cause = state.withLock({ $0.writer?.poisoned }) {
                    throw StorageError.needsReopen(path: path, cause: cause)
                }
                CrashPoint.commitBeforeSnapshotSync.reach()
                try syncSnapshot(tip.file)
                CrashPoint.commitAfterSnapshotSync.reach()
                try writeRootSlot(tip.record, durable: durable, in: tip.file, slots: &slots)
                // The turn holds the store's lock and its catch-up adopted every other
                // process's commit: the slots hold nothing a read of this process must follow.
                rootGlance?.noteSeenNow()
                CrashPoint.commitAfterRootSlotWrite.reach()
            } catch {
                // Not durable: keep the notifications for the flush that makes these commits
                // durable (a failure that did not poison leaves the store able to retry).
                // Dropping them would leave durable commits that observers never hear of.
                state.withLock { state in
                    state.writer?.pendingNotifications.insert(contentsOf: pending, at: 0)
                    state.writer?.flushesInFlight -= 1
                }
                throw error
            }
            // Full durability: each commit this flush publishes is reported before readers can
            // see it, in generation order (under the root file lock, as the events are queued).
            // Grouped mode reported them when they were appended and published.
            if case .full = options.durability {
                for notification in pending { reportCreated(notification.generation, changes: notification.changes) }
            }
            state.withLock { state in
                state.writer?.flushesInFlight -= 1
                state.writer?.durableRecord = tip.record
                // Full durability: publish. A root is published only once its run is
                // durable (Docs/Durability.md §1.1, "why a reader never sees an incomplete
                // run"): `tip` was taken after its run was appended, and the sync above
                // started after that (§1.4).
                if tip.record.generation > state.current.record.generation { state.current = tip }
                if state.writer?.ahead?.record == tip.record { state.writer?.ahead = nil }
            }
            signalPublished()
            // Still under the root file lock: a later flush queues its commits after these.
            enqueue(.committed(pending))
        }
    }

    func scheduleFlush(after window: Duration) {
        let nanoseconds =
            Int(window.components.seconds) * 1_000_000_000 + Int(window.components.attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(max(0, nanoseconds))) { [weak self] in
            guard let self else { return }
            do throws(StorageError) {
                try self.flush()
            } catch {
                if case .closed = error { return }  // close() flushed already
                // Whether to try again depends on the store, not on the error: a failed sync
                // or slot write throws the I/O error itself and poisons, and a poisoned store
                // must not be flushed again (never retry a sync; Docs/Durability.md §7).
                let (closed, poisoned, schedule) = self.state.withLock { state -> (Bool, Bool, Bool) in
                    guard let writer = state.writer else { return (true, false, false) }  // closed meanwhile
                    guard writer.poisoned == nil else { return (false, true, false) }
                    if writer.flushScheduled { return (false, false, false) }  // a later commit scheduled one
                    state.writer?.flushScheduled = true
                    return (false, false, true)
                }
                if closed { return }  // close() flushed, and reported its own failure
                if poisoned {
                    self.options.log(
                        "grouped commit flush failed for \(self.path); the store must be reopened: \(error)")
                } else {
                    // Not poisoned (a failure before anything was synced or written): the
                    // commits are still pending; try again after another window.
                    self.options.log("grouped commit flush failed for \(self.path), retrying: \(error)")
                    if schedule { self.scheduleFlush(after: window) }
                }
            }
        }
    }
}
