// Step 1 of the commit protocol of Docs/Durability.md §1: appending a transaction's run
// and warming the cache with its pages. The rest of the protocol: group commit's shared sync
// in Store+GroupCommit.swift, the flush every sync runs and grouped durability's timer in
// Store+Flush.swift, the sync and slot write that poison when they fail in
// Store+SyncAndSlot.swift.
extension Store {
    /// Commits a transaction's changes: the protocol of Docs/Durability.md §1 (format
    /// versions 2 and 3), whose five steps are these.
    ///
    ///  1. Append the run after the committed end: every changed page, children before
    ///     parents, then the catalog's changed pages, then the commit page (change record
    ///     included), which carries the checksum of the run seeded with the previous commit
    ///     page's (the chain). Past the file's allocated end, zeros are written ahead.
    ///  2. fdatasync the snapshot file. The commit is durable here: recovery follows
    ///     complete runs forward from the root slots, so it finds this one.
    ///  3. Write the new root into the root file's free slot, in place, without a sync
    ///     (``RootSlots``).
    ///  4. fdatasync the root file before a slot write that would be
    ///     ``RootSlots/maximumAnchorLag`` generations ahead of the anchor (the slot written
    ///     last becomes the anchor; RootSlots says why before), and after a write that alone
    ///     is that far ahead. Both poison on failure; the sync before the write fails the
    ///     commit as a failed slot write does, the sync after it does not (the commit is
    ///     durable and its slot written).
    ///  5. Publish the new root to readers, queue the observers' event. (The cache is warmed
    ///     with the run's pages as soon as step 1 is done, outside the write section.)
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
    ///
    /// Concurrent transactions (Docs/Architecture.md invariant 7): the transaction began on
    /// `base`, and other commits may have been appended since. Under `writeSection` the tip
    /// cannot move, so the check and the append are one step: if every tree in `reads` has
    /// at the tip the catalog entry it had in `base`, the commit is rebased: its changed
    /// trees go into the tip's catalog and it becomes the tip's successor. A tree changed
    /// since that the transaction only wrote blind is replayed onto the tip's version
    /// (``TreeState/replayed(onto:reading:)``). Otherwise it throws `writeConflict` and
    /// writes nothing.
    ///
    /// `generationAssigned` is called with the generation the commit creates, under
    /// `writeSection`, once nothing can fail any more and before the commit is published
    /// to anyone: what a caller orders by generation is ordered exactly as the commits.
    func commit(
        trees: [TreeState], base: CommittedRoot, reads: TreeReads, transaction: ObjectIdentifier,
        spill: SpillState = SpillState(), generationAssigned: (UInt64) -> Void = { _ in }
    ) throws(StorageError) -> CommitNotification {
        let (notification, written) = try writeSection.withLock {
            _ throws(StorageError) -> (CommitNotification, [WrittenPage]) in
            try checkWritable()
            let (onto, writtenBlind) = try rebaseTarget(
                base: base, reads: reads, transaction: transaction, spill: spill)
            let committed = try replaying(writtenBlind, of: trees, base: base, onto: onto, spill: spill)
            return try commitHoldingWriteSection(
                trees: committed, base: onto, spill: spill, generationAssigned: generationAssigned)
        }
        // Outside the write section, where other commits queue (WrittenPage says why that is
        // safe).
        warmCache(written)
        return notification
    }

