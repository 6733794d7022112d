import FolioStorage

// The write path: a new write transaction in the writer slot, its body run, then committed
// and acknowledged once durable; for `perform` (whose body throws anything) and for a
// datastore's own writes (where everything thrown is a `FolioError`).

extension Persistence {
    /// Runs `body` in a new write transaction and commits it; rolls back if it throws.
    /// Throws `CancellationError` if the task is cancelled while it waits for the writer slot.
    nonisolated(nonsending) func performWrite<Result>(_ body: nonisolated(nonsending) (TransactionContext) async throws -> Result) async throws -> Result {
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
    nonisolated(nonsending) func inNewTransaction<Value>(_ body: (WriteTransaction) throws(FolioError) -> Value) async throws(FolioError) -> Value {
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
        do throws(StorageError) {
            transaction = try core.store.beginWrite()
        } catch {
            writer.release()
            throw .storage(error)
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
    private nonisolated(nonsending) func commit(_ transaction: WriteTransaction, context: TransactionContext) async throws(FolioError) {
        let appended: AppendedCommit
        do throws(FolioError) {
            appended = try core.append(transaction)
        } catch {
            abandon(transaction)
            throw error
        }
        core.markReady(context.prepared.withLock { $0 })
        // The slot is free before the sync: the next writer's transaction runs while this
        // one's sync is in flight, and shares the next sync (group commit). Acknowledged,
        // and so returned, only once durable.
        writer.release()
        try await core.acknowledge(appended)
    }
}
