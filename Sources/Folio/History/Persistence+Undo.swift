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
    /// Values set outside transactions and not committed yet are committed first. Refused
    /// inside a write transaction (`StorageError.writeTransactionInProgress`).
    ///
    /// Forcing the action of generation `confirmed` (the one a conflict named, which the user
    /// agreed to revert anyway), records and values a later commit changed are written back
    /// too, over what that commit wrote, and their index entries follow them (a later commit's
    /// change to such a record is lost; its other changes stay). The token says which action
    /// the user confirmed: if another action has become the newest since, nothing is written.
    ///
    /// ```swift
    /// do {
    ///     try await persistence.undo()
    /// } catch FolioError.undoConflict(let generation, let changed) {
    ///     if userConfirms(changed) {
    ///         try await persistence.undo(forcing: ObservationToken(generation: generation))
    ///     }
    /// }
    /// ```
    ///
    /// - Throws: ``FolioError/undoConflict(generation:changedSince:)``, naming the records
    ///   (or index entries), if a later commit (a transaction not of `scope`) changed one
    ///   that the action changed and it is not forced (nothing is written);
    ///   ``FolioError/cannotUndo(generation:reason:)`` if the commit before the action is no
    ///   longer in the store's history, or a datastore was prepared since the action, or
    ///   (forcing) if the newest action is not `confirmed`'s, or a value of a one-to-one
    ///   index that a reverted record had belongs to another record now.
    @discardableResult
    public nonisolated(nonsending) func undo(
        _ scope: UndoScope = .namedActions, forcing confirmed: ObservationToken? = nil
    ) async throws -> HistoryAction? {
        try await revertNewest(redo: false, scope: scope, forcing: confirmed)
    }

    /// Re-applies the action the newest undo reverted, if no action of `scope` came after
    /// that undo: reverts the undo commit. Returns the action (its token is the undo
    /// commit's, its name the action's), or nil if there is nothing to redo. Throws, and
    /// forces (`confirmed` names the undo commit), as ``undo(_:forcing:)`` does.
    @discardableResult
    public nonisolated(nonsending) func redo(
        _ scope: UndoScope = .namedActions, forcing confirmed: ObservationToken? = nil
    ) async throws -> HistoryAction? {
        try await revertNewest(redo: true, scope: scope, forcing: confirmed)
    }

    /// The action ``undo(_:forcing:)`` would revert now, if any and if it can be (for an Edit menu's
    /// title): nil also when a datastore was prepared since it (undo would throw
    /// ``FolioError/cannotUndo(generation:reason:)``).
    public nonisolated func undoableAction(_ scope: UndoScope = .namedActions) throws(FolioError) -> HistoryAction? {
        try revertible(redo: false, scope: scope)
    }

    /// The undo ``redo(_:forcing:)`` would revert now, if any and if it can be.
    public nonisolated func redoableAction(_ scope: UndoScope = .namedActions) throws(FolioError) -> HistoryAction? {
        try revertible(redo: true, scope: scope)
    }

    private nonisolated func revertible(redo: Bool, scope: UndoScope) throws(FolioError) -> HistoryAction? {
        core.store.followIfRootFileChanged()
        let store = core.store
        return try FolioError.wrap { () throws(StorageError) in
            let found =
                redo
                ? try ActionHistory.redoable(in: store, scope: scope)
                : try ActionHistory.undoable(in: store, scope: scope)
            guard let found, found.blockedBy == nil else { return nil }
            return found.action
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

    /// Undo's or redo's work: finds the commit to revert and reverts it, in one transaction.
    ///
    /// The commit is found inside the transaction that reverts it, which reads the history
    /// tree: a named action, undo or redo that commits meanwhile changes that tree, so this
    /// transaction conflicts and runs again, alone, finding the commit anew (two undos at
    /// once revert the two newest actions, one each). Values set outside transactions and
    /// not yet committed are committed first: they are transactions older than this one.
    ///
    /// It reads the catalog too: a datastore prepared meanwhile (an index built over the
    /// records as they are) conflicts with it, and the run again finds the undo blocked.
    private nonisolated(nonsending) func revertNewest(
        redo: Bool, scope: UndoScope, forcing confirmed: ObservationToken?
    ) async throws -> HistoryAction? {
        if let context = TransactionContext.current(for: core), case .write = context.source {
            // Inside a transaction, its own writes would be reverted with the action, or
            // become part of the undo commit.
            throw FolioError.storage(.writeTransactionInProgress)
        }
        core.store.followIfRootFileChanged()
        try await values.flush()
        let store = core.store
        let find = { (view: ReadView?) throws(FolioError) -> (action: HistoryAction, blockedBy: UInt64?)? in
            try FolioError.wrap { () throws(StorageError) in
                redo
                    ? try ActionHistory.redoable(in: store, from: view, scope: scope)
                    : try ActionHistory.undoable(in: store, from: view, scope: scope)
            }
        }
        guard try find(nil) != nil else { return nil }
        let marker = redo ? HistoryLayout.redo : HistoryLayout.undo
        return try await perform { () async throws -> HistoryAction? in
            guard let context = TransactionContext.current(for: core), case .write(let transaction) = context.source
            else { return nil }
            return try context.statement(transaction) { () throws(FolioError) -> HistoryAction? in
                // Read, not written blindly: see above.
                _ = try FolioError.wrap { () throws(StorageError) in
                    _ = try transaction.get(marker, in: HistoryLayout.tree)
                    return try transaction.get([], in: DatastoreLayout.catalogTree)
                }
                // From the transaction's base: in full durability it may be a commit not
                // published yet (another undo's, whose sync is pending).
                let base = transaction.baseView
                guard let found = try find(base) else { return nil }
                if let confirmed, found.action.token != confirmed {
                    throw FolioError.cannotUndo(
                        generation: confirmed.generation,
                        reason: "it is no longer the newest action: generation \(found.action.token.generation) is")
                }
                try revert(found, in: transaction, base: base, marking: marker, force: confirmed != nil)
                return found.action
            }
        }
    }

    /// Reverts the commit of `found` in `transaction` and records it under `marker`.
    private nonisolated func revert(
        _ found: (action: HistoryAction, blockedBy: UInt64?), in transaction: WriteTransaction, base: ReadView,
        marking marker: [UInt8], force: Bool
    ) throws(FolioError) {
        let action = found.action
        let generation = action.token.generation
        if let preparation = found.blockedBy {
            throw FolioError.cannotUndo(
                generation: generation,
                reason: "a datastore was prepared since, at generation \(preparation) (its declaration recorded, "
                    + "or its indexes built or dropped): what it built was computed from the records as they are")
        }
        let store = core.store
        let before: ReadView, after: ReadView
        do throws(StorageError) {
            (before, after) = (try store.read(at: generation - 1, in: base), try store.read(at: generation, in: base))
        } catch .generationUnavailable {
            throw FolioError.cannotUndo(
                generation: generation, reason: "the commit before it is no longer in the store's history")
        } catch {
            throw FolioError.storage(error)
        }
        try Reversion.revert(
            generation, from: after, to: before, current: base, force: force, in: transaction, store: store)
        try FolioError.wrap { () throws(StorageError) in
            try transaction.putBlind(HistoryLayout.encode(generation), for: marker, in: HistoryLayout.tree)
            if let name = action.name {
                try transaction.putBlind(Array(name.utf8), for: HistoryLayout.name, in: HistoryLayout.tree)
            }
        }
    }
}
