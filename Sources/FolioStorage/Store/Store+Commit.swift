import Dispatch

extension Store {
    /// Commits a transaction's changes: the protocol of Docs/Durability.md §1 (format
    /// version 2).
    ///
    ///  1. Append the run after the committed end: every changed page, children before
    ///     parents, then the catalog's changed pages, then the commit page (change record
    ///     included), which carries the checksum of the run seeded with the previous commit
    ///     page's (the chain). Past the file's allocated end, zeros are written ahead.
    ///  2. fdatasync the snapshot file. The commit is durable here: recovery follows
    ///     complete runs forward from the root slots, so it finds this one.
    ///  3. Write the new root into the root file's free slot, in place, without a sync
    ///     (``RootSlots``); the root file is synced every so many commits.
    ///  4. Publish the new root to readers, warm the cache, queue the observers' event.
    ///
    /// A failure in 1 leaves the store at its previous root and the next commit works (it
    /// writes over the abandoned run, which can never chain to it). A failed fdatasync in 2
    /// poisons the store: the kernel may have dropped the pages it could not write, so no
    /// later commit may build on them; reopen. A failed slot write in 3 also poisons: the run
    /// is durable, so only a reopen (whose recovery finds it) can tell what the root is. In
    /// grouped mode steps 2 and 3 run for several commits at once, in ``flush()``.
    ///
    /// The whole protocol runs in the write critical section (`writeSection`), which
    /// ``close()`` also takes: a commit either completes before close goes on, or finds the
    /// store closed and writes nothing. Observers are not called here: the event is queued
    /// in order and the caller delivers it with ``deliverQueued()`` once it holds no lock.
    func commit(trees: [TreeState], catalog: TreeState, base: CommittedRoot,
                spill: SpillState = SpillState()) throws(StorageError) -> CommitNotification {
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

    private func commitHoldingWriteSection(trees: [TreeState], catalog: TreeState, base: CommittedRoot,
                                           spill: SpillState) throws(StorageError) -> CommitNotification {
        let generation = base.record.generation + 1
        let now = max(Clock.microsecondsSince1970(), base.record.timestamp)
        // The run begins at the committed end; if the transaction spilled pages, they are
        // its first part and this appender continues after them (WriteTransaction+Spill).
        var appender: PageAppender
        if let end = spill.end {
            appender = PageAppender(continuingRunAt: end, runningChecksum: spill.runningChecksum, file: base.file,
                                    generation: generation, collectsCacheEntries: true, preallocates: true)
        } else {
            appender = PageAppender(file: base.file, generation: generation, start: base.record.committedLength,
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
        for tree in trees.sorted(by: { ByteOrder.compare(Array($0.name.utf8), Array($1.name.utf8)) < 0 }) where tree.isModified {
            if tree.wasDropped && tree.existedBefore { dropped.append(tree.name) }
            let name = Array(tree.name.utf8)
            if tree.exists {
                let depth = try base.reader.depth(root: tree.root)
                let before = appender.bytesAppended
                let root = try appender.writeTree(tree.root)
                let written = appender.bytesAppended - before
                let kept = tree.committedBytes >= tree.freedBytes ? tree.committedBytes - tree.freedBytes : 0
                let descriptor = TreeDescriptor(root: root, depth: depth, count: tree.count,
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
        let commit = CommitRecord(generation: generation, timestamp: now, kind: .transaction, catalogRoot: catalogRoot,
                                  liveBytes: 0, previous: base.record.location,
                                  changes: ChangeRecord(trees: changed, droppedTrees: dropped))
        let (commitPage, liveBytes, chain) = appender.appendCommit(commit, liveBytesBeforePage: kept + appender.bytesAppended + spilledLive)
        try appender.flush()
        // Not fatal: the run is complete in the file, so failing the commit now would
        // report as failed a commit a later recovery may find. Without the zeros the
        // next commits extend the file instead (the sync records its length).
        do throws(StorageError) {
            try appender.preallocateAfterRun()
        } catch {
            options.log("preallocating past the run of generation \(generation) in \(base.file.path) failed: \(error)")
        }
        let record = RootRecord(generation: generation, snapshotFile: base.record.snapshotFile,
                                committedLength: commitPage.end, commitPage: commitPage, catalogRoot: catalogRoot,
                                liveBytes: liveBytes, timestamp: now, previous: base.record.location, chain: chain)
        counters.recordPagesWritten(appender.pageCount, bytes: Int(clamping: appender.bytesAppended))
        let published = CommittedRoot(record: record, pages: base.pages)
        let notification = CommitNotification(generation: generation, timestamp: now, location: record.location,
                                              previous: base.record.location,
                                              changes: ChangeRecord(trees: changed, droppedTrees: dropped),
                                              before: ReadView(root: base), after: ReadView(root: published))

        switch options.durability {
        case .full:
            try rootFileLock.withLock { (slots) throws(StorageError) in
                CrashPoint.commitBeforeSnapshotSync.reach()
                try syncSnapshot(base.file)
                CrashPoint.commitAfterSnapshotSync.reach()
                try writeRootSlot(record, durable: base.record, in: base.file, slots: &slots)
                CrashPoint.commitAfterRootSlotWrite.reach()
                state.withLock { state in
                    state.current = published
                    state.writer?.durableRecord = record
                }
                // Queued under the root file lock: in generation order with every flush.
                enqueue(.committed([notification]))
            }
            CrashPoint.commitBeforeAcknowledge.reach()
            warmCache(appender.cacheEntries)
        case .grouped(let window):
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

    /// ``flush()`` without delivering: the events are queued (under `rootFileLock`, so in
    /// generation order whichever flush runs first) for ``deliverQueued()``. Callable with
    /// or without `writeSection` held: it takes only `rootFileLock` and `state`.
    func flushQueuingEvents() throws(StorageError) {
        guard !isReadOnly else { return }
        try rootFileLock.withLock { (slots) throws(StorageError) in
            let (current, durable, pending) = try state.withLock { (state) throws(StorageError) in
                guard var writer = state.writer else { throw StorageError.closed(path: path) }
                let pending = writer.pendingNotifications
                writer.pendingNotifications = []
                writer.flushScheduled = false
                state.writer = writer
                return (state.current, writer.durableRecord, pending)
            }
            guard current.record != durable else {
                enqueue(.committed(pending))
                return
            }
            do throws(StorageError) {
                if let cause = state.withLock({ $0.writer?.poisoned }) { throw StorageError.needsReopen(path: path, cause: cause) }
                CrashPoint.commitBeforeSnapshotSync.reach()
                try syncSnapshot(current.file)
                CrashPoint.commitAfterSnapshotSync.reach()
                try writeRootSlot(current.record, durable: durable, in: current.file, slots: &slots)
                CrashPoint.commitAfterRootSlotWrite.reach()
            } catch {
                // Not durable: keep the notifications for the flush that makes these commits
                // durable (a failure that did not poison leaves the store able to retry).
                // Dropping them would leave durable commits that observers never hear of.
                state.withLock { $0.writer?.pendingNotifications.insert(contentsOf: pending, at: 0) }
                throw error
            }
            state.withLock { $0.writer?.durableRecord = current.record }
            // Still under the root file lock: a later flush queues its commits after these.
            enqueue(.committed(pending))
        }
    }

    private func scheduleFlush(after window: Duration) {
        let nanoseconds = Int(window.components.seconds) * 1_000_000_000 + Int(window.components.attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(max(0, nanoseconds))) { [weak self] in
            guard let self else { return }
            do throws(StorageError) {
                try self.flush()
            } catch {
                switch error {
                case .closed:
                    return  // close() flushed already
                case .needsReopen:
                    self.options.log("grouped commit flush failed for \(self.path): \(error)")
                default:
                    // Not poisoned (say, the root file could not be written): the commits are
                    // still pending; try again after another window.
                    self.options.log("grouped commit flush failed for \(self.path), retrying: \(error)")
                    let retry = self.state.withLock { state -> Bool in
                        guard state.writer?.flushScheduled == false else { return false }
                        state.writer?.flushScheduled = true
                        return true
                    }
                    if retry { self.scheduleFlush(after: window) }
                }
            }
        }
    }

    /// fdatasyncs a snapshot file: step 2, the one sync of a commit. A failure poisons the
    /// store (never retry a sync).
    func syncSnapshot(_ file: SnapshotFile) throws(StorageError) {
        do throws(StorageError) {
            try file.handle.syncData()
        } catch {
            poison("fdatasync of \(file.path) failed: \(error)")
            throw error
        }
    }

    /// Step 3: writes `record`, whose run is durable, into the free root slot. Upgrades a
    /// version 1 root file first (once), to `durable`, the root the file names, in `file`.
    /// Caller holds `rootFileLock`. A failure poisons: the run is durable, so only a reopen
    /// can tell what the newest root is.
    func writeRootSlot(_ record: RootRecord, durable: RootRecord, in file: SnapshotFile,
                       slots: inout RootSlots?) throws(StorageError) {
        guard slots != nil else { throw StorageError.closed(path: path) }
        do throws(StorageError) {
            try slots!.upgradeIfNeeded(to: durable, in: file)
            try slots!.write(record)
        } catch {
            poison("writing the root slot failed: \(error)")
            throw error
        }
        // The periodic root file sync. The commit is durable already (its run is synced),
        // so a failure here does not fail it: it poisons, and the next open recovers.
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

