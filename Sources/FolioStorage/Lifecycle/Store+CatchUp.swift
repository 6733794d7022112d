// A writer that takes the store's lock after another writer process held it: before any
// transaction builds on its tip, it moves onto what the other wrote (Docs/Durability.md
// §1.6, "Writers in turn").
extension Store {
    /// Makes sure this writer holds no lock while `body` runs and begins nothing meanwhile,
    /// then starts a turn (which catches up on whatever another writer did in `body`) and
    /// ends it: for tests and the torture tool, in which another writer opens, commits,
    /// compacts or is killed in `body`.
    ///
    /// It runs as a compaction's catch-up does, alone: it waits for a running compaction and
    /// for the active transactions to end, makes grouped commits durable (so the other
    /// writer sees them), and until `body` returns no compaction starts and `beginWrite()`
    /// waits. `body` must not use this store. Throws what taking the turn throws: among
    /// others `StorageError.lockedByAnotherWriter(path:)` if the other writer still holds
    /// the lock after the busy timeout, and the catch-up's failure (which poisons). The
    /// store's registration in this process is let go during `body` too; if `body` left
    /// another writer of the store open in this process, the store is poisoned and this
    /// throws `StorageError.alreadyOpenInThisProcess(path:)`.
    package func withWriterLockReleased<Result>(_ body: () throws -> Result) throws -> Result {
        var outcome: Swift.Result<Result, any Error>?
        defer { deliverQueued() }
        try compactionTurn.runHere(path: path) { (stop) throws(StorageError) in
            try withWritersExcluded(stop: stop) { () throws(StorageError) in
                try writeSection.withLock { _ throws(StorageError) in
                    try flushQueuingEvents()
                    state.withLock { state in
                        // Exclusive use keeps the flush from releasing it: released here.
                        if state.writer?.holdsLock == true {
                            state.writer?.holdsLock = false
                            if let writer = state.writer { pauseWatchIfTurnHeldOrAwaited(writer, caughtUp: true) }
                            writerLock?.release()
                        }
                    }
                }
                // Unregistered meanwhile, so that `body` may open another writer of this store
                // in this process, standing for one in another process.
                if let writerIdentity { WriterRegistry.unregister(writerIdentity) }
                outcome = Swift.Result { try body() }
                do throws(StorageError) {
                    _ = try WriterRegistry.reserve(lockPath: layout.lock, fileSystem: fileSystem)
                } catch {
                    state.withLock { $0.writer?.registered = false }
                    poison("this process has opened the store for writing again: \(error)")
                    throw error
                }
            }
        }
        try catchUpWithOtherWriters()
        return try outcome!.get()
    }

    /// Brings this writer up to date with the commits other processes made since it last
    /// held the store's lock, as the first transaction of a turn does: takes the lock (if no
    /// turn is held), catches up, and lets the lock go again if nothing else needs it.
    /// Returns whether the tip moved. Waits for the lock as ``beginWrite()`` does.
    @discardableResult
    package func catchUpWithOtherWriters() throws(StorageError) -> Bool {
        let before = state.withLock { $0.tip.record }
        let transaction = try beginWrite()
        transaction.rollback()
        return state.withLock { !Self.sameCommit($0.tip.record, before) }
    }

    /// Moves this writer onto the newest commit in the store, made by another writer while
    /// this one did not hold the store's lock; returns whether its tip moved.
    ///
    /// Caller has just taken the store's lock (``enterTurn(_:)``), in exclusive mode: no
    /// transaction of this store is active and no commit is pending (a turn ends only once
    /// every commit is durable), so nothing builds on the tip while it moves. The steps:
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
    /// one look at the root file's slots (through the store's mapping of the root file, or
    /// a read where there is none) and one read of the header after the committed end.
    ///
    /// Caller holds `writeSection`. A failure after the slots were read again poisons the
    /// store: its tip may be behind the slots, and a commit on it would be written over the
    /// other writer's runs.
    @discardableResult
    func catchUpHoldingWriteSection() throws(StorageError) -> Bool {
        do throws(StorageError) {
            return try catchUpHoldingWriteSectionOrThrow()
        } catch {
            switch error {
            case .closed, .readOnly, .needsReopen, .writeTransactionInProgress: break
            default: poison("catching up after another writer failed: \(error)")
            }
            throw error
        }
    }

