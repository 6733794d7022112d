import FolioStorage

// A forced reversion: the commit's records and values are written back as they were before
// it even where later commits changed them, and the index entries of those records are made
// to match.
//
// Why no record type is needed for the index entries. An entry's value names the record
// it belongs to (Format.md §24), so the entries of the reverted records can be told apart
// from every other record's. For such a record, its entries before the commit and its
// entries now differ only in keys that some commit since then changed, and those are the
// keys that differ between the two generations (``Store/differences(in:from:to:)``);
// every other entry of the record is the same in both and stays. So, over those keys,
// an entry the record had before is written back, and one it has now and did not have
// before is removed.
extension Reversion {
    /// The forced reversion of `changes` (the commit's change record; `after` its
    /// generation, `before` the one before it, `current` the transaction's base) in
    /// `transaction`.
    ///
    /// - Throws: ``FolioError/cannotUndo(generation:reason:)`` if an entry of a one-to-one
    ///   index that a reverted record had before now belongs to another record: forcing it
    ///   would give that value to two records. Nothing is written then.
    static func forceRevert(
        _ generation: UInt64, _ changes: ChangeRecord, from after: ReadView, to before: ReadView,
        current: ReadView, in transaction: WriteTransaction, store: Store
    ) throws(FolioError) {
        var writes: [(tree: String, key: [UInt8], value: [UInt8]?)] = []
        // The records written back, by datastore key: their index entries follow them.
        var reverted: [String: Set<[UInt8]>] = [:]
        try FolioError.wrap { () throws(StorageError) in
            for tree in changes.trees
            where tree.tree != HistoryLayout.tree && tree.tree != RetentionLayout.tree
                && !tree.tree.hasPrefix("index/")
            {
                for key in try changedKeys(tree, from: before, to: after, store: store) {
                    let old = try before.get(key, in: tree.tree)
                    guard try after.get(key, in: tree.tree) != old else { continue }
                    if DatastoreLayout.isRecordsTree(tree.tree) {
                        reverted[String(tree.tree.dropFirst("records/".count)), default: []].insert(key)
                    }
                    if try current.get(key, in: tree.tree) != old { writes.append((tree.tree, key, old)) }
                }
            }
        }
        for (datastore, records) in reverted.sorted(by: { $0.key < $1.key }) {
            for index in try indexes(of: datastore, in: current) {
                try entries(
                    of: records, in: DatastoreLayout.indexTree(datastore, index), generation: generation,
                    before: before, current: current, store: store, into: &writes)
            }
        }
        try FolioError.wrap { () throws(StorageError) in
            for write in writes {
                if let value = write.value {
                    _ = try transaction.put(value, for: write.key, in: write.tree)
                } else {
                    _ = try transaction.remove(write.key, from: write.tree)
                }
            }
        }
    }

    /// The keys of `tree` the commit changed: those its change record lists, or for a tree
    /// it changed wholesale, those that differ between the two generations.
    static func changedKeys(
        _ tree: ChangeRecord.TreeChanges, from before: ReadView, to after: ReadView, store: Store
    ) throws(StorageError) -> [[UInt8]] {
        guard tree.isChangedWholesale else { return tree.entries.map(\.key) }
        var keys: [[UInt8]] = []
        var differences = try store.differences(in: tree.tree, from: before, to: after)
        while let difference = try differences.next() { keys.append(difference.key) }
        return keys
    }

    /// The names of the indexes `datastore`'s catalog entry lists in `view`.
    private static func indexes(of datastore: String, in view: ReadView) throws(FolioError) -> [String] {
        guard
            let bytes = try FolioError.wrap({ () throws(StorageError) in
                try view.get(Array(datastore.utf8), in: DatastoreLayout.catalogTree)
            })
        else { return [] }
        return try CatalogEntry.decode(bytes, datastore: datastore).indexes.keys.sorted()
    }

    /// Adds to `writes` what makes the entries of `records` in index tree `tree` what they
    /// were in `before` (see the top of this file).
    private static func entries(
        of records: Set<[UInt8]>, in tree: String, generation: UInt64, before: ReadView, current: ReadView,
        store: Store, into writes: inout [(tree: String, key: [UInt8], value: [UInt8]?)]
    ) throws(FolioError) {
        // A value of a one-to-one index that a reverted record had and another has now.
        var taken = false
        try FolioError.wrap { () throws(StorageError) in
            var differences = try store.differences(in: tree, from: before, to: current)
            while let difference = try differences.next() {
                let (old, now) = (difference.before, difference.after)
                let ownedBefore = old.map { records.contains(owner(of: $0)) } ?? false
                let ownedNow = now.map { records.contains(owner(of: $0)) } ?? false
                if let old, ownedBefore {
                    if now != nil && !ownedNow {
                        taken = true
                        return
                    }
                    writes.append((tree, difference.key, old))
                } else if now != nil && ownedNow {
                    writes.append((tree, difference.key, nil))
                }
            }
        }
        if taken {
            throw .cannotUndo(
                generation: generation,
                reason:
                    "forcing it would give a value of the one-to-one index \(tree) to two records: a record it "
                    + "reverts had that value, and another record has it now")
        }
    }

    /// The identifier key an index entry's value names: u16 LE length, then the key.
    private static func owner(of value: [UInt8]) -> [UInt8] {
        guard value.count >= 2 else { return [] }
        let length = Int(value[0]) | Int(value[1]) << 8
        return Array(value.dropFirst(2).prefix(length))
    }
}
