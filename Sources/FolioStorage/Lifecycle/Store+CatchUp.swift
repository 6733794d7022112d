// A writer that takes the store's lock after another writer process held it: before any
// transaction builds on its tip, it moves onto what the other wrote (Docs/Durability.md
// §1.7, "Writers in turn").
extension Store {
    /// Lets the store's writer lock go while `body` runs, then takes it again and catches up
    /// (``catchUpHoldingLock()``): what a writer does between transactions once writers in
    /// several processes take turns, here around one call, for tests and the torture tool
    /// (another writer opens, commits, compacts or is killed in `body`).
    ///
    /// Grouped commits are made durable first, so the other writer sees them. Throws
    /// `StorageError.writeTransactionInProgress` if a transaction of this store is active.
    /// No transaction may begin, and nothing of this store writes, until it returns (it
    /// holds the write critical section, and a compaction is waited for first). If the lock
    /// cannot be taken again (the other writer is still open), it throws
    /// `StorageError.lockedByAnotherWriter(path:)` and the store stays without it: close it.
    package func withWriterLockReleased<Result>(_ body: () throws -> Result) throws -> Result {
        compactionTurn.waitUntilIdle()
        var outcome: Swift.Result<Result, any Error>?
        try writeSection.withLock { _ throws(StorageError) in
            try flushQueuingEvents()
            let released = try state.withLock { (state) throws(StorageError) -> WriterState in
                if state.closed { throw .closed(path: path) }
                guard let writer = state.writer else { throw .readOnly(path: path) }
                if writer.activeTransactions > 0 { throw .writeTransactionInProgress }
                state.writer?.lock = nil
                return writer
            }
            released.lock?.unlock()
            WriterRegistry.unregister(released.identity)
            // Taken again whatever the body did.
            outcome = Swift.Result { try body() }
            let fs = fileSystem, lockPath = layout.lock
            let (lock, _) = try WriterRegistry.register(lockPath: lockPath, fileSystem: fs) {
                () throws(StorageError) in try fs.lock(lockPath)
            }
            state.withLock { $0.writer?.lock = lock }
            try catchUpHoldingWriteSection()
        }
        deliverQueued()
        return try outcome!.get()
    }

    /// Moves this writer onto the newest commit in the store, made by another writer while
    /// this one did not hold the store's lock; returns whether its tip moved.
    ///
    /// Caller holds the store's writer lock, and no transaction of this store is active and
    /// no commit is pending (``withWriterLockReleased(_:)`` flushes grouped commits before
    /// it lets the lock go), so nothing builds on the tip while it moves. The steps:
    ///
    /// 1. The root slots are read again (`RootSlots.reload()`): the anchor of the lag bound
    ///    is taken from slots this writer may not have written.
    /// 2. If the newest slot is not this writer's durable root, the root is loaded as an
    ///    open loads it (a damaged newest slot falls back to the other), opening the
    ///    snapshot file it names if another writer compacted into a new one.
    /// 3. Complete runs after that root are followed, as recovery follows them: a writer
    ///    killed between its run's sync and its slot write left a durable commit, which is
    ///    adopted, synced and named in a slot before anything is written after it.
    /// 4. The commits between this writer's tip and the adopted root are reported to the
    ///    generation listener and queued for observers, replayed from the store's history;
    ///    a history too long to replay (or one another writer rewrote after damage) is
    ///    reported as replaced and observers are told `historyUnavailable`.
    /// 5. Cached pages this writer read past its committed end (spills of transactions it
    ///    rolled back) are forgotten: the other writer's run may have put pages there.
    ///
    /// Only then is the adopted root the tip and published: a transaction that begins
    /// afterwards builds on it, so no commit is lost to a write based on a stale tree, and no
    /// byte another writer committed is written over.
    ///
    /// When nothing changed (the common case of a process that writes alone), this costs
    /// one read of the root file's slots and one of the header after the committed end.
    @discardableResult
    package func catchUpHoldingLock() throws(StorageError) -> Bool {
        defer { deliverQueued() }
        return try writeSection.withLock { _ throws(StorageError) -> Bool in try catchUpHoldingWriteSection() }
    }