    private func catchUpHoldingWriteSectionOrThrow() throws(StorageError) -> Bool {
        try rootFileLock.withLock { (slots) throws(StorageError) -> Bool in
            guard slots != nil else { throw StorageError.closed(path: path) }
            let known = try state.withLock { (state) throws(StorageError) -> CommittedRoot in
                if state.closed { throw .closed(path: path) }
                guard let writer = state.writer else { throw .readOnly(path: path) }
                if let cause = writer.poisoned { throw .needsReopen(path: path, cause: cause) }
                // Nothing may build on the tip while it moves.
                guard writer.activeTransactions == 0 && writer.ahead == nil && writer.pendingNotifications.isEmpty
                else { throw .writeTransactionInProgress }
                return state.current
            }
            let newestSlot = try slots!.reload(glance: rootGlance)
            var newest = known
            if !Self.sameCommit(newestSlot, known.record) {
                newest = try Store.loadRoot(
                    layout, fileSystem: fileSystem, cache: cache, counters: counters, writable: true,
                    log: options.log, reusing: known.file, glance: rootGlance)
            }
            newest = try followRunsAfter(
                newest, fellBack: !Self.sameCommit(newest.record, newestSlot), slots: &slots!)
            if Self.sameCommit(newest.record, known.record) { return false }
            try adopt(newest, replacing: known)
            return true
        }
    }

    /// Step 3 of ``catchUpHoldingWriteSection()``: the root after the complete runs that follow
    /// `root`, synced and named in a slot if there are any (as recovery does at an open).
    private func followRunsAfter(
        _ root: CommittedRoot, fellBack: Bool, slots: inout RootSlots
    ) throws(StorageError) -> CommittedRoot {
        guard !slots.isVersionOneLayout else { return root }
        // Nothing begins at the committed end (the common case): no run to follow, and the
        // file's size is not asked. Asking it costs more than its system call: on ext4 an
        // `fstat` between two writes made the next `fdatasync` also write the file's inode,
        // synchronously (a commit in a turn of its own took 45 % more time than one in a
        // held turn; without the `fstat`, the same). A file another writer grew beyond
        // `allocatedLength` is noticed by this writer's next preallocation, which asks the
        // size then, once, instead of writing zeros again (PageAppender).
        guard try RunRecovery.mayBeginRun(at: root.record.committedLength, in: root.file) else { return root }
        // The other writer may have grown the file (its runs, its preallocation).
        let size = try root.file.handle.size()
        root.file.allocatedLength = max(root.file.allocatedLength, size)
        let (record, runs) = try RunRecovery.followRuns(
            from: root.record, chain: root.record.chain, in: root.file, size: size)
        guard runs > 0 else { return root }
        // The newest slot was unusable and the root came from the other: the slots' anchor
        // (the older slot) would be flipped by the first sync below onto the unusable one,
        // and the write would go over the only usable slot. An open's recovery anchors on the
        // slot it opened at; so reopen.
        if fellBack {
            throw .needsReopen(
                path: path, cause: "the newest root slot is unusable and complete runs follow the other one")
        }
        options.log(
            "catching up \(layout.directory): adopted \(runs) commits past the newest root slot (generation "
                + "\(root.record.generation) to \(record.generation)), from complete runs another writer left in "
                + "\(root.file.path)")
        try root.file.handle.syncData()
        try slots.writeDurably(record)
        return CommittedRoot(record: record, pages: root.pages)
    }

    /// The most commits of other processes a writer nobody observes replays when it adopts
    /// them (``adopt(_:replacing:)``); past it, it reports the trees that changed instead.
    package static let longestReplayUnobserved: UInt64 = 64

