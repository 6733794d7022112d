/// Progress of a compaction, as reported to its callback.
public enum CompactionProgress: Sendable, Equatable {
    /// Copying live pages: bytes copied so far of about `totalBytes`.
    case copying(bytesCopied: UInt64, totalBytes: UInt64)
    /// The new snapshot file is complete; switching the root to it.
    case switching
    /// Done.
    case complete(CompactionReport)
}

/// What a compaction did.
public struct CompactionReport: Sendable, Equatable {
    /// The generation the compaction created (same contents, new file).
    public var generation: UInt64
    /// Length of the snapshot file before.
    public var bytesBefore: UInt64
    /// Length of the new snapshot file.
    public var bytesAfter: UInt64
    /// Pages copied.
    public var pagesCopied: Int
}

extension Store {
    /// Writes the live pages of the newest generation into a new snapshot file and switches
    /// the root to it; the old file is removed after the retention grace period.
    ///
    /// It streams: memory holds one root-to-leaf path and one write chunk, whatever the
    /// store's size. Read views stay valid throughout (they keep the old file open). Writers
    /// wait: compaction uses the store alone (``withExclusiveUse(_:)``), and throws
    /// `StorageError.writeTransactionInProgress` if a write transaction is active.
    @discardableResult
    public func compact(progress: ((CompactionProgress) -> Void)? = nil) throws(StorageError) -> CompactionReport {
        defer { deliverQueued() }
        return try withExclusiveUse { () throws(StorageError) in try compactHoldingWriter(progress: progress) }
    }

    /// After a commit: compact if the dead bytes pass ``AutoCompaction``'s limit (and no
    /// backoff after a failure holds it back), and remove retired snapshot files whose
    /// grace period is over or that pass the retention limits. Caller has ended its
    /// transaction: the compaction needs the store alone and is skipped (until a later
    /// commit) while another transaction is active.
    ///
    /// Reads only the newest root record (committed length, live bytes) and the writer's
    /// state: no directory listing or catalog scan per commit.
    func compactIfNeeded() {
        defer { removeExpiredSnapshots() }
        guard let auto = options.autoCompaction else { return }
        let (record, backoff) = state.withLock { ($0.tip.record, $0.writer?.compactionBackoff) }
        let dead = record.deadBytes
        guard dead > auto.deadBytesLimit(liveBytes: record.liveBytes) else { return }
        // Invariant: after a failure, no automatic attempt before the dead bytes reach the
        // backoff's mark; a persistent fault (ENOSPC) costs one attempt per doubling margin,
        // not one per commit.
        if let backoff, dead < backoff.retryAtDeadBytes { return }
        do throws(StorageError) {
            // Another transaction is active: not an error, a later commit compacts.
            guard !isInUse else { return }
            _ = try withExclusiveUse { () throws(StorageError) in try compactHoldingWriter(progress: nil) }
            if let backoff {
                options.log("automatic compaction of \(path) succeeded after \(backoff.failures) failed attempts")
            }
        } catch {
            if case .closed = error { return }  // closed meanwhile: nothing to reclaim now
            if case .writeTransactionInProgress = error { return }  // a transaction began meanwhile
            let next = CompactionBackoff.after(failureAt: dead, previous: backoff, step: auto.slackBytes)
            state.withLock { $0.writer?.compactionBackoff = next }
            // Logged once per run of failures; later failures of the run only move the mark.
            if backoff == nil {
                options.log(
                    "automatic compaction of \(path) failed: \(error); retrying once \(next.retryAtDeadBytes - dead) "
                        + "more bytes are dead, the wait doubling after each further failure")
            }
        }
    }

    /// Caller holds the writer slot. Runs in the write critical section, like a commit, so
    /// close waits for it and it never starts on a closed store. Delivers nothing: the
    /// caller calls ``deliverQueued()`` for the commits its flush made durable.
    private func compactHoldingWriter(
        progress: ((CompactionProgress) -> Void)?
    ) throws(StorageError) -> CompactionReport {
        try writeSection.withLock { _ throws(StorageError) -> CompactionReport in
            try checkWritable()
            return try compactInWriteSection(progress: progress)
        }
    }

