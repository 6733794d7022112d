import Dispatch
import FolioStorage

// Space, durability and copies: what a user of a persistence asks of the store underneath
// without reaching for the engine (`store`, SPI). Each goes through the same engine call
// the command-line tool uses.

extension Persistence {
    /// Space used by the store: live and dead bytes, the current snapshot file and the
    /// replaced ones still kept for readers in other processes.
    public nonisolated func statistics() throws(FolioError) -> StorageStatistics {
        try FolioError.wrap { () throws(StorageError) in try core.store.statistics() }
    }

    /// Page reads and writes and commit syncs since the store was opened.
    public nonisolated var ioStatistics: IOStatistics { core.store.ioStatistics }

    /// Writes a consistent copy of the newest committed state (or of the state at `token`, a
    /// past commit the store still holds: a point-in-time restore) to `destination` (a path
    /// that does not exist, or an empty directory) while writers go on; the copy holds only
    /// live pages, and no history before the state copied. Works on read-only persistences.
    ///
    /// ```swift
    /// let checkpoint = try persistence.checkpoints().first { $0.name == "before import" }!
    /// try persistence.backup(to: restoredPath, at: checkpoint.token)
    /// ```
    ///
    /// - Throws: `FolioError.storage(.generationUnavailable(requested:oldest:newest:))` if the
    ///   store does not hold `token`'s generation any more.
    @discardableResult
    public nonisolated func backup(
        to destination: String, at token: ObservationToken? = nil,
        progress: (@Sendable (CompactionProgress) -> Void)? = nil
    ) throws(FolioError) -> BackupReport {
        core.store.followIfRootFileChanged()
        return try FolioError.wrap { () throws(StorageError) in
            try core.store.backup(to: destination, at: token?.generation, progress: progress)
        }
    }
}

extension Persistence where Access == ReadWrite {
    /// Makes everything written so far durable: every committed transaction (in grouped
    /// durability, the commits of the current window, by syncing now; in full durability
    /// each already is when it returns) and every value of ``values`` set or removed outside
    /// a transaction (committed first, as ``KeyValueStore/flush()`` does). Inside
    /// ``perform(_:)-9rdbv``, the transaction's own writes are durable when `perform`
    /// returns, not before. Throws the storage error if they cannot be written, and
    /// ``FolioError/cancelled`` if the task is cancelled while it waits for the writer.
    ///
    /// ```swift
    /// try persistence.values.set(true, for: .onboardingDone)  // queued, committed soon
    /// try await persistence.makeDurable()  // on disk now, with every commit
    /// ```
    public nonisolated(nonsending) func makeDurable() async throws(FolioError) {
        try await values.flush()
        // The values' flush syncs only in grouped durability and only when it committed a
        // batch; commits of transactions in the window still need this sync.
        try FolioError.wrap { () throws(StorageError) in try core.store.flush() }
    }

    /// Copies the live records and index entries into a new snapshot file and reclaims the
    /// space of everything replaced since. Transactions go on while it copies (from a
    /// pinned generation, on a thread of its own, not the caller's); they wait only for its
    /// short catch-up at the end, which copies what they changed meanwhile and switches the
    /// store to the new file. Readers go on throughout. Automatic compaction (once the dead
    /// bytes pass the live bytes plus a slack) does the same work in the background.
    ///
    /// Throws ``FolioError/cancelled`` if the task is already cancelled (it compacts
    /// nothing), and `FolioError.storage(.writeTransactionInProgress)` inside one of this
    /// persistence's own write transactions, whose end the catch-up would wait for (inside
    /// ``read(_:)`` it runs: a snapshot holds no writer). `progress`
    /// runs on the compaction's thread; it may start writes (they run beside the copy) but
    /// must not wait for one to commit at `CompactionProgress.switching`, when the
    /// catch-up holds the store alone.
    ///
    /// ```swift
    /// let report = try await persistence.compact()
    /// print("\(report.bytesBefore) → \(report.bytesAfter) bytes")
    /// ```
    @discardableResult
    public nonisolated(nonsending) func compact(
        progress: (@Sendable (CompactionProgress) -> Void)? = nil
    ) async throws(FolioError) -> CompactionReport {
        if Task.isCancelled { throw .cancelled }
        if let context = TransactionContext.current(for: core), case .write = context.source {
            throw .storage(.writeTransactionInProgress)
        }
        let store = core.store
        // The copy reads and writes the whole store: on a thread of Dispatch's, so that it
        // keeps none of the cooperative pool's few threads from the tasks that run beside it.
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<CompactionReport, StorageError>, Never>) in
            DispatchQueue.global(qos: .utility).async {
                continuation.resume(
                    returning: Result { () throws(StorageError) in
                        try store.compactBesideTransactions(progress: progress)
                    })
            }
        }
        do throws(StorageError) {
            return try outcome.get()
        } catch {
            throw .storage(error)
        }
    }
}