    /// Every tree whose catalog entry differs between `earlier` and `later` (`later`
    /// continuing `earlier`), as changed wholesale, and the trees `later` no longer has.
    ///
    /// Why a tree whose entry is the same did not change in between: a commit that changes a
    /// key of a tree writes the tree's root page anew (copy on write), appended past every
    /// committed byte, so at an offset no earlier root of it had. Only in another file (a
    /// compaction in between) could an offset come back: then every tree counts as changed.
    static func treesChanged(from earlier: CommittedRoot, to later: CommittedRoot) throws(StorageError) -> ChangeRecord
    {
        let before = try earlier.allDescriptors()
        let after = try later.allDescriptors()
        let sameFile = earlier.record.snapshotFile == later.record.snapshotFile
        var previous: [String: TreeDescriptor] = [:]
        for (name, descriptor) in before { previous[name] = descriptor }
        var changes = ChangeRecord()
        for (name, descriptor) in after where !sameFile || previous[name] != descriptor {
            changes.trees.append(.wholesale(name))
        }
        let remaining = Set(after.map(\.name))
        changes.droppedTrees = before.map(\.name).filter { !remaining.contains($0) }
        return changes
    }

    /// Steps 4 and 5 of ``catchUpHoldingWriteSection()``, then the adoption itself. Caller holds
    /// `writeSection` and `rootFileLock`, in exclusive mode (a turn's start, or a writer
    /// following between turns).
    func adopt(_ newest: CommittedRoot, replacing known: CommittedRoot) throws(StorageError) {
        var newest = newest
        let continues = try descends(newest, from: known)
        let adopted = newest.record.generation &- known.record.generation
        if continues, adopted > Self.longestReplayUnobserved, observers.withLock({ $0.handlers.isEmpty }) {
            // Nobody observes this store: a replay would only tell the layer above which keys
            // changed, so that its caches drop them, and after many commits of another process
            // it costs more than the caches save (about 2 µs a commit, inside the store's
            // lock, so on every writer's critical path). One report of the newest generation
            // names instead the trees whose catalog entries differ, as changed wholesale: the
            // caches drop those trees' entries and keep the others'. An observer that
            // registered meanwhile is told to reload, as after a history too long to replay,
            // so it misses nothing.
            do throws(StorageError) {
                let changes = try Self.treesChanged(from: known, to: newest)
                reportCreated(newest.record.generation, changes: changes, byAnotherWriter: true)
            } catch {
                // A catalog that cannot be read now: nothing known of the commits holds, as
                // after a replay that failed (no reason to poison the writer).
                reportHistoryReplaced(at: newest.record.generation)
            }
            enqueue(.historyUnavailable(from: known.record.generation, to: newest.record.generation))
        } else if continues {
            var reached = known.record.generation
            do throws(StorageError) {
                try replay(
                    after: known.record.generation, continuing: try DeliveredCommit(known), upTo: newest,
                    held: known.file, bounds: options.replay
                ) { batch in
                    for notification in batch {
                        reportCreated(notification.generation, changes: notification.changes, byAnotherWriter: true)
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
        // Spilled pages this writer read back sat past its committed end, where the other
        // writer's runs now are (PageCache.remove says why a spill forgets them). Only a
        // spill sets the flag, and spills take `writeSection`, held here.
        let spilled = state.withLock { $0.writer?.spilledSinceCatchUp == true }
        if continues, spilled, newest.file === known.file {
            cache.removePages(ofFile: known.file.cacheIdentity, from: known.record.committedLength)
        }
        let grace = options.retention.gracePeriod
        state.withLock { state in
            state.writer?.spilledSinceCatchUp = false
            // The adopted file is current again if another history went back to it: it is no
            // longer this writer's to remove. A file the other writer compacted away from is
            // retired here as a compaction retires it (that writer may be gone).
            state.writer?.retired.removeAll { $0.number == newest.record.snapshotFile }
            if newest.file !== known.file && newest.record.snapshotFile > known.record.snapshotFile {
                state.writer?.retired.append(
                    RetiredSnapshot(
                        number: known.record.snapshotFile, removeAfter: ContinuousClock.now + grace,
                        bytes: max(known.record.committedLength, known.file.allocatedLength)))
            }
            state.writer?.durableRecord = newest.record
            state.current = newest
        }
    }
}
