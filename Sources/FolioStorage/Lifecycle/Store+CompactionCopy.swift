// Compaction alongside writers (Docs/Durability.md §1.3): copy a pinned generation without
// the writer slot, copy again what changed meanwhile, then catch up to the tip and switch
// the root holding the slot, so that writers pause only for the catch-up.

extension Store {
    /// Background passes at most, before the catch-up: each copies what the commits made
    /// during the one before changed, so the catch-up has less to copy.
    static let compactionBackgroundPasses = 4
    /// A pass that copied fewer bytes than this ends the background passes: copying what
    /// changed during it is short enough to do holding the writer slot.
    static let compactionSmallPass: UInt64 = 256 << 10

    /// Compacts while writers go on, in this process and in others; the caller has this
    /// process's compaction turn (`CompactionTurn`). Returns nil, having done nothing, if
    /// `waitingForOtherProcesses` is nil and another process is compacting, or if
    /// `stillNeeded` says no once this writer has caught up with the other processes' commits
    /// (another process may just have compacted).
    ///
    /// 0. **Exclusion** (the compaction lock, CompactionLock.swift, held to the end): taken
    ///    once, or waiting up to `waitingForOtherProcesses`; then a turn of this writer
    ///    (the store's lock) just long enough to catch up on other processes' commits, so
    ///    the copy starts from the newest commit of any process.
    /// 1. **Copy** (no store lock held): pin the published generation `p`, create file `m`
    ///    with a header naming generation `p + 1`, copy every tree of `p` into it (pages of
    ///    generation `p + 1`). Commits go on into the current file, from this process and
    ///    from others.
    /// 2. **Copy again** (no store lock held), while commits were made during the previous
    ///    pass and it copied more than ``compactionSmallPass``, at most
    ///    ``compactionBackgroundPasses`` passes in all: catch up on other processes' commits
    ///    if the store's lock is free (one try), pin the newer published generation and copy
    ///    its trees, reusing every subtree the previous pass copied that is still the same
    ///    page (``IncrementalCopier``): only what changed is copied.
    /// 3. **Catch up and switch** (a turn: the store's lock, which catches up on every other
    ///    process's commit; then the writer slot and `writeSection`): flush, take the tip
    ///    `t`, copy its trees the same way as generation `t + 1`, write the catalog and the
    ///    compaction commit (previous: `t`'s commit), sync the file and switch the root as
    ///    a compaction always did (the copy was synced before the catch-up, so this sync
    ///    covers only the catch-up's pages). Its contents are exactly `t`'s: every page is
    ///    a copy of one of `t`'s pages, copied now or earlier from the same immutable page.
    ///
    /// Why copying without the store's lock is safe. (a) The pages a pass reads are below
    /// its pinned generation's committed end, and every other writer commits (and spills,
    /// and preallocates zeros) only past the end of the tip it caught up to, which is at or
    /// past every published generation of this writer (this writer's turn, which published
    /// them, ends only once they are durable and named in a slot); committed pages are never
    /// written again. (b) The file they are in stays the current file: no other process can
    /// compact (the compaction lock), so none retires it, and an unlink would not stop this
    /// writer's reads through its open descriptor anyway. (c) File `m` is this process's
    /// alone: every other compaction waits for the compaction lock, and an open acts on
    /// files above the current one only holding it. (d) Reuse across passes compares
    /// addresses in one file, valid only while the source is the same open file with one
    /// history: if a catch-up adopted another file or history (the file object changes,
    /// Store+CatchUp.swift), the earlier copies are not reused and the tip is copied whole.
    func compactAlongsideWriters(
        progress: ((CompactionProgress) -> Void)?, stop: CompactionStop, waitingForOtherProcesses: Duration?,
        stillNeeded: ((RootRecord) -> Bool)? = nil
    ) throws(StorageError) -> CompactionReport? {
        try checkWritable()
        guard let exclusion = try takeCompactionLock(waitingUpTo: waitingForOtherProcesses, stop: stop) else {
            return nil
        }
        // Released after the file is switched to or removed (below), never before.
        defer { exclusion.close() }
        // A short turn: whatever other processes committed or compacted while this writer
        // held no lock is adopted before the copy pins its first generation, so the passes
        // copy the newest state, from the file that stays current until this compaction's
        // own switch.
        _ = try enterTurnWaiting(.compaction, stop: stop)
        leaveCompactionTurn()
        var base = state.withLock { $0.current }
        if let stillNeeded, !stillNeeded(base.record) { return nil }
        let number = try newSnapshotNumber(above: base.record)
        let newPath = layout.snapshot(number)
        let copyGeneration = base.record.generation + 1
        let started = max(Clock.microsecondsSince1970(), base.record.timestamp)
        let handle = try fileSystem.open(newPath, mode: .truncate)
        let newFile = SnapshotFile(number: number, path: newPath, handle: handle)
        // Until the root switch begins, the new file is named by no slot: any failure or a
        // stop abandons it (removed if possible, else reclaimed by the next writer open).
        var switching = false
        do throws(StorageError) {
            try handle.write(
                SnapshotHeader(
                    fileNumber: number, createdGeneration: copyGeneration, timestamp: started,
                    formatVersion: max(base.record.formatVersion, StorageFormat.createdVersion)
                ).encoded(),
                at: 0)
            var appender = PageAppender(
                file: newFile, generation: copyGeneration, start: UInt64(SnapshotHeader.size),
                collectsCacheEntries: false, crashPoint: .compactMidCopy)
            let target = PageSource(file: newFile, cache: cache, counters: counters)
            let checkpoint = { () throws(StorageError) in
                if stop.isStopped { throw StorageError.closed(path: self.path) }
            }
            var images: [[UInt8]: TreeImage] = [:]
            var passes = 0
            while true {
                var copier = IncrementalCopier(
                    source: base.pages, target: target, total: base.record.liveBytes,
                    progress: passes == 0 ? progress : nil, checkpoint: checkpoint)
                copier.syncEvery = 8 << 20
                images = try copyTrees(of: base, earlier: images, copier: &copier, into: &appender).images
                try appender.flush()
                passes += 1
                compactionTurn.passHook.withLock { $0 }?(passes)
                try catchUpIfLockIsFree()
                let newer = state.withLock { $0.current }
                guard newer.record.generation != base.record.generation, passes < Self.compactionBackgroundPasses,
                    copier.copiedBytes >= Self.compactionSmallPass
                else { break }
                // Reuse compares addresses: only within one open file with one history.
                if newer.file !== base.file { images = [:] }
                base = newer
            }
            // The copy made durable, with its directory entry, before the catch-up: the
            // catch-up's sync then covers only the pages it writes, not the whole store.
            try handle.sync()
            try fileSystem.syncDirectory(layout.snapshots)
            CrashPoint.compactBeforeCatchUp.reach()
            let (copiedFrom, pagesBefore) = (base.file, appender.pageCount)
            let copied = images
            let report: CompactionReport
            do {
                // The turn: the store's lock, and with it every commit another process made
                // during the copy, adopted before the tip is taken; held until the root
                // switch is published.
                _ = try enterTurnWaiting(.compaction, stop: stop)
                defer { leaveCompactionTurn() }
                report = try withWritersExcluded(stop: stop) { () throws(StorageError) -> CompactionReport in
                    try writeSection.withLock { _ throws(StorageError) -> CompactionReport in
                        try checkWritable()
                        try flushQueuingEvents()
                        let tip = state.withLock { $0.current }
                        var catchUp = PageAppender(
                            file: newFile, generation: tip.record.generation + 1, start: appender.position,
                            collectsCacheEntries: false, crashPoint: .compactMidCopy)
                        var copier = IncrementalCopier(
                            source: tip.pages, target: target, total: tip.record.liveBytes, progress: nil,
                            checkpoint: checkpoint)
                        let earlier = tip.file === copiedFrom ? copied : [:]
                        let trees = try copyTrees(of: tip, earlier: earlier, copier: &copier, into: &catchUp)
                        let record = try writeCatalogAndCommit(
                            trees.descriptors, after: tip, into: &catchUp, progress: progress)
                        switching = true
                        try switchRoot(to: record, replacing: tip)
                        let pages = pagesBefore + catchUp.pageCount
                        publishCompaction(record, file: newFile, replacing: tip, pagesWritten: pages)
                        return CompactionReport(
                            generation: record.generation, bytesBefore: tip.record.committedLength,
                            bytesAfter: record.committedLength, pagesCopied: pages)
                    }
                }
            }
            // After the turn (unlinking the replaced file, the whole store, takes the file
            // system a while, and no writer of any process need wait for it), still holding
            // the compaction lock. Safe without the store's lock: the file is no longer
            // current, so no commit of any process writes it; readers and writers that still
            // hold it read through their open descriptors; the retired list it is taken
            // from changes only under `state`, so a commit's own call removes nothing twice;
            // and a removal another process makes of it too finds it gone, which is ignored.
            removeExpiredSnapshots()
            progress?(.complete(report))
            return report
        } catch {
            // The old file and root are untouched; the half-written new file is abandoned
            // (still holding the compaction lock: no other process uses its number yet).
            if !switching { try? fileSystem.remove(newPath) }
            throw error
        }
    }

