import FolioStorage

/// Index maintenance for changes to many records at once (`update(where:)`,
/// `delete(where:)`, deletes by identifiers or range): the records tree is changed in one
/// pass, and each index tree's entry changes are collected, sorted and applied in one pass
/// (`WriteTransaction.apply`). The old index keys come from the headers of the records the
/// records pass replaced or removed, so no record is read twice and none is decoded.
extension IndexMaintenance {
    /// Deletes the records `identifiers` (in any order, repeats allowed) and their index
    /// entries; returns how many were there.
    static func deleteAll<Format>(
        _ identifiers: [[UInt8]], schema: DatastoreSchema<Format>, in transaction: WriteTransaction
    ) throws(FolioError) -> Int {
        let keys = sortedDistinct(identifiers)
        guard !keys.isEmpty else { return 0 }
        let indexed = !schema.indexes.isEmpty
        let outcome = try FolioError.wrap { () throws(StorageError) in
            try transaction.apply(keys.map { ($0, nil) }, to: schema.recordsTree, resolvingPrevious: indexed)
        }
        var deleted = 0
        var removals = [[[UInt8]]](repeating: [], count: schema.indexes.count)
        let names = schema.indexes.map { Array($0.name.utf8) }
        let unique = schema.indexes.map(\.unique)
        for position in keys.indices where outcome.existed[position] {
            deleted += 1
            guard indexed, let bytes = outcome.previous[position] else { continue }
            let identifier = keys[position]
            // Each entry key built straight from the header's slices.
            let wellFormed = StoredRecord.forEachIndexKey(in: bytes[...]) { name, value in
                guard let index = names.firstIndex(where: { $0.elementsEqual(name) }) else { return }
                removals[index].append(IndexEntry.key(value: value, identifier: identifier, unique: unique[index]))
            }
            guard wellFormed else { throw malformed(identifier, schema) }
        }
        for position in schema.indexes.indices where !removals[position].isEmpty {
            let changes = sortedDistinct(removals[position]).map { (key: $0, value: [UInt8]?.none) }
            _ = try FolioError.wrap { () throws(StorageError) in
                try transaction.apply(changes, to: schema.indexes[position].tree)
            }
        }
        return deleted
    }

    /// Stores every instance (insert or replace; identifiers distinct) with its index
    /// entries, as ``store(_:schema:core:in:)`` would one by one, except that a unique index
    /// is checked against the state the whole batch leaves: a value one record of the batch
    /// gives up can be taken by another (two records swapping a unique value is allowed),
    /// and a value two records of the batch take, or one held by a record outside it, is a
    /// conflict. A conflict throws after writing: the caller's statement undoes the batch.
    static func storeAll<Format>(
        _ instances: [(identifier: [UInt8], instance: Format.Instance)], schema: DatastoreSchema<Format>,
        in transaction: WriteTransaction
    ) throws(FolioError) {
        var encoded: [(identifier: [UInt8], record: [UInt8], keys: [[[UInt8]]])] = []
        encoded.reserveCapacity(instances.count)
        for (identifier, instance) in instances {
            let (record, keys) = try schema.encodeRecord(instance, identifier: identifier)
            encoded.append((identifier, record, keys))
        }
        encoded.sort { KeyBytes.compare($0.identifier, $1.identifier) < 0 }
        guard !encoded.isEmpty else { return }
        let indexed = !schema.indexes.isEmpty
        let outcome = try FolioError.wrap { () throws(StorageError) in
            try transaction.apply(
                encoded.map { ($0.identifier, $0.record) }, to: schema.recordsTree, resolvingPrevious: indexed)
        }
        guard indexed else { return }
        let names = schema.indexes.map { Array($0.name.utf8) }
        let indexCount = schema.indexes.count
        let covered = schema.indexes.contains { $0.covering }
        var changes = [IndexChanges](repeating: IndexChanges(), count: indexCount)
        for position in encoded.indices {
            let (identifier, record, keys) = encoded[position]
            // A record that replaces one with the same header (version tag and index keys)
            // keeps every reference entry as it is: they hold only its values and identifier.
            // (An update that changes no indexed value, the common case, so skips the rest.)
            if !covered, let previous = outcome.previous[position], StoredRecord.sameHeader(previous, record) {
                continue
            }
            let old = try outcome.previous[position].map { (bytes) throws(FolioError) in
                try oldValues(bytes, identifier: identifier, names: names, schema: schema)
            }
            for index in 0..<indexCount {
                let declared = schema.indexes[index], values = keys[index], before = old?[index] ?? []
                // Direct entries hold the record, so they are all rewritten; reference entries
                // only where the value changed.
                for value in before where declared.covering || !values.contains(value) {
                    changes[index].removals.append(
                        IndexEntry.key(value: value, identifier: identifier, unique: declared.unique))
                }
                for value in values where declared.covering || !before.contains(value) {
                    changes[index].puts.append(
                        (
                            IndexEntry.key(value: value, identifier: identifier, unique: declared.unique),
                            IndexEntry.value(identifier: identifier, record: declared.covering ? record : nil),
                            identifier, value
                        ))
                }
            }
        }
        for position in schema.indexes.indices {
            try apply(changes[position], to: schema.indexes[position], schema: schema, in: transaction)
        }
    }

