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

    /// Writes a consistent copy of the newest committed state to `destination` (a path that
    /// does not exist, or an empty directory) while writers go on; the copy holds only
    /// live pages. Works on read-only persistences.
    @discardableResult
    public nonisolated func backup(
        to destination: String,
        progress: (@Sendable (CompactionProgress) -> Void)? = nil
    ) throws(FolioError) -> BackupReport {
        try FolioError.wrap { () throws(StorageError) in try core.store.backup(to: destination, progress: progress) }
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
    /// space of everything replaced since. Waits for its turn behind queued write
    /// transactions, as a transaction does (if its task is cancelled while it waits, it
    /// throws ``FolioError/cancelled`` and compacts nothing), and holds it until done:
    /// this persistence's transactions wait for it; readers go on meanwhile. Automatic
    /// compaction (once the dead bytes pass the live bytes plus a slack) does the same work
    /// in the background, and transactions wait only for its short catch-up.
    @discardableResult
    public nonisolated(nonsending) func compact(
        progress: (@Sendable (CompactionProgress) -> Void)? = nil
    ) async throws(FolioError) -> CompactionReport {
        while true {
            do {
                try await writer.acquire()
            } catch {
                throw .cancelled
            }
            let outcome = Result { () throws(StorageError) in try core.store.compact(progress: progress) }
            writer.release()
            do throws(StorageError) {
                return try outcome.get()
            } catch {
                // A transaction that set values waits, still open, for the exclusive turn to
                // commit in (Persistence+Writing.swift): it is next in line; compact after it.
                guard case .writeTransactionInProgress = error else { throw .storage(error) }
                await Task.yield()
            }
        }
    }
}
