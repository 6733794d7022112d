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
    /// Makes every commit so far durable: a no-op in full durability (each transaction is
    /// durable when it returns); in grouped durability, the commits of the current window.
    /// Values of ``values`` set outside transactions and not yet committed are not among
    /// them: `values.flush()` commits and syncs those.
    public nonisolated func flush() throws(FolioError) {
        try FolioError.wrap { () throws(StorageError) in try core.store.flush() }
    }

    /// Copies the live records and index entries into a new snapshot file and reclaims the
    /// space of everything replaced since (automatic compaction does the same once the
    /// dead bytes pass the live bytes plus a slack). Waits for its turn behind queued write
    /// transactions, as a transaction does (if its task is cancelled while it waits, it
    /// throws ``FolioError/cancelled`` and compacts nothing); readers go on meanwhile.
    @discardableResult
    public nonisolated(nonsending) func compact(
        progress: (@Sendable (CompactionProgress) -> Void)? = nil
    ) async throws(FolioError) -> CompactionReport {
        do {
            try await writer.acquire()
        } catch {
            throw .cancelled
        }
        defer { writer.release() }
        return try FolioError.wrap { () throws(StorageError) in try core.store.compact(progress: progress) }
    }
}