    /// Between background passes: one try of a turn, which catches up on what other
    /// processes committed since, so that the next pass copies their changes too rather
    /// than leaving them all to the catch-up. If another process is in its turn, nothing:
    /// the catch-up's turn will adopt them.
    private func catchUpIfLockIsFree() throws(StorageError) {
        if try enterTurn(.compaction) != nil { leaveCompactionTurn() }
    }

    /// A file number above every file on disk and every number this writer ever used, so a
    /// kept newer file (see retireStaleSnapshots) is never overwritten and no number is
    /// reused. A listing that fails stops the compaction: guessing could truncate a kept file.
    private func newSnapshotNumber(above record: RootRecord) throws(StorageError) -> UInt64 {
        let existing = try fileSystem.contentsOfDirectory(layout.snapshots).compactMap(
            StoreLayout.snapshotNumber(fromName:))
        return state.withLock { state in
            let number = max(record.snapshotFile, existing.max() ?? 0, state.writer?.newestFileNumber ?? 0) + 1
            state.writer?.newestFileNumber = number
            return number
        }
    }

    /// Copies every tree of `root`, reusing the copies in `earlier` (by tree name's bytes).
    private func copyTrees(
        of root: CommittedRoot, earlier: [[UInt8]: TreeImage], copier: inout IncrementalCopier,
        into appender: inout PageAppender
    ) throws(StorageError) -> (images: [[UInt8]: TreeImage], descriptors: [(name: String, descriptor: TreeDescriptor)])
    {
        var images: [[UInt8]: TreeImage] = [:]
        var descriptors: [(name: String, descriptor: TreeDescriptor)] = []
        for (name, descriptor) in try root.allDescriptors() {
            let key = Array(name.utf8)
            let copy = try copier.copyTree(
                root: descriptor.root, depth: descriptor.depth, earlier: earlier[key], into: &appender)
            images[key] = TreeImage(name: name, source: descriptor.root, copy: copy, depth: descriptor.depth)
            // Every copied page is as long as its source (IncrementalCopier.checkedLength), so
            // the copy's bytes are the source tree's.
            descriptors.append(
                (
                    name,
                    TreeDescriptor(
                        root: copy, depth: descriptor.depth, count: descriptor.count, bytes: descriptor.bytes)
                ))
        }
        return (images, descriptors)
    }

