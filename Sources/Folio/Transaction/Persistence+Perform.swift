import FolioStorage
// Transactions as users write them: `perform` (a write transaction, or a savepoint when
// nested), `read` (one pinned snapshot), and the read-only persistence's `perform`.
extension Persistence where Access == ReadWrite {
    /// Runs `body` as one atomic, serializable transaction over any datastores of this
    /// persistence, and commits it when `body` returns.
    ///
    /// Reads inside see the transaction's own writes; if `body` throws (a unique-index
    /// conflict, or any error of yours), nothing it did is kept.
    ///
    /// ```swift
    /// try await persistence.perform {
    ///     try await authors.persist(author)
    ///     try await books.persist(book)  // a unique-index conflict here undoes both
    /// }
    /// ```
    ///
    /// Each datastore call inside is atomic: if it throws, it changed nothing, so a caught
    /// error leaves the transaction exactly as before the call (SQLite's statement
    /// rollback). One exception, as in SQLite: a page that cannot be read in the middle of
    /// an edit (an I/O error, corruption) aborts the transaction (later calls fail with
    /// `StorageError.transactionAborted` and `perform` throws). A `perform` inside another
    /// joins it as a savepoint: if the inner `body` throws, its own writes are undone and
    /// the outer transaction goes on if it catches the error (unless a sibling child task
    /// wrote meanwhile: undoing the inner writes would undo the sibling's too, so the
    /// transaction is aborted instead). A range read iterates the state as of its start, whatever the loop
    /// writes. Child tasks (`async let`, task groups) share the transaction; their calls
    /// run one at a time, each atomic. An unstructured `Task {}` started inside inherits the
    /// transaction too; its writes after `perform` returned fail with
    /// `StorageError.transactionFinished`. Datastore calls outside any `perform` are each
    /// their own transaction.
    ///
    /// Transactions run at the same time, and are serializable (Docs/Architecture.md
    /// invariant 7): the committed ones have the effect of running one after another in
    /// the order they committed. If another transaction committed, since this one began, a
    /// change to a datastore this one read or wrote, this one is rolled back and `body`
    /// runs again, in a new transaction, alone (every other transaction waits until it has
    /// committed), where it cannot conflict. So `body` may run more than once (only its
    /// last run's writes are kept): side effects outside the store are the caller's to make
    /// safe to repeat. A value set
    /// with ``KeyValueStore/set(_:for:)`` is a blind write (it reads nothing): two
    /// transactions setting one key do not conflict, and the later commit wins; reading it
    /// in the transaction first makes it a read-write. Transactions over
    /// disjoint datastores do not conflict, unless one of them changed so much that it wrote
    /// part of its changes to disk before its commit (it holds the end of the file until it
    /// commits, and the others run again after it). The first use of a datastore that needs
    /// preparing (an index to build, a migration) prepares it inside the transaction, which
    /// holds that preparation until it ends: another transaction's first use of the same
    /// datastore meanwhile waits for it, then reads its preparation (or prepares the
    /// datastore itself if it rolled back); so `body` must not wait for such a transaction.
    /// Nor may `body` wait for another transaction to begin: transactions run at once only
    /// while none runs alone (a body that runs again after a conflict, or the commit of
    /// values set outside transactions), and one that is about to run alone waits for the
    /// running ones to end, with new ones waiting behind it.
    /// A task cancelled while it waits for its turn
    /// leaves the queue and this throws `CancellationError` (a transaction that has begun is
    /// never interrupted).
    ///
    /// `body` runs on the caller's executor (it is `nonisolated(nonsending)`): a
    /// transaction started on the main actor runs there, and no call inside it hops threads
    /// to reach it.
    @discardableResult
    public nonisolated(nonsending) func perform<Result>(
        _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        if let context = TransactionContext.current(for: core), case .write(let transaction) = context.source {
            return try await performNested(body, in: context, transaction: transaction)
        }
        return try await performWrite { _ in try await body() }
    }
}

