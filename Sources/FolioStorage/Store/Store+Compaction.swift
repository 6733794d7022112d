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
    /// wait: compaction uses the writer slot, and throws
    /// ``StorageError/writeTransactionInProgress`` if a transaction holds it.
    @discardableResult
    public func compact(progress: ((CompactionProgress) -> Void)? = nil) throws(StorageError) -> CompactionReport {
        try state.withLock { (state) throws(StorageError) in
            if state.closed { throw .closed(path: path) }
            guard var writer = state.writer else { throw .readOnly(path: path) }
            if let cause = writer.poisoned { throw .needsReopen(path: path, cause: cause) }
            if writer.transactionActive { throw .writeTransactionInProgress }
            writer.transactionActive = true
            state.writer = writer
        }
        defer {
            endTransaction()
            deliverQueued()
        }
        return try compactHoldingWriter(progress: progress)
    }

    /// After a commit: compact if the dead bytes pass the automatic thresholds, and remove
    /// retired snapshot files whose grace period is over.
    func compactIfNeeded() {
        defer { removeExpiredSnapshots() }
        guard let auto = options.autoCompaction, let statistics = try? statistics() else { return }
        let dead = statistics.deadBytes
        guard dead >= auto.minimumDeadBytes, Double(dead) >= auto.deadFraction * Double(statistics.currentFileBytes) else { return }
        do throws(StorageError) {
            _ = try compactHoldingWriter(progress: nil)
        } catch {
            if case .closed = error { return }  // closed meanwhile: nothing to reclaim now
            options.log("automatic compaction of \(path) failed: \(error)")
        }
    }

    /// Caller holds the writer slot. Runs in the write critical section, like a commit, so
    /// close waits for it and it never starts on a closed store. Delivers nothing: the
    /// caller calls ``deliverQueued()`` for the commits its flush made durable.
    private func compactHoldingWriter(progress: ((CompactionProgress) -> Void)?) throws(StorageError) -> CompactionReport {
        try writeSection.withLock { _ throws(StorageError) -> CompactionReport in
            try checkWritable()
            return try compactInWriteSection(progress: progress)
        }
    }

    private func compactInWriteSection(progress: ((CompactionProgress) -> Void)?) throws(StorageError) -> CompactionReport {
        try flushHoldingWriteSection()
        let base = state.withLock { $0.current }
        // Above every file on disk and every number this writer ever used, so a kept newer
        // file (see retireStaleSnapshots) is never overwritten and no number is reused. A
        // listing that fails stops the compaction: guessing could truncate a kept file.
        let existing = try fileSystem.contentsOfDirectory(layout.snapshots).compactMap(StoreLayout.snapshotNumber(fromName:))
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
            (record, pagesCopied) = try LiveCopy.write(base, into: newFile, generation: generation, timestamp: now,
                                                       previous: base.record.location, crashPoint: .compactMidCopy,
                                                       progress: progress)
            try fileSystem.syncDirectory(layout.snapshots)
        } catch {
            // The old file and root are untouched; the half-written new file is abandoned.
            try? fileSystem.remove(newPath)
            throw error
        }
        try rootFileLock.withLock { _ throws(StorageError) in
            try replaceRoot(record, previous: base.record, crashPoints: (.compactBeforeRootRename, .compactAfterRootRename))
        }
        let published = CommittedRoot(record: record, pages: PageSource(file: newFile, cache: cache, counters: counters))
        let removeAfter = ContinuousClock.now + options.retention.gracePeriod
        state.withLock { state in
            state.current = published
            state.writer?.durableRecord = record
            state.writer?.retired.append((base.record.snapshotFile, removeAfter))
        }
        counters.recordPagesWritten(pagesCopied, bytes: Int(clamping: record.committedLength) - SnapshotHeader.size)
        removeExpiredSnapshots()
        let report = CompactionReport(generation: generation, bytesBefore: base.record.committedLength,
                                      bytesAfter: record.committedLength, pagesCopied: pagesCopied)
        progress?(.complete(report))
        return report
    }
}