    /// Writes the catalog of `descriptors` and the compaction commit after `tip` (kind
    /// compaction, empty change record, previous: the tip's commit), flushes and syncs the
    /// file. Returns the root record naming it.
    private func writeCatalogAndCommit(
        _ descriptors: [(name: String, descriptor: TreeDescriptor)], after tip: CommittedRoot,
        into appender: inout PageAppender, progress: ((CompactionProgress) -> Void)?
    ) throws(StorageError) -> RootRecord {
        let generation = tip.record.generation + 1
        let timestamp = max(Clock.microsecondsSince1970(), tip.record.timestamp)
        let catalog = TreeState(name: "", descriptor: nil)
        let catalogEditor = TreeEditor(reader: tip.reader)
        for (name, descriptor) in descriptors {
            _ = try catalogEditor.put(Array(name.utf8), .inline(descriptor.encoded()[...]), in: catalog)
        }
        let catalogStart = appender.bytesAppended
        let catalogRoot = try appender.writeTree(catalog.root)
        let treeBytes = descriptors.reduce(UInt64(0)) { $0 + $1.descriptor.bytes }
        let commit = CommitRecord(
            generation: generation, timestamp: timestamp, kind: .compaction, catalogRoot: catalogRoot,
            liveBytes: 0, previous: tip.record.location, changes: ChangeRecord())
        // Live: the trees, the catalog and the commit page; pages of earlier passes that the
        // catch-up replaced are dead bytes of the new file.
        let (commitPage, liveBytes, chain) = appender.appendCommit(
            commit, liveBytesBeforePage: treeBytes + appender.bytesAppended - catalogStart)
        try appender.flush()
        progress?(.switching)
        try appender.file.handle.sync()
        return RootRecord(
            generation: generation, snapshotFile: appender.file.number, committedLength: commitPage.end,
            commitPage: commitPage, catalogRoot: catalogRoot, liveBytes: liveBytes, timestamp: timestamp,
            previous: tip.record.location, chain: chain,
            formatVersion: StorageFormat.version(after: tip.record.formatVersion, recording: commit.changes))
    }