    /// One index tree's part of a batch: entry keys to remove, and entries to put with the
    /// record each belongs to and its index value (to name a conflict).
    private struct IndexChanges {
        var removals: [[UInt8]] = []
        var puts: [(key: [UInt8], entry: [UInt8], identifier: [UInt8], value: [UInt8])] = []
    }

    /// Applies one index tree's removals and puts in one pass. A key both removed and put is
    /// put (one record gave the value up, another takes it); for a unique index, a key put
    /// twice, or put over an entry of another record that nothing in the batch removes, is
    /// a conflict.
    private static func apply<Format>(
        _ changes: IndexChanges, to index: SchemaIndex<Format.Instance>, schema: DatastoreSchema<Format>,
        in transaction: WriteTransaction
    ) throws(FolioError) {
        guard !changes.removals.isEmpty || !changes.puts.isEmpty else { return }
        let removals = sortedDistinct(changes.removals)
        let puts = changes.puts.sorted { KeyBytes.compare($0.key, $1.key) < 0 }
        var merged: [(key: [UInt8], value: [UInt8]?)] = []
        merged.reserveCapacity(removals.count + puts.count)
        // For each put in `merged`: its position in `puts`, and whether the batch removes
        // the entry it replaces.
        var putAt: [(merged: Int, put: Int, released: Bool)] = []
        var removal = 0
        for position in puts.indices {
            let put = puts[position]
            if position > 0, puts[position - 1].key == put.key {
                throw conflict(
                    index, schema, value: put.value, existing: puts[position - 1].identifier, new: put.identifier)
            }
            while removal < removals.count, KeyBytes.compare(removals[removal], put.key) < 0 {
                merged.append((removals[removal], nil))
                removal += 1
            }
            let released = removal < removals.count && removals[removal] == put.key
            if released { removal += 1 }
            putAt.append((merged.count, position, released))
            merged.append((put.key, put.entry))
        }
        while removal < removals.count {
            merged.append((removals[removal], nil))
            removal += 1
        }
        let outcome = try FolioError.wrap { () throws(StorageError) in
            try transaction.apply(merged, to: index.tree, resolvingPrevious: index.unique)
        }
        guard index.unique else { return }
        for (at, position, released) in putAt where !released && outcome.existed[at] {
            let put = puts[position]
            if let previous = outcome.previous[at], let owner = IndexEntry.decode(previous)?.identifier,
                owner != put.identifier
            {
                throw conflict(index, schema, value: put.value, existing: owner, new: put.identifier)
            }
        }
    }

    private static func conflict<Format>(
        _ index: SchemaIndex<Format.Instance>, _ schema: DatastoreSchema<Format>, value: [UInt8],
        existing: [UInt8], new: [UInt8]
    ) -> FolioError {
        .uniqueIndexConflict(
            datastore: schema.key, index: index.name, value: index.definition.describeValue(value),
            existing: schema.describe(identifierKey: existing), new: schema.describe(identifierKey: new))
    }

    /// The index values a stored record's header lists, per index of the schema (in its
    /// order), read from the record's bytes without decoding it or copying its payload.
    private static func oldValues<Format>(
        _ bytes: [UInt8], identifier: [UInt8], names: [[UInt8]], schema: DatastoreSchema<Format>
    ) throws(FolioError) -> [[[UInt8]]] {
        var values = [[[UInt8]]](repeating: [], count: names.count)
        let wellFormed = StoredRecord.forEachIndexKey(in: bytes[...]) { name, key in
            // Keys of indexes the schema no longer declares are left alone, as a single delete does.
            if let index = names.firstIndex(where: { $0.elementsEqual(name) }) { values[index].append(Array(key)) }
        }
        guard wellFormed else { throw malformed(identifier, schema) }
        return values
    }

    private static func malformed<Format>(_ identifier: [UInt8], _ schema: DatastoreSchema<Format>) -> FolioError {
        .corruptRecord(
            datastore: schema.key, detail: "record \(schema.describe(identifierKey: identifier)) is malformed")
    }

    /// `keys` in byte order, each once.
    static func sortedDistinct(_ keys: [[UInt8]]) -> [[UInt8]] {
        var sorted = keys
        if !zip(sorted, sorted.dropFirst()).allSatisfy({ KeyBytes.compare($0, $1) < 0 }) {
            sorted.sort { KeyBytes.compare($0, $1) < 0 }
            var distinct: [[UInt8]] = []
            distinct.reserveCapacity(sorted.count)
            for key in sorted where distinct.last != key { distinct.append(key) }
            sorted = distinct
        }
        return sorted
    }
}
