import FolioStorage

// Named actions, undo and redo, from the history the store keeps: an undo is a new
// transaction that writes back what a commit changed, as it was before it.
extension Persistence where Access == ReadWrite {
    /// ``Persistence/perform(_:)-9rdbv`` under a name that history keeps with the commit: what undo and redo
    /// report (``HistoryAction/name``) and `folio log` shows. CodableDatastore's action names.
    ///
    /// ```swift
    /// try await persistence.perform(named: "Import 20 books") {
    ///     for book in imported { try await books.persist(book) }
    /// }
    /// let action = try await persistence.undo()  // action?.name == "Import 20 books"
    /// ```
    ///
    /// Inside another `perform`, the name is the enclosing transaction's (the last one given).
    @discardableResult
    public nonisolated(nonsending) func perform<Result>(
        named name: String, _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        try await perform {
            try note(Array(name.utf8), for: HistoryLayout.name)
            return try await body()
        }
    }

    /// Reverts the newest action not undone yet (a transaction performed with a name, or
    /// with `scope` `.transactions` any transaction; or a redo), as a new transaction that
    /// writes back every record, index entry and value it changed, as they were before it.
    /// Returns that action, or nil if the store's history holds none.
    ///
    /// Works across launches: what was done and undone is in the store's history (its
    /// commits since the last compaction, and before it while the replaced file is kept).
    /// Transactions that prepared a datastore (built or dropped its indexes, recorded its
    /// declaration: its first use, which inside `perform` is part of that transaction) are
    /// not actions, and no action before one can be reverted (its index entries were
    /// computed from the records as they were): use a datastore once before the actions
    /// that should be undoable.
    ///
    /// - Throws: ``FolioError/undoConflict(generation:changedSince:)``, naming the records,
    ///   if a later commit (a transaction not of `scope`) changed one that the action changed
    ///   (nothing is written);
    ///   ``FolioError/cannotUndo(generation:reason:)`` if the commit before the action is no
    ///   longer in the store's history, or a datastore was prepared since the action.
    @discardableResult
    public nonisolated(nonsending) func undo(_ scope: UndoScope = .namedActions) async throws -> HistoryAction? {
        let store = core.store
        guard
            let found = try FolioError.wrap({ () throws(StorageError) in
                try ActionHistory.undoable(in: store, scope: scope)
            })
        else { return nil }
        try await revert(found, marking: HistoryLayout.undo)
        return found.action
    }

    /// Re-applies the action the newest undo reverted, if no action of `scope` came after
    /// that undo: reverts the undo commit. Returns the action (its token is the undo
    /// commit's, its name the action's), or nil if there is nothing to redo. Throws as
    /// ``undo(_:)`` does.
    @discardableResult
    public nonisolated(nonsending) func redo(_ scope: UndoScope = .namedActions) async throws -> HistoryAction? {
        let store = core.store
        guard
            let found = try FolioError.wrap({ () throws(StorageError) in
                try ActionHistory.redoable(in: store, scope: scope)
            })
        else { return nil }
        try await revert(found, marking: HistoryLayout.redo)
        return found.action
    }

    /// The action ``undo(_:)`` would revert now, if any (for an Edit menu's title).
    public nonisolated func undoableAction(_ scope: UndoScope = .namedActions) throws(FolioError) -> HistoryAction? {
        try FolioError.wrap { () throws(StorageError) in
            try ActionHistory.undoable(in: core.store, scope: scope)?.action
        }
    }

    /// The undo ``redo(_:)`` would revert now, if any.
    public nonisolated func redoableAction(_ scope: UndoScope = .namedActions) throws(FolioError) -> HistoryAction? {
        try FolioError.wrap { () throws(StorageError) in
            try ActionHistory.redoable(in: core.store, scope: scope)?.action
        }
    }

    /// Writes `value` under `key` of the history tree in the current transaction: a blind
    /// write, so that two transactions naming themselves do not conflict.
    private nonisolated func note(_ value: [UInt8], for key: [UInt8]) throws(FolioError) {
        guard let context = TransactionContext.current(for: core), case .write(let transaction) = context.source
        else { return }
        try context.statement(transaction) { () throws(FolioError) in
            try FolioError.wrap { () throws(StorageError) in
                try transaction.putBlind(value, for: key, in: HistoryLayout.tree)
            }
        }
    }

    /// Reverts the commit of `action` in a new transaction that records it under `marker`.
    private nonisolated(nonsending) func revert(
        _ found: (action: HistoryAction, blockedBy: UInt64?), marking marker: [UInt8]
    ) async throws {
        let action = found.action
        let generation = action.token.generation
        if let preparation = found.blockedBy {
            throw FolioError.cannotUndo(
                generation: generation,
                reason: "a datastore was prepared since, at generation \(preparation) (its indexes or versions "
                    + "changed): records written back as they were would not match them")
        }
        let store = core.store
        let before: ReadView, after: ReadView
        do throws(StorageError) {
            (before, after) = (try store.read(at: generation - 1), try store.read(at: generation))
        } catch .generationUnavailable {
            throw FolioError.cannotUndo(
                generation: generation, reason: "the commit before it is no longer in the store's history")
        } catch {
            throw FolioError.storage(error)
        }
        try await perform {
            guard let context = TransactionContext.current(for: core), case .write(let transaction) = context.source
            else { return }
            try context.statement(transaction) { () throws(FolioError) in
                try Reversion.revert(generation, from: after, to: before, in: transaction, store: store)
                try FolioError.wrap { () throws(StorageError) in
                    try transaction.putBlind(HistoryLayout.encode(generation), for: marker, in: HistoryLayout.tree)
                    if let name = action.name {
                        try transaction.putBlind(Array(name.utf8), for: HistoryLayout.name, in: HistoryLayout.tree)
                    }
                }
            }
        }
    }
}
