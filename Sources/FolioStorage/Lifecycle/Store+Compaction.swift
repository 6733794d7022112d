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
    /// Writers go on meanwhile, in this process and in others: the copy is made from a
    /// pinned generation without the writer slot and without the store's lock, and only
    /// the catch-up (copying what the commits made during the copy changed, then switching
    /// the root) holds them, waiting for a transaction that began during the copy to end
    /// and making ``beginWrite()`` wait while it runs (Docs/Durability.md §1.3). The store's
    /// lock (a turn, Store+WriterTurns.swift) is taken twice, each time as ``beginWrite()``
    /// takes it: briefly before the copy, to start from other processes' newest commit,
    /// and for the catch-up and switch, so other processes' writes wait only for those
    /// (either may throw `StorageError.lockedByAnotherWriter(path:)` after the busy timeout).
    /// One process compacts a store at a time (the compaction lock, `compaction.lock`,
    /// Docs/Durability.md §1.6): while another process compacts, this waits up to the busy
    /// timeout, then throws `StorageError.lockedByAnotherWriter(path:)` naming
    /// `compaction.lock` (an automatic compaction skips instead).
    /// Throws `StorageError.writeTransactionInProgress` if a write transaction is active
    /// when it is called: a caller holding one would otherwise wait for itself. If a
    /// compaction is already running (an automatic one), waits for it to finish first.
    /// `progress` may write during `.copying` (that is what the catch-up is for), but must not
    /// begin a write transaction at `.switching`: the catch-up holds the store alone then,
    /// and the transaction would wait for it.
    ///
    /// It streams: memory holds one root-to-leaf path and one write chunk, whatever the
    /// store's size. Read views stay valid throughout (they keep the old file open).
    @discardableResult
    public func compact(progress: ((CompactionProgress) -> Void)? = nil) throws(StorageError) -> CompactionReport {
        try compact(progress: progress, refusingActiveTransactions: true)
    }

    /// ``compact(progress:)`` for a caller that knows it holds no write transaction of this
    /// store (Folio's `Persistence.compact`, which checks its task's): transactions active
    /// when it is called do not refuse it. They run on while it copies, and its catch-up
    /// waits for them to end, as it waits for those that begin during the copy.
    package func compactBesideTransactions(
        progress: ((CompactionProgress) -> Void)? = nil
    ) throws(StorageError) -> CompactionReport {
        try compact(progress: progress, refusingActiveTransactions: false)
    }

    private func compact(
        progress: ((CompactionProgress) -> Void)?, refusingActiveTransactions: Bool
    ) throws(StorageError) -> CompactionReport {
        try state.withLock { (state) throws(StorageError) in
            if state.closed { throw .closed(path: path) }
            guard let writer = state.writer else { throw .readOnly(path: path) }
            if let cause = writer.poisoned { throw .needsReopen(path: path, cause: cause) }
            if refusingActiveTransactions && writer.activeTransactions > 0 { throw .writeTransactionInProgress }
        }
        defer { deliverQueued() }
        return try compactionTurn.runHere(path: path) { (stop) throws(StorageError) -> CompactionReport in
            let report = try compactAlongsideWriters(
                progress: progress, stop: stop, waitingForOtherProcesses: options.busyTimeout)
            // Waiting, it returns a report or throws (nil only when told not to wait).
            guard let report else { throw .lockedByAnotherWriter(path: layout.compactionLock) }
            return report
        }
    }

    /// After a commit: start an automatic compaction in the background if the dead bytes
    /// pass ``AutoCompaction``'s limit (and no backoff after a failure holds it back, and
    /// none runs already), and remove retired snapshot files whose grace period is over or
    /// that pass the retention limits. Called by a committing transaction.
    ///
    /// Reads only the newest root record (committed length, live bytes) and the writer's
    /// state: no directory listing or catalog scan per commit. The commit that crosses the
    /// limit does not wait for the compaction: it runs on a worker thread of its own, and
    /// commits go on while it copies.
    func startCompactionIfNeeded() {
        defer { removeExpiredSnapshots() }
        guard let auto = options.autoCompaction else { return }
        let (record, backoff, skipped) = state.withLock {
            ($0.tip.record, $0.writer?.compactionBackoff, $0.writer?.compactionSkipped)
        }
        let dead = record.deadBytes
        guard dead > auto.deadBytesLimit(liveBytes: record.liveBytes) else { return }
        // Another process was compacting this file at the last attempt: its compaction takes
        // these dead bytes away, so no attempt per commit meanwhile.
        if let skipped, skipped.file == record.snapshotFile, dead < skipped.retryAtDeadBytes { return }
        // Invariant: after a failure, no automatic attempt before the dead bytes reach the
        // backoff's mark; a persistent fault (ENOSPC) costs one attempt per doubling margin,
        // not one per commit.
        if let backoff, dead < backoff.retryAtDeadBytes { return }
        let file = record.snapshotFile
        _ = compactionTurn.startInBackground { [self] stop in
            compactAutomatically(
                deadBytes: dead, file: file, backoff: backoff, step: auto.slackBytes, stop: stop)
        }
    }

    /// Waits until no compaction runs (an automatic one started by a commit has finished).
    package func waitForCompaction() {
        compactionTurn.waitUntilIdle()
    }

    /// Whether `close()` has begun stopping compactions (none starts any more): for tests of
    /// a compaction stopped by close.
    package var isStoppingCompactions: Bool { compactionTurn.isClosing }

    /// Sets what runs after each background pass of a compaction (nil: nothing), on the
    /// compaction's thread, with no lock and not the writer slot held: tests and the
    /// torture tool commit there, so that commits land between the copy and the catch-up.
    package func onCompactionPass(_ hook: (@Sendable (Int) -> Void)?) {
        compactionTurn.passHook.withLock { $0 = hook }
    }

    /// The automatic compaction, on its worker thread: on failure, back off (see
    /// ``CompactionBackoff``) and log once per run of failures.
    private func compactAutomatically(
        deadBytes dead: UInt64, file: UInt64, backoff: CompactionBackoff?, step: UInt64, stop: CompactionStop
    ) {
        defer { deliverQueued() }
        do throws(StorageError) {
            // Skipped, not waited for, while another process compacts (its compaction takes
            // the dead bytes away too), and skipped once caught up if another process has
            // compacted since the commit that started this one (the dead bytes are gone).
            // Not the dead bytes themselves: the commit that crossed the limit may not be
            // published yet when this catches up.
            let report = try compactAlongsideWriters(
                progress: nil, stop: stop, waitingForOtherProcesses: nil,
                stillNeeded: { $0.snapshotFile == file })
            if report != nil, let backoff {
                options.log("automatic compaction of \(path) succeeded after \(backoff.failures) failed attempts")
            }
            let margin = max(step, 1 << 20)
            let retry = dead.addingReportingOverflow(margin)
            state.withLock { state in
                state.writer?.compactionSkipped =
                    report == nil ? (file, retry.overflow ? .max : retry.partialValue) : nil
            }
        } catch {
            if case .closed = error { return }  // closed meanwhile: nothing to reclaim now
            let next = CompactionBackoff.after(failureAt: dead, previous: backoff, step: step)
            state.withLock { $0.writer?.compactionBackoff = next }
            // Logged once per run of failures; later failures of the run only move the mark.
            if backoff == nil {
                options.log(
                    "automatic compaction of \(path) failed: \(error); retrying once \(next.retryAtDeadBytes - dead) "
                        + "more bytes are dead, the wait doubling after each further failure")
            }
        }
    }
}
