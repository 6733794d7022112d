import Dispatch

extension Store {
    /// Commits a transaction's changes: the protocol of Docs/Durability.md §1.
    ///
    ///  1. Append every changed page after the committed end, children before parents,
    ///     then the catalog's changed pages, then the commit page (change record included).
    ///  2. fsync the snapshot file.
    ///  3. Write the new root (slot 0) and the root it replaces (slot 1) to `root.tmp`; fsync it.
    ///  4. rename `root.tmp` over `root`: this is the commit.
    ///  5. fsync the store directory.
    ///  6. Publish the new root to readers, warm the cache, notify observers.
    ///
    /// A failure in 1 or 3 leaves the store at its previous root and the next commit works
    /// (it appends over the abandoned bytes). A failed fsync in 2 poisons the store: the
    /// kernel may have dropped the pages it could not write, so no later commit may build on
    /// them; reopen. A failure at or after 4 also poisons: the new root may or may not be on
    /// disk, and only a reopen can tell. In grouped mode steps 2-5 run for several commits at
    /// once, in ``flush()``.
    ///
    /// The whole protocol runs in the write critical section (`writeSection`), which
    /// ``close()`` also takes: a commit either completes before close goes on, or finds the
    /// store closed and writes nothing. Observers are not called here: the event is queued
    /// in order and the caller delivers it with ``deliverQueued()`` once it holds no lock.
    func commit(trees: [TreeState], catalog: TreeState, base: CommittedRoot) throws(StorageError) -> CommitNotification {
        try writeSection.withLock { _ throws(StorageError) -> CommitNotification in
            try checkWritable()
            return try commitHoldingWriteSection(trees: trees, catalog: catalog, base: base)
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

    private func commitHoldingWriteSection(trees: [TreeState], catalog: TreeState,
                                           base: CommittedRoot) throws(StorageError) -> CommitNotification {
        let generation = base.record.generation + 1
        let now = max(Clock.microsecondsSince1970(), base.record.timestamp)
        var appender = PageAppender(file: base.file, generation: generation, start: base.record.committedLength)
        let editor = TreeEditor(reader: base.reader)
        // The previous commit page becomes dead: only the newest one is part of the live tree.
        var freed = UInt64(base.record.commitPage.length)
        var changed: [ChangeRecord.TreeChanges] = []
        var dropped: [String] = []

        let record: RootRecord
        do throws(StorageError) {
            // In byte order of the names, as the catalog sorts them.
            for tree in trees.sorted(by: { ByteOrder.compare(Array($0.name.utf8), Array($1.name.utf8)) < 0 }) where tree.isModified {
                if tree.wasDropped && tree.existedBefore { dropped.append(tree.name) }
                let name = Array(tree.name.utf8)
                if tree.exists {
                    let depth = try base.reader.depth(root: tree.root)
                    let before = appender.bytesAppended
                    let root = try appender.writeTree(tree.root)
                    let written = appender.bytesAppended - before
                    let kept = tree.committedBytes >= tree.freedBytes ? tree.committedBytes - tree.freedBytes : 0
                    let descriptor = TreeDescriptor(root: root, depth: depth, count: tree.count, bytes: kept + written)
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
            let (commitPage, liveBytes) = appender.appendCommit(commit, liveBytesBeforePage: kept + appender.bytesAppended)
            try appender.flush()
            record = RootRecord(generation: generation, snapshotFile: base.record.snapshotFile,
                                committedLength: commitPage.end, commitPage: commitPage, catalogRoot: catalogRoot,
                                liveBytes: liveBytes, timestamp: now, previous: base.record.location)
        } catch {
            // Nothing references the bytes appended so far; give the space back if we can.
            try? base.file.handle.truncate(to: base.record.committedLength)
            throw error
        }
        counters.recordPagesWritten(appender.pageCount, bytes: Int(clamping: appender.bytesAppended))
        let published = CommittedRoot(record: record, pages: base.pages)
        let notification = CommitNotification(generation: generation, timestamp: now, location: record.location,
                                              previous: base.record.location,
                                              changes: ChangeRecord(trees: changed, droppedTrees: dropped),
                                              before: ReadView(root: base), after: ReadView(root: published))

        switch options.durability {
        case .full:
            try rootFileLock.withLock { _ throws(StorageError) in
                CrashPoint.commitBeforeSnapshotSync.reach()
                try syncSnapshot(base.file)
                CrashPoint.commitAfterSnapshotSync.reach()
                let previous = state.withLock { $0.writer?.durableRecord }
                try replaceRoot(record, previous: previous,
                                crashPoints: (.commitBeforeRootRename, .commitAfterRootRename))
                CrashPoint.commitAfterDirectorySync.reach()
                state.withLock { state in
                    state.current = published
                    state.writer?.durableRecord = record
                }
                // Queued under the root file lock: in generation order with every flush.
                enqueue(.committed([notification]))
            }
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
        try rootFileLock.withLock { _ throws(StorageError) in
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
                try replaceRoot(current.record, previous: durable, crashPoints: (.commitBeforeRootRename, .commitAfterRootRename))
                CrashPoint.commitAfterDirectorySync.reach()
            } catch {
                // Not durable: keep the notifications for the flush that makes these commits
                // durable (after a failure in step 3 the store can still commit and flush).
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

    /// fsyncs a snapshot file; a failure poisons the store (never retry an fsync).
    func syncSnapshot(_ file: SnapshotFile) throws(StorageError) {
        do throws(StorageError) {
            try file.handle.sync()
        } catch {
            poison("fsync of \(file.path) failed: \(error)")
            throw error
        }
    }

    /// Steps 3-5 of the commit protocol. Caller holds `rootFileLock`.
    func replaceRoot(_ record: RootRecord, previous: RootRecord?,
                     crashPoints: (beforeRename: CrashPoint, afterRename: CrashPoint)) throws(StorageError) {
        let bytes = RootRecord.encodeFile(current: record, previous: previous)
        let temporary = try fileSystem.open(layout.rootTemporary, mode: .truncate)
        defer { temporary.close() }
        try temporary.write(bytes, at: 0)
        try temporary.sync()
        crashPoints.beforeRename.reach()
        do throws(StorageError) {
            try fileSystem.rename(layout.rootTemporary, to: layout.root)
        } catch {
            poison("replacing the root file failed: \(error)")
            throw error
        }
        crashPoints.afterRename.reach()
        do throws(StorageError) {
            try fileSystem.syncDirectory(layout.directory)
        } catch {
            poison("fsync of the store directory failed after replacing the root: \(error)")
            throw error
        }
    }

    private func warmCache(_ entries: [(key: PageCache.Key, page: CachedPage, cost: Int)]) {
        for entry in entries { cache.insert(entry.key, entry.page, cost: entry.cost) }
    }
}

