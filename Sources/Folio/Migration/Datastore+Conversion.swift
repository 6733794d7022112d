import FolioStorage
/// Migration proper: rewriting records stored in an older version of the format in the
/// current one, in batches (``Datastore/migrateAndReindex(progress:)`` drives it; a single read converts
/// as it decodes, without rewriting).
extension Datastore where Access == ReadWrite {
    /// Records stored in a version other than the current one (reads headers only).
    func countOldRecords(in view: ReadView) throws(FolioError) -> Int {
        var cursor = try FolioError.wrap { () throws(StorageError) in try view.cursor(in: schema.recordsTree) }
        var count = 0
        while let entry = try FolioError.wrap({ () throws(StorageError) in try cursor.next() }) {
            if try schema.parseRecord(entry.value, identifier: entry.key).version != schema.currentTag { count += 1 }
        }
        return count
    }

    /// The identifier of the first record after `after` stored in an old version that
    /// decodes (converts) in the current one; nil if there is none.
    func firstConvertible(in view: ReadView, after: [UInt8]?) throws(FolioError) -> [UInt8]? {
        var cursor = try FolioError.wrap { () throws(StorageError) in
            try view.cursor(in: schema.recordsTree, range: after.map { KeyRange(lower: .excluded($0)) } ?? .all)
        }
        while let entry = try FolioError.wrap({ () throws(StorageError) in try cursor.next() }) {
            let record = try schema.parseRecord(entry.value, identifier: entry.key)
            if record.version != schema.currentTag,
                try schema.decodeIfReadable(record, identifier: entry.key, core: core) != nil
            {
                return entry.key
            }
        }
        return nil
    }

    /// Rewrites up to `limit` old-version records from `lower` on; returns how many, and the
    /// last identifier looked at (nil when the end was reached). A record that no longer
    /// decodes is left as stored (reading it throws its error, as before; `persist` replaces
    /// it, `deleteWithoutDecoding` removes it): one bad record must not stop the conversion of the others.
    func migrateBatch(
        in transaction: WriteTransaction, from lower: RangeBound<[UInt8]>, limit: Int
    ) throws(FolioError) -> (Int, [UInt8]?) {
        var cursor = transaction.cursor(in: schema.recordsTree, range: KeyRange(lower: lower))
        var converted = 0
        while let entry = try FolioError.wrap({ () throws(StorageError) in try cursor.next() }) {
            let record = try schema.parseRecord(entry.value, identifier: entry.key)
            guard record.version != schema.currentTag else { continue }
            guard let instance = try schema.decodeIfReadable(record, identifier: entry.key, core: core) else {
                continue
            }
            guard schema.identifierKey(of: instance) == entry.key else {
                throw .incompatibleDeclaration(
                    datastore: key,
                    reason: "migrating record \(schema.describe(identifierKey: entry.key)) changed its identifier")
            }
            try IndexMaintenance.store(instance, schema: schema, core: core, in: transaction)
            converted += 1
            if converted >= limit { return (converted, entry.key) }
        }
        return (converted, nil)
    }
}