    private func compactInWriteSection(
        progress: ((CompactionProgress) -> Void)?
    ) throws(StorageError) -> CompactionReport {
        try flushQueuingEvents()
        let base = state.withLock { $0.current }
        // Above every file on disk and every number this writer ever used, so a kept newer
        // file (see retireStaleSnapshots) is never overwritten and no number is reused. A
        // listing that fails stops the compaction: guessing could truncate a kept file.
        let existing = try fileSystem.contentsOfDirectory(layout.snapshots).compactMap(
            StoreLayout.snapshotNumber(fromName:))
        let used = state.withLock { $0.writer?.newestFileNumber ?? 0 }
        let number = max(base.record.snapshotFile, existing.max() ?? 0, used) + 1
        state.withLock { $0.writer?.newestFileNumber = number }
        let newPath = layout.snapshot(number)
        let generation = base.record.generation + 1
        let now = max(Clock.microsecondsSince1970(), base.record.timestamp)
        let handle = try fileSystem.open(newPath, mode: .truncate)
        let newFile = SnapshotFile(number: number, path: newPath, handle: handle)
        let record: RootRecord
        let pagesCopied: Int
        do throws(StorageError) {
            (record, pagesCopied) = try LiveCopy.write(
                base, into: newFile, generation: generation, timestamp: now,
                previous: base.record.location, crashPoint: .compactMidCopy,
                progress: progress)
            try fileSystem.syncDirectory(layout.snapshots)
        } catch {
            // The old file and root are untouched; the half-written new file is abandoned.
            try? fileSystem.remove(newPath)
            throw error
        }
        // The root switch: the new root written into the free slot and synced, after any
        // unsynced slot write (RootSlots.writeDurably), so that a crash leaves either slot
        // naming a durable root; then into the other slot too. With both slots naming the
        // new file, a damaged slot falls back to the same root, and the replaced file is
        // needed by no slot: retention alone decides when it goes (Docs/Format.md §17).
        try rootFileLock.withLock { (slots) throws(StorageError) in
            guard slots != nil else { throw StorageError.closed(path: path) }
            CrashPoint.compactBeforeRootSwitch.reach()
            do throws(StorageError) {
                try slots!.upgradeIfNeeded(to: base.record, in: base.file)
                try slots!.writeDurably(record)
                try slots!.writeDurably(record)
            } catch {
                poison("switching the root to the compacted file failed: \(error)")
                throw error
            }
            CrashPoint.compactAfterRootSwitch.reach()
        }
        let published = CommittedRoot(
            record: record, pages: PageSource(file: newFile, cache: cache, counters: counters))
        let removeAfter = ContinuousClock.now + options.retention.gracePeriod
        // The replaced file's length: its committed bytes and the zeros preallocated past them.
        let retiredBytes = max(base.record.committedLength, base.file.allocatedLength)
        // Before readers can see the new root (Store+Generations.swift), as a commit does.
        reportCreated(generation, changes: nil)
        state.withLock { state in
            state.current = published
            state.writer?.durableRecord = record
            state.writer?.retired.append(
                RetiredSnapshot(
                    number: base.record.snapshotFile, removeAfter: removeAfter,
                    bytes: retiredBytes))
            state.writer?.compactionBackoff = nil  // a success ends any backoff
        }
        counters.recordPagesWritten(pagesCopied, bytes: Int(clamping: record.committedLength) - SnapshotHeader.size)
        removeExpiredSnapshots()
        let report = CompactionReport(
            generation: generation, bytesBefore: base.record.committedLength,
            bytesAfter: record.committedLength, pagesCopied: pagesCopied)
        progress?(.complete(report))
        return report
    }
}
