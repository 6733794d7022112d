import Dispatch

// The commit protocol of Docs/Durability.md §1: appending a transaction's run, group
// commit's shared sync and slot write, grouped flushes, and the sync failures that poison.
extension Store {
    /// Commits a transaction's changes: the protocol of Docs/Durability.md §1 (format
    /// version 2), whose five steps are these.
    ///
    ///  1. Append the run after the committed end: every changed page, children before
    ///     parents, then the catalog's changed pages, then the commit page (change record
    ///     included), which carries the checksum of the run seeded with the previous commit
    ///     page's (the chain). Past the file's allocated end, zeros are written ahead.
    ///  2. fdatasync the snapshot file. The commit is durable here: recovery follows
    ///     complete runs forward from the root slots, so it finds this one.
    ///  3. Write the new root into the root file's free slot, in place, without a sync
    ///     (``RootSlots``).
    ///  4. fdatasync the root file when the slot just written is ``RootSlots/maximumAnchorLag``
    ///     generations ahead of the anchor: it becomes the anchor. Not a condition of the
    ///     commit's durability: a failure here poisons but does not fail the commit.
    ///  5. Publish the new root to readers, warm the cache, queue the observers' event.
    ///
    /// This function does step 1 only and returns; steps 2-5 are ``waitUntilDurable(_:)``'s
    /// (group commit, Docs/Durability.md §1.4): the writer slot is free again once the run
    /// is appended, and a transaction that appends while another's sync is in flight shares
    /// the next sync with every commit appended before it.
    ///
    /// A failure in 1 leaves the store at its previous root and the next commit works (it
    /// writes over the abandoned run, which can never chain to it). A failed fdatasync in 2
    /// poisons the store: the kernel may have dropped the pages it could not write, so no
    /// later commit may build on them; reopen. A failed slot write in 3 also poisons: the run
    /// is durable, so only a reopen (whose recovery finds it) can tell what the root is. In
    /// grouped mode steps 2-4 run for several commits at once, in ``flush()``.
    ///
    /// Step 1 runs in the write critical section (`writeSection`), which ``close()`` also
    /// takes, and close flushes: a commit either is appended before close goes on, and
    /// close makes it durable, or finds the store closed and writes nothing. Observers are
    /// not called here: the event is queued in order and the caller delivers it with
    /// ``deliverQueued()`` once it holds no lock.
    func commit(
        trees: [TreeState], catalog: TreeState, base: CommittedRoot,
        spill: SpillState = SpillState()
    ) throws(StorageError) -> CommitNotification {
        try writeSection.withLock { _ throws(StorageError) -> CommitNotification in
            try checkWritable()
            return try commitHoldingWriteSection(trees: trees, catalog: catalog, base: base, spill: spill)
        }
    }

    /// Throws if the store is closed (or closing: the caller holds `writeSection`, which
    /// close holds while it closes) or poisoned. Caller holds `writeSection`.
    func checkWritable() throws(StorageError) {
        try state.withLock { (state) throws(StorageError) in
            if state.closed { throw .closed(path: path) }
            guard let writer = state.writer else { throw .closed(path: path) }
            if let cause = writer.poisoned { throw .needsReopen(path: path, cause: cause) }
        }
    }