    /// ``catchUpHoldingLock()`` for a caller that holds `writeSection`.
    @discardableResult
    private func catchUpHoldingWriteSection() throws(StorageError) -> Bool {
        try rootFileLock.withLock { (slots) throws(StorageError) -> Bool in
            guard slots != nil else { throw StorageError.closed(path: path) }
            let known = try state.withLock { (state) throws(StorageError) -> CommittedRoot in
                if state.closed { throw .closed(path: path) }
                guard let writer = state.writer else { throw .readOnly(path: path) }
                if let cause = writer.poisoned { throw .needsReopen(path: path, cause: cause) }
                precondition(
                    writer.activeTransactions == 0 && writer.ahead == nil && writer.pendingNotifications.isEmpty,
                    "a writer catches up with no transaction active and no commit pending")
                return state.current
            }
            let newestSlot = try slots!.reload()
            var newest = known
            if !Self.sameCommit(newestSlot, known.record) {
                newest = try Store.loadRoot(
                    layout, fileSystem: fileSystem, cache: cache, counters: counters, writable: true,
                    log: options.log, reusing: known.file)
            }
            newest = try followRunsAfter(newest, slots: &slots!)
            if Self.sameCommit(newest.record, known.record) { return false }
            try adopt(newest, replacing: known)
            return true
        }
    }

    /// Step 3 of ``catchUpHoldingLock()``: the root after the complete runs that follow
    /// `root`, synced and named in a slot if there are any (as recovery does at an open).
    private func followRunsAfter(
        _ root: CommittedRoot, slots: inout RootSlots
    ) throws(StorageError) -> CommittedRoot {
        guard !slots.isVersionOneLayout else { return root }
        // The other writer may have grown the file (its runs, its preallocation).
        root.file.allocatedLength = max(root.file.allocatedLength, try root.file.handle.size())
        let (record, runs) = try RunRecovery.followRuns(from: root.record, chain: root.record.chain, in: root.file)
        guard runs > 0 else { return root }
        options.log(
            "catching up \(layout.directory): adopted \(runs) commits past the newest root slot (generation "
                + "\(root.record.generation) to \(record.generation)), from complete runs another writer left in "
                + "\(root.file.path)")
        try root.file.handle.syncData()
        try slots.writeDurably(record)
        return CommittedRoot(record: record, pages: root.pages)
    }

    /// Steps 4 and 5 of ``catchUpHoldingLock()``, then the adoption itself. Caller holds
    /// `writeSection` and `rootFileLock`.
    private func adopt(_ newest: CommittedRoot, replacing known: CommittedRoot) throws(StorageError) {
        var newest = newest
        let continues = try descends(newest, from: known)
        if continues {
            var reached = known.record.generation
            do throws(StorageError) {
                try replay(
                    after: known.record.generation, continuing: try DeliveredCommit(known), upTo: newest,
                    bounds: options.replay
                ) { batch in
                    for notification in batch {
                        reportCreated(notification.generation, changes: notification.changes)
                    }
                    enqueue(.committed(batch))
                    reached = batch.last?.generation ?? reached
                }
            } catch {
                // What the layer above knows of the generations not replayed no longer holds.
                reportHistoryReplaced(at: newest.record.generation)
                enqueue(.historyUnavailable(from: reached, to: newest.record.generation))
            }
        } else {
            // Another history (a writer that fell back to an older root after damage): no
            // cached page or record of this one may be served for it. As a reader's refresh
            // does, the file is opened anew: the cache knows pages by open file and offset,
            // so views still on the lost history neither find the new pages nor put theirs
            // where new views look.
            if newest.file === known.file {
                let file = try Store.openSnapshot(
                    newest.record.snapshotFile, layout: layout, fileSystem: fileSystem, writable: true)
                file.allocatedLength = try file.handle.size()
                newest = CommittedRoot(
                    record: newest.record, pages: PageSource(file: file, cache: cache, counters: counters))
            }
            cache.removeAll()
            reportHistoryReplaced(at: newest.record.generation)
            enqueue(.historyUnavailable(from: known.record.generation, to: newest.record.generation))
        }
        state.withLock { state in
            // Spilled pages this writer read back sat past its committed end, where the
            // other writer's runs now are (PageCache.remove says why a spill forgets them).
            if continues, state.writer?.spilledSinceCatchUp == true, newest.file === known.file {
                cache.removePages(ofFile: known.file.cacheIdentity, from: known.record.committedLength)
            }
            state.writer?.spilledSinceCatchUp = false
            state.writer?.durableRecord = newest.record
            state.current = newest
        }
    }
}
