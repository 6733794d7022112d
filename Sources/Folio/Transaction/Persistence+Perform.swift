extension Persistence where Access == ReadWrite {
    /// Runs `body` as one atomic, serializable transaction over any datastores of this
    /// persistence, and commits it when `body` returns.
    ///
    /// Reads inside see the transaction's own writes; if `body` throws (a unique-index
    /// conflict, or any error of yours), nothing it did is kept.
    ///
    /// Each datastore call inside is atomic: if it throws, it changed nothing, so a caught
    /// error leaves the transaction exactly as before the call (SQLite's statement
    /// rollback). A `perform` inside another joins it as a savepoint: if the inner `body`
    /// throws, its own writes are undone and the outer transaction goes on if it catches
    /// the error. A range read iterates the state as of its start, whatever the loop
    /// writes. Child tasks (`async let`, task groups) share the transaction; their calls
    /// run one at a time, each atomic. An unstructured `Task {}` started inside inherits the
    /// transaction too; its writes after `perform` returned fail with
    /// `StorageError.transactionFinished`. Datastore calls outside any `perform` are each
    /// their own transaction. Transactions run one at a time, in the order they ask.
    @discardableResult
    public nonisolated(nonsending) func perform<Result>(_ body: () async throws -> Result) async throws -> Result {
        if let context = TransactionContext.current(for: core), case .write(let transaction) = context.source {
            let savepoint = try FolioError.wrap { () throws(StorageError) in try transaction.savepoint() }
            do {
                let result = try await body()
                transaction.release(savepoint)
                return result
            } catch {
                transaction.rollback(to: savepoint)
                throw error
            }
        }
        return try await performWrite { _ in try await body() }
    }
}

extension Persistence {
    /// Runs `body` with every read inside it seeing one committed snapshot, however many
    /// reads and datastores it uses (Dflat's `fetchWithinASnapshot`). Writers go on
    /// meanwhile; the snapshot does not see them. Inside a `perform`, it simply joins it.
    public nonisolated(nonsending) func read<Result>(_ body: () async throws -> Result) async throws -> Result {
        if TransactionContext.current(for: core) != nil { return try await body() }
        let view: ReadView
        do throws(StorageError) {
            view = try core.store.read()
        } catch {
            throw FolioError.storage(error)
        }
        let context = TransactionContext(core: core, source: .read(view))
        return try await TransactionScope.$current.withValue(context) { try await body() }
    }
}

extension Persistence where Access == ReadOnly {
    /// A read-only `perform`: every read inside sees one committed snapshot. Same as ``read(_:)``.
    public nonisolated(nonsending) func perform<Result>(_ body: () async throws -> Result) async throws -> Result {
        try await read(body)
    }
}
