import FolioStorage
/// Keeping index entries in step with records, inside the write transaction of the change:
/// every write updates every index of its datastore in the same commit.
enum IndexMaintenance {
    /// Adds the entries of `values` (encoded index values) for the record `identifier`.
    /// For a unique index, a value already mapped to another identifier is a conflict
    /// (unless `checked`: the caller has looked already).
    static func add<Format>(
        _ values: [[UInt8]], for index: SchemaIndex<Format.Instance>, identifier: [UInt8],
        record: [UInt8], in transaction: WriteTransaction,
        schema: DatastoreSchema<Format>, checked: Bool = false
    ) throws(FolioError) {
        if index.unique, !checked {
            for value in values {
                let entryKey = IndexEntry.key(value: value, identifier: identifier, unique: true)
                if let existing = try FolioError.wrap({ () throws(StorageError) in
                    try transaction.get(entryKey, in: index.tree)
                }),
                    let owner = IndexEntry.decode(existing)?.identifier, owner != identifier
                {
                    throw .uniqueIndexConflict(
                        datastore: schema.key, index: index.name, value: index.definition.describeValue(value),
                        existing: schema.describe(identifierKey: owner), new: schema.describe(identifierKey: identifier)
                    )
                }
            }
        }
        try put(values, for: index.layout, identifier: identifier, record: record, in: transaction)
    }

    /// Puts the entries of `values` for the record `identifier`, unchecked.
    private static func put(
        _ values: [[UInt8]], for index: IndexLayout, identifier: [UInt8], record: [UInt8],
        in transaction: WriteTransaction
    ) throws(FolioError) {
        for value in values {
            let entryKey = IndexEntry.key(value: value, identifier: identifier, unique: index.unique)
            let entry = IndexEntry.value(identifier: identifier, record: index.covering ? record : nil)
            try FolioError.wrap { () throws(StorageError) in
                _ = try transaction.put(entry, for: entryKey, in: index.tree)
            }
        }
    }

    /// Removes the entries of `values` for the record `identifier`.
    static func remove(
        _ values: [[UInt8]], for index: IndexLayout, identifier: [UInt8],
        in transaction: WriteTransaction
    ) throws(FolioError) {
        for value in values {
            let entryKey = IndexEntry.key(value: value, identifier: identifier, unique: index.unique)
            try FolioError.wrap { () throws(StorageError) in _ = try transaction.remove(entryKey, from: index.tree) }
        }
    }

    /// Stores `instance` (insert or replace) with all its index entries; returns the stored
    /// record it replaced, if any.
    @discardableResult
    static func store<Format>(
        _ instance: Format.Instance, schema: DatastoreSchema<Format>, core: PersistenceCore,
        in transaction: WriteTransaction
    ) throws(FolioError) -> (identifier: [UInt8], previous: StoredRecord?) {
        try store(try EncodedRecord(instance, schema: schema), schema: schema, in: transaction)
    }

    /// Stores a record encoded beforehand (insert or replace) with all its index entries;
    /// returns the stored record it replaced, if any.
    @discardableResult
    static func store<Format>(
        _ encoded: EncodedRecord, schema: DatastoreSchema<Format>, in transaction: WriteTransaction
    ) throws(FolioError) -> (identifier: [UInt8], previous: StoredRecord?) {
        let (identifier, record, keys) = (encoded.identifier, encoded.record, encoded.keys)
        let previous = try FolioError.wrap { () throws(StorageError) in
            try transaction.get(identifier, in: schema.recordsTree)
        }
        .map { (bytes) throws(FolioError) in try schema.parseRecord(bytes, identifier: identifier) }
        // The loops read the plain layouts: the generic index array costs metadata lookups.
        let layouts = schema.indexLayouts
        // Unique conflicts first, so a conflict changes nothing even outside a transaction.
        for position in layouts.indices where layouts[position].unique {
            let index = layouts[position]
            for value in keys[position] {
                if let existing = try FolioError.wrap({ () throws(StorageError) in
                    try transaction.get(value, in: index.tree)
                }),
                    let owner = IndexEntry.decode(existing)?.identifier, owner != identifier
                {
                    throw .uniqueIndexConflict(
                        datastore: schema.key, index: index.name,
                        value: schema.indexes[position].definition.describeValue(value),
                        existing: schema.describe(identifierKey: owner),
                        new: schema.describe(identifierKey: identifier))
                }
            }
        }
        for position in layouts.indices {
            let index = layouts[position], values = keys[position]
            let old = previous?.indexKeys[index.name] ?? []
            // Direct entries hold the record, so they are all rewritten; reference entries
            // only where the value changed.
            let removed = index.covering ? old : old.filter { !values.contains($0) }
            let added = index.covering ? values : values.filter { !old.contains($0) }
            try remove(removed, for: index, identifier: identifier, in: transaction)
            try put(added, for: index, identifier: identifier, record: record, in: transaction)
        }
        try FolioError.wrap { () throws(StorageError) in
            _ = try transaction.put(record, for: identifier, in: schema.recordsTree)
        }
        return (identifier, previous)
    }

    /// Removes the record `identifier` and its index entries; returns it, if it was there.
    /// Uses the index keys stored with the record, so the record need not decode.
    @discardableResult
    static func delete<Format>(
        _ identifier: [UInt8], schema: DatastoreSchema<Format>,
        in transaction: WriteTransaction
    ) throws(FolioError) -> StoredRecord? {
        guard
            let bytes = try FolioError.wrap({ () throws(StorageError) in
                try transaction.get(identifier, in: schema.recordsTree)
            })
        else { return nil }
        let record = try schema.parseRecord(bytes, identifier: identifier)
        for index in schema.indexLayouts {
            try remove(record.indexKeys[index.name] ?? [], for: index, identifier: identifier, in: transaction)
        }
        try FolioError.wrap { () throws(StorageError) in
            _ = try transaction.remove(identifier, from: schema.recordsTree)
        }
        return record
    }
}

/// A record as a write stores it: its identifier key, its stored bytes (header and JSON), and
/// its values in each of its datastore's indexes, in declaration order. A value, made from the
/// instance and the declaration alone, so a write can encode before its transaction begins.
struct EncodedRecord: Sendable {
    let identifier: [UInt8]
    let record: [UInt8]
    let keys: [[[UInt8]]]

    /// `instance` encoded as `schema` stores it; throws what encoding throws
    /// (``FolioError/encodingFailed(datastore:identifier:reason:)``, a key too large).
    init<Format>(_ instance: Format.Instance, schema: DatastoreSchema<Format>) throws(FolioError) {
        identifier = schema.identifierKey(of: instance)
        (record, keys) = try schema.encodeRecord(instance, identifier: identifier)
    }
}
