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
        defer { endTransaction() }
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
            options.log("automatic compaction of \(path) failed: \(error)")
        }
    }

    private func compactHoldingWriter(progress: ((CompactionProgress) -> Void)?) throws(StorageError) -> CompactionReport {
        try flush()
        let base = state.withLock { $0.current }
        // Above every file on disk, so a kept newer file (see retireStaleSnapshots) is never
        // overwritten.
        let existing = (try? fileSystem.contentsOfDirectory(layout.snapshots))?.compactMap(StoreLayout.snapshotNumber(fromName:)) ?? []
        let number = max(base.record.snapshotFile, existing.max() ?? 0) + 1
        let newPath = layout.snapshot(number)
        let generation = base.record.generation + 1
        let now = max(Clock.microsecondsSince1970(), base.record.timestamp)
        let handle = try fileSystem.open(newPath, mode: .truncate)
        let newFile = SnapshotFile(number: number, path: newPath, handle: handle)
        let record: RootRecord
        let pagesCopied: Int
        do throws(StorageError) {
            try handle.write(SnapshotHeader(fileNumber: number, createdGeneration: generation, timestamp: now).encoded(), at: 0)
            var appender = PageAppender(file: newFile, generation: generation, start: UInt64(SnapshotHeader.size),
                                        collectsCacheEntries: false, crashPoint: .compactMidCopy)
            var copier = PageCopier(source: base.pages, total: base.record.liveBytes, progress: progress)
            let catalog = TreeState(name: "", descriptor: nil)
            let catalogEditor = TreeEditor(reader: base.reader)
            for (name, descriptor) in try base.allDescriptors() {
                let before = appender.bytesAppended
                let root = descriptor.root.isNone ? PageAddress.none : try copier.copy(descriptor.root, into: &appender)
                let copied = TreeDescriptor(root: root, depth: descriptor.depth, count: descriptor.count,
                                            bytes: appender.bytesAppended - before)
                _ = try catalogEditor.put(Array(name.utf8), .inline(copied.encoded()), in: catalog)
            }
            let catalogRoot = try appender.writeTree(catalog.root)
            let commit = CommitRecord(generation: generation, timestamp: now, kind: .compaction, catalogRoot: catalogRoot,
                                      liveBytes: 0, previous: base.record.location, changes: ChangeRecord())
            let (commitPage, liveBytes) = appender.appendCommit(commit, liveBytesBeforePage: appender.bytesAppended)
            try appender.flush()
            pagesCopied = appender.pageCount
            progress?(.switching)
            try handle.sync()
            try fileSystem.syncDirectory(layout.snapshots)
            record = RootRecord(generation: generation, snapshotFile: number, committedLength: commitPage.end,
                                commitPage: commitPage, catalogRoot: catalogRoot, liveBytes: liveBytes, timestamp: now,
                                previous: base.record.location)
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
        counters.recordPagesWritten(pagesCopied, bytes: Int(record.committedLength) - SnapshotHeader.size)
        removeExpiredSnapshots()
        let report = CompactionReport(generation: generation, bytesBefore: base.record.committedLength,
                                      bytesAfter: record.committedLength, pagesCopied: pagesCopied)
        progress?(.complete(report))
        return report
    }
}

/// Copies the pages of a tree from one snapshot file to another, children first.
private struct PageCopier {
    let source: PageSource
    let total: UInt64
    let progress: ((CompactionProgress) -> Void)?
    var copied: UInt64 = 0
    var reported: UInt64 = 0

    mutating func copy(_ address: PageAddress, into appender: inout PageAppender) throws(StorageError) -> PageAddress {
        let result: PageAddress
        switch try source.nodeBypassingCache(at: address) {
        case .leaf(var leaf):
            for index in leaf.values.indices {
                if case .overflow(let overflow) = leaf.values[index] {
                    let value = try source.overflowBypassingCache(at: overflow)
                    leaf.values[index] = .overflow(try appender.appendOverflow(value))
                    advance(UInt64(overflow.length))
                }
            }
            result = try appender.appendLeaf(leaf)
        case .branch(var branch):
            for index in branch.children.indices {
                branch.children[index] = try copy(branch.children[index], into: &appender)
            }
            result = try appender.appendBranch(branch)
        }
        advance(UInt64(address.length))
        return result
    }

    private mutating func advance(_ bytes: UInt64) {
        copied += bytes
        if let progress, copied - reported >= 1 << 20 {
            reported = copied
            progress(.copying(bytesCopied: copied, totalBytes: total))
        }
    }
}
