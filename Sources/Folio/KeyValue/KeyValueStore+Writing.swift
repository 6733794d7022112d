import FolioStorage

/// Sets, removals and flushing. A write inside ``Persistence/perform(_:)-9rdbv`` joins the
/// transaction; outside, it is visible to this process at once and committed in the
/// background (see ``KeyValueStore`` and `KeyValueMemory` for the ordering argument).
extension KeyValueStore where Access == ReadWrite {
    /// Stores `value` under `key`. Throws ``FolioError/valueEncodingFailed(key:reason:)`` (and
    /// stores nothing) if it does not encode, ``FolioError/keyTooLong(key:length:maximum:)``,
    /// and ``FolioError/writeInReadOnlySnapshot`` inside ``Persistence/read(_:)``.
    ///
    /// Outside a transaction it returns at once, the value visible to this process's reads;
    /// it is durable once a later ``flush()`` returns (or when the background commit that
    /// takes it is: within milliseconds, with the persistence's durability).
    ///
    /// ```swift
    /// try persistence.values.set(Date(), for: .lastSync)  // visible at once, committed within milliseconds
    /// ```
    public func set<Value>(_ value: Value, for key: ValueKey<Value>) throws(FolioError) {
        let keyBytes = try KeyValueLayout.key(key.name)
        let bytes = try KeyValueLayout.encode(value, key: key.name)
        try write(ValueSlot(bytes: bytes, decoded: value), key: keyBytes)
    }

    /// Removes the value stored under `key`, if any: reads give the key's default again.
    public func removeValue(for key: ValueKeys) throws(FolioError) {
        try write(.absent, key: try KeyValueLayout.key(key.name))
    }

    /// Returns once every value set or removed before the call, outside transactions, is
    /// committed and durable (in grouped durability, by syncing now). Throws the storage
    /// error if they cannot be written; they stay visible and queued, and the next flush
    /// tries again. Inside ``Persistence/perform(_:)-9rdbv`` it waits for the values queued
    /// before the transaction began; the transaction's own writes are durable when
    /// `perform` returns. Throws ``FolioError/cancelled`` if the task is cancelled while it
    /// waits for the writer.
    public func flush() async throws(FolioError) {
        if let context = TransactionContext.current(for: core), case .write = context.source {
            // Inside `perform` this task holds a writer's turn: what was queued when the
            // transaction began is already appended (`begin(in:)`); make that durable, and
            // leave the transaction's own writes to its commit.
            if case .grouped = core.durability {
                try FolioError.wrap { () throws(StorageError) in try core.store.flush() }
            }
            return try await memory.awaitLastCommit()
        }
        do {
            try await persistence.writer.acquire()
        } catch {
            throw .cancelled
        }
        let batch: KeyValueMemory.Batch?
        do throws(FolioError) {
            batch = try await memory.commitQueued(in: core.store)
        } catch {
            persistence.writer.release()
            throw error
        }
        persistence.writer.release()
        if case .grouped = core.durability {
            try FolioError.wrap { () throws(StorageError) in try core.store.flush() }
        }
        if let batch { try await memory.awaitPublished(batch) }
        try await memory.awaitLastCommit()
    }

    // MARK: Machinery

    private func write(_ slot: ValueSlot, key: [UInt8]) throws(FolioError) {
        if let context = TransactionContext.current(for: core) {
            guard case .write(let transaction) = context.source else { throw .writeInReadOnlySnapshot }
            try context.statement(transaction) { () throws(FolioError) in
                try FolioError.wrap { () throws(StorageError) in
                    // Blind: a set does not read the tree, so a transaction that sets values
                    // without reading them never conflicts over them (the last commit wins).
                    if let bytes = slot.bytes {
                        try transaction.putBlind(bytes, for: key, in: KeyValueLayout.tree)
                    } else {
                        try transaction.removeBlind(key, from: KeyValueLayout.tree)
                    }
                }
            }
            context.writtenValues.withLock { _ = $0.insert(HashedKey(key)) }
            return
        }
        // A closed persistence refuses writes as every other write does.
        guard core.store.openGeneration != nil else { throw .storage(.closed(path: core.store.path)) }
        if try memory.enqueue(key, slot, path: core.store.path) {
            let store = self
            Task.detached { await store.commitInBackground() }
        }
    }

    /// Commits whatever is queued when the writer slot comes free. A failure leaves the
    /// writes queued (`flush` retries and reports it).
    func commitInBackground() async {
        do {
            // A transaction's begin, a flush or an earlier background commit may have
            // committed the queue while this task waited to run: then the turn is not taken
            // (decided in the queue's order, so nothing can have been queued unseen).
            guard try await persistence.writer.acquire(ifStill: { memory.backgroundCommitIsNeeded() }) else { return }
        } catch {
            return  // not cancelled (a detached task nobody holds); the next set or flush commits
        }
        let batch = try? await memory.commitQueued(in: core.store)
        persistence.writer.release()
        if let batch = batch ?? nil { try? await memory.awaitPublished(batch) }
    }
}
