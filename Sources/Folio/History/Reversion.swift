import FolioStorage

/// Writing back what one commit changed, as it was before it: the work of undo and redo.
enum Reversion {
    /// In `transaction`, gives every key the commit of `generation` changed (its records,
    /// index entries and values; `after` is that generation, `before` the one before it)
    /// its value in `before`. Every such key must still hold its value of `after`: a key a
    /// later commit changed is a conflict, and nothing is written; unless `force` is set:
    /// then every record and value is written back whatever came after, and the index
    /// entries of those records follow them (Reversion+Force.swift; `current` is the
    /// transaction's base).
    static func revert(
        _ generation: UInt64, from after: ReadView, to before: ReadView, current: ReadView, force: Bool,
        in transaction: WriteTransaction, store: Store
    ) throws(FolioError) {
        let changes = try FolioError.wrap { () throws(StorageError) in try after.changes() }
        if changes.trees.contains(where: { $0.tree == DatastoreLayout.catalogTree }) || !changes.droppedTrees.isEmpty {
            throw .cannotUndo(
                generation: generation,
                reason:
                    "it also prepared a datastore (its catalog changed): its writes cannot be reverted apart from that")
        }
        if force {
            try forceRevert(
                generation, changes, from: after, to: before, current: current, in: transaction, store: store)
            return
        }
        let conflicts = try FolioError.wrap { () throws(StorageError) in
            try write(changes, from: after, to: before, in: transaction, store: store)
        }
        guard conflicts.isEmpty else { throw .undoConflict(generation: generation, changedSince: conflicts) }
    }

    /// ``revert(_:from:to:current:force:in:store:)``'s work: the keys later commits changed, named (and
    /// nothing written), or none (and every key written back).
    private static func write(
        _ changes: ChangeRecord, from after: ReadView, to before: ReadView, in transaction: WriteTransaction,
        store: Store
    ) throws(StorageError) -> [String] {
        var writes: [(tree: String, key: [UInt8], value: [UInt8]?)] = []
        var conflicts: [String] = []
        var entryConflicts: [String] = []
        // What history says of itself (names, markers, the declared retention) is not undone.
        for tree in changes.trees where tree.tree != HistoryLayout.tree && tree.tree != RetentionLayout.tree {
            for key in try changedKeys(tree, from: before, to: after, store: store) {
                let then = try after.get(key, in: tree.tree)
                let old = try before.get(key, in: tree.tree)
                // Written with the value it had (a record persisted unchanged): nothing to
                // revert, and no conflict whatever came after.
                if then == old { continue }
                guard try transaction.get(key, in: tree.tree) == then else {
                    if tree.tree.hasPrefix("index/") {
                        entryConflicts.append("an entry of \(tree.tree)")
                    } else {
                        conflicts.append(describe(key, in: tree.tree, view: after))
                    }
                    continue
                }
                writes.append((tree.tree, key, old))
            }
        }
        // A changed record's index entries changed with it: the records name the conflict.
        if !conflicts.isEmpty { return conflicts }
        if !entryConflicts.isEmpty { return Array(Set(entryConflicts)).sorted() }
        for write in writes {
            if let value = write.value {
                _ = try transaction.put(value, for: write.key, in: write.tree)
            } else {
                _ = try transaction.remove(write.key, from: write.tree)
            }
        }
        return []
    }

    /// A changed key as a conflict names it: `DATASTORE IDENTIFIER` for a record, `value
    /// NAME` for the key-value store.
    static func describe(_ key: [UInt8], in tree: String, view: ReadView) -> String {
        if DatastoreLayout.isRecordsTree(tree) {
            let datastore = String(tree.dropFirst("records/".count))
            let type = (try? view.get(Array(datastore.utf8), in: DatastoreLayout.catalogTree)).flatMap {
                $0.flatMap { try? CatalogEntry.decode($0, datastore: datastore).identifierType }
            }
            return "\(datastore) \(type.map { KeyText.text(for: key, type: $0) } ?? key.description)"
        }
        if tree == KeyValueLayout.tree { return "value \(String(decoding: key, as: UTF8.self))" }
        return "a key of \(tree)"
    }
}
