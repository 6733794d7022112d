// Exclusive use of a writable store: what compaction needs, since it replaces the snapshot
// file every active transaction's pages live in.
extension Store {
    /// Runs `body` with no write transaction active and none able to begin: while it runs,
    /// ``beginWrite()`` throws `StorageError.writeTransactionInProgress`. Never waits:
    /// throws `StorageError.writeTransactionInProgress` itself if a transaction is active
    /// or another caller uses the store alone (the `Folio` layer waits for its turn
    /// instead, in its own queue). Throws `closed`, `readOnly` or `needsReopen` as
    /// ``beginWrite()`` does.
    ///
    /// Why compaction needs it: a transaction's trees reference pages of the snapshot file
    /// of its base, and its commit appends to that file; a compaction switches to a new
    /// file, so no transaction may span the switch.
    func withExclusiveUse<Result>(_ body: () throws(StorageError) -> Result) throws(StorageError) -> Result {
        try state.withLock { (state) throws(StorageError) in
            if state.closed { throw .closed(path: path) }
            guard var writer = state.writer else { throw .readOnly(path: path) }
            if let cause = writer.poisoned { throw .needsReopen(path: path, cause: cause) }
            if writer.exclusive || writer.activeTransactions > 0 { throw .writeTransactionInProgress }
            writer.exclusive = true
            state.writer = writer
        }
        defer { state.withLock { $0.writer?.exclusive = false } }
        return try body()
    }

    /// Whether a write transaction is active or the store is in exclusive use (for tests
    /// and for callers that skip optional work rather than fail).
    var isInUse: Bool {
        state.withLock { state in
            guard let writer = state.writer else { return false }
            return writer.exclusive || writer.activeTransactions > 0
        }
    }
}
