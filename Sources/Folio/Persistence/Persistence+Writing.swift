import FolioStorage

// The write path: a new write transaction in the writer slot, its body run, then committed
// and acknowledged once durable; for `perform` (whose body throws anything) and for a
// datastore's own writes (where everything thrown is a `FolioError`).

extension Persistence {
    /// Runs `body` in a new write transaction and commits it; rolls back if it throws.
    /// Throws `CancellationError` if the task is cancelled while it waits for the writer slot.
    nonisolated(nonsending) func performWrite<Result>(
        _ body: nonisolated(nonsending) (TransactionContext) async throws -> Result
    ) async throws -> Result {
        try await writer.acquire()
        let (transaction, context) = try beginInSlot()
        let result: Result
        do {
            result = try await TransactionScope.$current.withValue(context) { try await body(context) }
        } catch {
            abandon(transaction)
            throw error
        }
        try await commit(transaction, context: context)
        return result
    }

    /// Runs `body` in a new write transaction that commits when it returns; rolls back if it
    /// throws. Every step of this path throws `FolioError`; a task cancelled while it waits
    /// for the writer slot throws ``FolioError/cancelled``.
    nonisolated(nonsending) func inNewTransaction<Value>(
        _ body: (WriteTransaction) throws(FolioError) -> Value
    ) async throws(FolioError) -> Value {
        do {
            try await writer.acquire()
        } catch {
            throw .cancelled
        }
        let (transaction, context) = try beginInSlot()
        let outcome = TransactionScope.$current.withValue(context) {
            Swift.Result { () throws(FolioError) -> Value in try body(transaction) }
        }
        let value: Value
        do throws(FolioError) {
            value = try outcome.get()
        } catch {
            abandon(transaction)
            throw error
        }
        try await commit(transaction, context: context)
        return value
    }

    /// Begins a write transaction in the writer slot the caller holds, with the context its
    /// body runs in; gives the slot back if the engine refuses to begin.
    private nonisolated func beginInSlot() throws(FolioError) -> (WriteTransaction, TransactionContext) {
        let transaction: WriteTransaction
        do throws(FolioError) {
            // Values set outside transactions commit first: a transaction sees every value
            // set before it began (KeyValueMemory's ordering argument).
            try commitQueuedValues()
            transaction = try FolioError.wrap { () throws(StorageError) in try core.store.beginWrite() }
        } catch {
            writer.release()
            throw error
        }
        return (transaction, TransactionContext(core: core, source: .write(transaction)))
    }

    /// Rolls back a transaction whose body failed, and gives the slot to the next writer.
    private nonisolated func abandon(_ transaction: WriteTransaction) {
        transaction.rollback()
        writer.release()
    }

    /// Appends the transaction's commit, frees the slot, then returns once the commit is
    /// durable. If the append fails, the transaction is rolled back and keeps nothing.
    private nonisolated(nonsending) func commit(
        _ transaction: WriteTransaction, context: TransactionContext
    ) async throws(FolioError) {
        // Sets of the keys this transaction wrote, made outside it while it ran, lose to it:
        // they leave the queue now, readable until this commit is published (KeyValueMemory).
        let written = context.writtenValues.withLock { $0 }
        let replaced =
            written.isEmpty ? nil : core.values.transactionCommitting(written, generation: transaction.generation)
        let appended: AppendedCommit
        do throws(FolioError) {
            appended = try core.append(transaction)
        } catch {
            if let replaced { _ = core.values.transactionAppended(replaced, as: nil) }
            abandon(transaction)
            throw error
        }
        let retired = replaced.flatMap { core.values.transactionAppended($0, as: appended) }
        core.markReady(context.prepared.withLock { $0 })
        // The slot is free before the sync: the next writer's transaction runs while this
        // one's sync is in flight, and shares the next sync (group commit). Acknowledged,
        // and so returned, only once durable.
        writer.release()
        do throws(FolioError) {
            try await core.acknowledge(appended)
        } catch {
            // The sync failed: the store refuses every later commit, so sets of values must
            // not be accepted into memory any more (they would never be kept).
            if case .storage(let cause) = error { core.values.noteFailure(cause) }
            throw error
        }
        if let retired { core.values.published(retired) }
    }

    /// Appends a commit of the key-value store's queued writes, if any. The caller holds the
    /// writer slot. The commit is published by a task of its own (it is durable no later
    /// than the transaction that follows it).
    nonisolated func commitQueuedValues() throws(FolioError) {
        guard core.values.hasQueued, let batch = try core.values.commitQueued(in: core.store) else { return }
        let memory = core.values
        Task.detached { try? await memory.awaitPublished(batch) }
    }
}