extension Persistence where Access == ReadWrite {
    /// A `perform` inside another: a savepoint of the outer transaction. If `body` throws,
    /// its writes are undone, and so is what this transaction's preparation of datastores
    /// did inside it. If a task outside this `perform` (a sibling child task) wrote after it
    /// began, or an earlier rollback already removed its savepoint, its writes cannot be
    /// undone alone: the transaction is then aborted (every later call fails with
    /// `transactionAborted`, and the outer `perform` throws) rather than losing the other
    /// task's writes or keeping this one's.
    nonisolated(nonsending) private func performNested<Result>(
        _ body: nonisolated(nonsending) () async throws -> Result, in context: TransactionContext,
        transaction: WriteTransaction
    ) async throws -> Result {
        let prepared = context.prepared.withLock { $0 }
        let writtenValues = context.writtenValues.withLock { $0 }
        // Registered under the statement lock the savepoint is taken under: no statement of
        // a sibling task can land after the savepoint without seeing it (and marking it
        // overtaken: `TransactionContext.statement`).
        let savepoint = try FolioError.wrap { () throws(StorageError) in
            try transaction.savepoint { savepoint in context.nested.withLock { $0[savepoint] = false } }
        }
        do {
            let result = try await NestedPerform.$chain.withValue(NestedPerform.chain + [savepoint]) {
                try await body()
            }
            context.nested.withLock { _ = $0.removeValue(forKey: savepoint) }
            transaction.release(savepoint)
            return result
        } catch {
            // Whether a sibling wrote since the savepoint, read under the same statement lock
            // as the rollback: no write can slip in between the two.
            var overtaken = false
            let undone = transaction.rollback(to: savepoint) {
                overtaken = context.nested.withLock { $0.removeValue(forKey: savepoint) } ?? false
            }
            // The preparations the savepoint undid are not done any more, and the values it
            // undid were not written by this transaction.
            if undone {
                context.prepared.withLock { $0 = prepared }
                context.writtenValues.withLock { $0 = writtenValues }
            }
            if overtaken || !undone {
                transaction.abort(
                    because: "a nested perform failed after another task wrote in the same transaction: "
                        + "its writes could not be undone without undoing that task's")
            }
            throw error
        }
    }
}

extension Persistence {
    /// Runs `body` with every read inside it seeing one committed snapshot, however many
    /// reads and datastores it uses (Dflat's `fetchWithinASnapshot`). Writers go on
    /// meanwhile; the snapshot does not see them. Inside a `perform`, it simply joins it.
    ///
    /// Writes are refused inside it (``FolioError/writeInReadOnlySnapshot``). A `Task { }`
    /// started inside it inherits the snapshot while `read` runs and leaves it when `read`
    /// returns: its later calls (writes included) run as if outside any scope.
    @discardableResult
    public nonisolated(nonsending) func read<Result>(
        _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        if TransactionContext.current(for: core) != nil { return try await body() }
        core.store.followIfRootFileChanged()
        let view: ReadView
        let pending: KeyValueMemory.Pending?
        do throws(StorageError) {
            // The key-value writes this process made and has not published are part of what
            // it sees: taken with the view, so that none is in neither.
            (view, pending) = try core.values.snapshot { () throws(StorageError) in try core.store.read() }
        } catch {
            throw FolioError.storage(error)
        }
        let context = TransactionContext(core: core, source: .read(view), pendingValues: pending)
        defer { context.ended.store(true, ordering: .releasing) }
        return try await TransactionScope.$current.withValue(context) { try await body() }
    }
}

extension Persistence where Access == ReadOnly {
    /// A read-only `perform`: every read inside sees one committed snapshot. Same as ``read(_:)``.
    @discardableResult
    public nonisolated(nonsending) func perform<Result>(
        _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        try await read(body)
    }
}