    private func commitHoldingWriteSection(
        trees: [TreeState], catalog: TreeState, base: CommittedRoot,
        spill: SpillState
    ) throws(StorageError) -> CommitNotification {
        let generation = base.record.generation + 1
        let now = max(Clock.microsecondsSince1970(), base.record.timestamp)
        // The run begins at the committed end; if the transaction spilled pages, they are
        // its first part and this appender continues after them (WriteTransaction+Spill).
        var appender: PageAppender
        if let end = spill.end {
            appender = PageAppender(
                continuingRunAt: end, runningChecksum: spill.runningChecksum, file: base.file,
                generation: generation, collectsCacheEntries: true, preallocates: true)
        } else {
            appender = PageAppender(
                file: base.file, generation: generation, start: base.record.committedLength,
                chainSeed: try base.file.chainValue(of: base.record), preallocates: true)
        }
        let spilledLive = trees.reduce(UInt64(0)) { $0 + $1.spilledLiveBytes }
        let editor = TreeEditor(reader: base.reader)
        // The previous commit page becomes dead: only the newest one is part of the live tree.
        var freed = UInt64(base.record.commitPage.length)
        var changed: [ChangeRecord.TreeChanges] = []
        var dropped: [String] = []

        // If anything below throws, nothing references the bytes appended so far, and the
        // next commit writes over them (a run seeded by another chain value never validates
        // after it). Trees in byte order of their names, as the catalog sorts them.
        for tree in trees.sorted(by: { ByteOrder.compare(Array($0.name.utf8), Array($1.name.utf8)) < 0 })
        where tree.isModified {
            if tree.wasDropped && tree.existedBefore { dropped.append(tree.name) }
            let name = Array(tree.name.utf8)
            if tree.exists {
                let depth = try base.reader.depth(root: tree.root)
                let before = appender.bytesAppended
                let root = try appender.writeTree(tree.root)
                let written = appender.bytesAppended - before
                let kept = tree.committedBytes >= tree.freedBytes ? tree.committedBytes - tree.freedBytes : 0
                let descriptor = TreeDescriptor(
                    root: root, depth: depth, count: tree.count,
                    bytes: kept + written + tree.spilledLiveBytes)
                _ = try editor.put(name, .inline(descriptor.encoded()), in: catalog)
            } else if tree.existedBefore {
                _ = try editor.remove(name, in: catalog)
            }
            freed += tree.freedBytes
            let entries = tree.changeEntries()
            if !entries.isEmpty { changed.append(.init(tree: tree.name, entries: entries)) }
        }
        let catalogRoot = try appender.writeTree(catalog.root)
        freed += catalog.freedBytes
        let kept = base.record.liveBytes >= freed ? base.record.liveBytes - freed : 0
        let commit = CommitRecord(
            generation: generation, timestamp: now, kind: .transaction, catalogRoot: catalogRoot,
            liveBytes: 0, previous: base.record.location,
            changes: ChangeRecord(trees: changed, droppedTrees: dropped))
        let (commitPage, liveBytes, chain) = appender.appendCommit(
            commit, liveBytesBeforePage: kept + appender.bytesAppended + spilledLive)
        try appender.flush()
        // Not fatal: the run is complete in the file, so failing the commit now would
        // report as failed a commit a later recovery may find. Without the zeros the
        // next commits extend the file instead (the sync records its length).
        do throws(StorageError) {
            try appender.preallocateAfterRun()
        } catch {
            options.log("preallocating past the run of generation \(generation) in \(base.file.path) failed: \(error)")
        }
        let record = RootRecord(
            generation: generation, snapshotFile: base.record.snapshotFile,
            committedLength: commitPage.end, commitPage: commitPage, catalogRoot: catalogRoot,
            liveBytes: liveBytes, timestamp: now, previous: base.record.location, chain: chain)
        counters.recordPagesWritten(appender.pageCount, bytes: Int(clamping: appender.bytesAppended))
        let published = CommittedRoot(record: record, pages: base.pages)
        let notification = CommitNotification(
            generation: generation, timestamp: now, location: record.location,
            previous: base.record.location,
            changes: ChangeRecord(trees: changed, droppedTrees: dropped),
            before: ReadView(root: base), after: ReadView(root: published))

        switch options.durability {
        case .full:
            // Reported when a sync publishes it (flushQueuingEvents), not now: readers stay on
            // the previous generation until then, and a cache above keeps serving and filling
            // for it meanwhile. Only this writer builds on the tip, and its reads pass by
            // such a cache.
            // Appended, not yet durable: the next transaction may build on it at once, but
            // readers and observers see it only once a sync covers it (waitUntilDurable).
            state.withLock { state in
                state.writer?.ahead = published
                state.writer?.pendingNotifications.append(notification)
            }
            warmCache(appender.cacheEntries)
        case .grouped(let window):
            // Published now: reported first, so a cache above drops what it changed before any
            // read of this process can see it (Store+Generations.swift).
            reportCreated(generation, changes: notification.changes)
            let schedule = state.withLock { state -> Bool in
                state.current = published
                state.writer?.pendingNotifications.append(notification)
                if state.writer?.flushScheduled == true { return false }
                state.writer?.flushScheduled = true
                return true
            }
            warmCache(appender.cacheEntries)
            if schedule { scheduleFlush(after: window) }
        }
        return notification
    }