    /// The root switch: the new root written into the free slot and synced, after any
    /// unsynced slot write (RootSlots.writeDurably), so that a crash leaves either slot
    /// naming a durable root; then into the other slot too. With both slots naming the new
    /// file, a damaged slot falls back to the same root, and the replaced file is needed by
    /// no slot: retention alone decides when it goes (Docs/Format.md §17).
    private func switchRoot(to record: RootRecord, replacing tip: CommittedRoot) throws(StorageError) {
        try rootFileLock.withLock { (slots) throws(StorageError) in
            guard slots != nil else { throw StorageError.closed(path: path) }
            CrashPoint.compactBeforeRootSwitch.reach()
            do throws(StorageError) {
                try slots!.upgradeIfNeeded(to: tip.record, in: tip.file)
                try slots!.writeDurably(record)
                try slots!.writeDurably(record)
            } catch {
                poison("switching the root to the compacted file failed: \(error)")
                throw error
            }
            CrashPoint.compactAfterRootSwitch.reach()
        }
    }

    /// Publishes the compacted root and retires the replaced file. Caller holds
    /// `writeSection` and the writer slot.
    private func publishCompaction(
        _ record: RootRecord, file: SnapshotFile, replacing tip: CommittedRoot, pagesWritten: Int
    ) {
        let published = CommittedRoot(
            record: record, pages: PageSource(file: file, cache: cache, counters: counters))
        let removeAfter = ContinuousClock.now + options.retention.gracePeriod
        // The replaced file's length: its committed bytes and the zeros preallocated past them.
        let retiredBytes = max(tip.record.committedLength, tip.file.allocatedLength)
        // Before readers can see the new root (Store+Generations.swift), as a commit does.
        reportCreated(record.generation, changes: nil)
        past.withLock { $0.follow(compaction: published, of: tip) }
        state.withLock { state in
            state.current = published
            state.writer?.durableRecord = record
            state.writer?.retired.append(
                RetiredSnapshot(number: tip.record.snapshotFile, removeAfter: removeAfter, bytes: retiredBytes))
            state.writer?.compactionBackoff = nil  // a success ends any backoff
        }
        counters.recordPagesWritten(
            pagesWritten, bytes: Int(clamping: record.committedLength) - SnapshotHeader.size)
    }
}