    /// The root a transaction begun on `base` commits onto: the tip, if no commit since
    /// `base` changed a tree in `reads` and no other transaction holds the end of the file;
    /// with the trees changed since that the transaction only wrote blind.
    /// Caller holds `writeSection`, so the tip does not move until the commit is appended.
    private func rebaseTarget(
        base: CommittedRoot, reads: TreeReads, transaction: ObjectIdentifier, spill: SpillState
    ) throws(StorageError) -> (CommittedRoot, writtenBlind: [String]) {
        let (tip, tailOwner) = state.withLock { ($0.tip, $0.writer?.tailOwner) }
        // A transaction that spilled has begun its run at the committed end: another commit
        // there would overwrite its pages (WriteTransaction+Spill.swift).
        if let tailOwner, tailOwner != transaction { throw .writeConflict(trees: []) }
        if tip.record.generation == base.record.generation { return (base, []) }
        // Exclusive use keeps compaction from switching files under an active transaction;
        // checked again because the trees' pages are addresses in the base's file.
        guard tip.file === base.file else { throw .writeConflict(trees: []) }
        let changes = try reads.changes(base: base, tip: tip)
        if !changes.conflicting.isEmpty { throw .writeConflict(trees: changes.conflicting) }
        // The spilled pages were written as the first part of the run on the tip they
        // spilled over (the tail was this transaction's since, so the tip has not moved).
        if let spilledOver = spill.over, spilledOver != tip.record.generation { throw .writeConflict(trees: []) }
        return (tip, changes.writtenBlind)
    }

    /// `trees`, with those named in `writtenBlind` replayed onto `tip`'s versions. A tree
    /// that cannot be replayed conflicts: its blind keys were too many to remember, or the
    /// transaction spilled (its spilled pages of the tree would be left dead in the run).
    private func replaying(
        _ writtenBlind: [String], of trees: [TreeState], base: CommittedRoot, onto tip: CommittedRoot,
        spill: SpillState
    ) throws(StorageError) -> [TreeState] {
        if writtenBlind.isEmpty { return trees }
        let names = Set(writtenBlind)
        let replayable = trees.filter { names.contains($0.name) }
        if spill.end != nil || replayable.contains(where: \.blindKeysLost) {
            throw .writeConflict(trees: writtenBlind)
        }
        var committed = trees.filter { !names.contains($0.name) }
        for tree in replayable {
            let replayed = try tree.replayed(onto: tip, reading: base.reader)
            replayed.checkInvariants()
            committed.append(replayed)
        }
        return committed
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

    /// Appends the run of `trees` as the successor of `base`, the tip (the transaction's own
    /// base, or the tip it is rebased onto: its trees are unchanged between the two, or
    /// were replayed onto the tip's).
    private func commitHoldingWriteSection(
        trees: [TreeState], base: CommittedRoot, spill: SpillState, generationAssigned: (UInt64) -> Void
    ) throws(StorageError) -> (CommitNotification, [WrittenPage]) {
        // The catalog of the root this commit follows, edited for the trees it changed: a
        // rebased commit keeps every other commit's trees.
        let catalog = TreeState(
            name: "", descriptor: TreeDescriptor(root: base.record.catalogRoot, depth: 0, count: 0, bytes: 0))
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
        var entries: [(name: [UInt8], descriptor: TreeDescriptor?)] = []

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
                _ = try editor.put(name, .inline(descriptor.encoded()[...]), in: catalog)
                entries.append((name, descriptor))
            } else {
                if tree.existedBefore { _ = try editor.remove(name, in: catalog) }
                entries.append((name, nil))
            }
            freed += tree.freedBytes
            // A tree dropped and not re-created is listed as dropped only.
            if tree.exists, let changes = tree.recordedChanges() { changed.append(changes) }
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
            liveBytes: liveBytes, timestamp: now, previous: base.record.location, chain: chain,
            formatVersion: StorageFormat.version(after: base.record.formatVersion, recording: commit.changes))
        counters.recordPagesWritten(appender.pageCount, bytes: Int(clamping: appender.bytesAppended))
        let published = CommittedRoot(record: record, pages: base.pages)
        published.prime(from: base, written: entries)
        let notification = CommitNotification(
            generation: generation, timestamp: now, location: record.location,
            previous: base.record.location,
            changes: ChangeRecord(trees: changed, droppedTrees: dropped),
            before: ReadView(root: base), after: ReadView(root: published))

        // Nothing below fails, and nothing below is seen before this returns.
        generationAssigned(generation)
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
            if schedule { scheduleFlush(after: window) }
        }
        return (notification, appender.cacheEntries)
    }

    private func warmCache(_ pages: [WrittenPage]) {
        cache.insert(contentsOf: pages.map { ($0.key, $0.page, $0.page.cost(pageBytes: Int($0.address.length))) })
    }
}