    /// Makes every commit so far durable (grouped mode; a no-op when everything is), then
    /// hands their events to observers, in generation order.
    public func flush() throws(StorageError) {
        defer { deliverQueued() }
        try flushQueuingEvents()
    }

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
    func flushQueuingEvents(unlessPublished waiter: UInt64? = nil) throws(StorageError) {
        guard !isReadOnly else { return }
        try rootFileLock.withLock { (slots) throws(StorageError) in
            let taken = try state.withLock {
                (state) throws(StorageError) -> (CommittedRoot, RootRecord, [CommitNotification])? in
                if let waiter, state.current.record.generation >= waiter { return nil }
                guard var writer = state.writer else { throw StorageError.closed(path: path) }
                let pending = writer.pendingNotifications
                writer.pendingNotifications = []
                writer.flushScheduled = false
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
                CrashPoint.commitAfterRootSlotWrite.reach()
            } catch {
                // Not durable: keep the notifications for the flush that makes these commits
                // durable (a failure that did not poison leaves the store able to retry).
                // Dropping them would leave durable commits that observers never hear of.
                state.withLock { $0.writer?.pendingNotifications.insert(contentsOf: pending, at: 0) }
                throw error
            }
            // Full durability: each commit this flush publishes is reported before readers can
            // see it, in generation order (under the root file lock, as the events are queued).
            // Grouped mode reported them when they were appended and published.
            if case .full = options.durability {
                for notification in pending { reportCreated(notification.generation, changes: notification.changes) }
            }
            state.withLock { state in
                state.writer?.durableRecord = tip.record
                // Full durability: publish. A root is published only once its run is
                // durable (Docs/Durability.md §1.1, "why a reader never sees an incomplete
                // run"): `tip` was taken after its run was appended, and the sync above
                // started after that (§1.4).
                if tip.record.generation > state.current.record.generation { state.current = tip }
                if state.writer?.ahead?.record == tip.record { state.writer?.ahead = nil }
            }
            // Still under the root file lock: a later flush queues its commits after these.
            enqueue(.committed(pending))
        }
    }

    private func scheduleFlush(after window: Duration) {
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

    /// fdatasyncs a snapshot file: step 2, the one sync of a commit. A failure poisons the
    /// store (never retry a sync).
    func syncSnapshot(_ file: SnapshotFile) throws(StorageError) {
        do throws(StorageError) {
            try file.handle.syncData()
            counters.recordCommitSync()
        } catch {
            poison("fdatasync of \(file.path) failed: \(error)")
            throw error
        }
    }

    /// Step 3: writes `record`, whose run is durable, into the free root slot. Upgrades a
    /// version 1 root file first (once), to `durable`, the root the file names, in `file`.
    /// Caller holds `rootFileLock`. A failure poisons: the run is durable, so only a reopen
    /// can tell what the newest root is.
    func writeRootSlot(
        _ record: RootRecord, durable: RootRecord, in file: SnapshotFile,
        slots: inout RootSlots?
    ) throws(StorageError) {
        guard slots != nil else { throw StorageError.closed(path: path) }
        do throws(StorageError) {
            try slots!.upgradeIfNeeded(to: durable, in: file)
            try slots!.write(record)
        } catch {
            poison("writing the root slot failed: \(error)")
            throw error
        }
        // Step 4, the root file sync. Invariant: the anchor is never more than
        // RootSlots.maximumAnchorLag generations behind the newest slot written, so the sync
        // runs as soon as this write reaches the bound. The commit is durable already (its
        // run is synced), so a failure here does not fail it: it poisons, and the next open
        // recovers.
        if slots!.syncIsDue {
            do throws(StorageError) {
                try slots!.sync()
            } catch {
                poison("syncing the root file failed: \(error)")
            }
        }
    }

    private func warmCache(_ entries: [(key: PageCache.Key, page: CachedPage, cost: Int)]) {
        for entry in entries { cache.insert(entry.key, entry.page, cost: entry.cost) }
    }
}
