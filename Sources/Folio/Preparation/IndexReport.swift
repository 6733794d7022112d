import FolioStorage
/// How one declared index stands in the store: ``Datastore/indexReport()``.
///
/// Building an index never stops at a record it cannot index: a record that no longer
/// decodes (its stored shape no longer fits the instance type, or its migration throws),
/// or that maps a unique index's value already taken, is left out of that index and the
/// build finishes. Such a record stays readable as before (reading it throws its decoding
/// error), and is indexed as soon as it is replaced with `persist`; `deleteWithoutDecoding` removes it.
public struct IndexReport<Identifier: Sendable>: Sendable {
    /// The index's name: the format's property name.
    public let index: String
    /// Whether the index may be read in this persistence. Always true for a read-write
    /// persistence (it builds indexes before any read); a read-only one sees the indexes the
    /// writer has built.
    public let isBuilt: Bool
    /// Records the index has no entries for because the build could not index them, and that
    /// are still stored unindexed. At most 1,000 are listed (see ``unindexedCount``).
    public let unindexed: [Identifier]
    /// How many records the index has no entries for: ``unindexed`` plus any the build
    /// counted beyond the listed 1,000. Zero when the index covers every record.
    public let unindexedCount: Int
}

extension IndexReport: Equatable where Identifier: Equatable {}

extension Datastore {
    /// How each declared index stands, in name order: whether it is built, and which records
    /// its build could not index (they no longer decode, or conflict in a unique index).
    /// In a read-write persistence, builds what the declaration needs first, as any read does.
    nonisolated(nonsending) public func indexReport() async throws(FolioError) -> [IndexReport<Identifier>] {
        try await withRead { (source, usable) throws(FolioError) -> [IndexReport<Identifier>] in
            let bytes = try FolioError.wrap { () throws(StorageError) in
                try source.get(Array(key.utf8), in: DatastoreLayout.catalogTree)
            }
            let entry = try bytes.map { (bytes) throws(FolioError) in try CatalogEntry.decode(bytes, datastore: key) }
            var reports: [IndexReport<Identifier>] = []
            for index in schema.indexes.sorted(by: { $0.name < $1.name }) {
                let state = entry?.indexes[index.name].flatMap {
                    $0.fingerprint == index.definition.fingerprint ? $0 : nil
                }
                var unindexed: [Identifier] = []
                for identifier in state?.unindexed ?? [] where try isUnindexed(identifier, in: index, source: source) {
                    var decoder = KeyDecoder(identifier)
                    guard let decoded = try? decoder.decode(Identifier.self) else {
                        throw .corruptRecord(
                            datastore: key, detail: "the catalog lists a malformed identifier for index \(index.name)")
                    }
                    unindexed.append(decoded)
                }
                let listed = state?.unindexed?.count ?? 0
                let unlisted = max(0, (state?.unindexedCount ?? 0) - listed)
                reports.append(
                    IndexReport(
                        index: index.name, isBuilt: usable?.contains(index.name) ?? true,
                        unindexed: unindexed, unindexedCount: unindexed.count + unlisted))
            }
            return reports
        }
    }

    /// Whether the record `identifier`, which a build left out of `index`, is still stored
    /// without its entries: it still does not decode, or its header's keys for the index are
    /// not its values (a record rewritten by `persist` has both in step).
    private func isUnindexed(
        _ identifier: [UInt8], in index: SchemaIndex<Instance>, source: ReadSource
    ) throws(FolioError) -> Bool {
        guard
            let bytes = try FolioError.wrap({ () throws(StorageError) in
                try source.get(identifier, in: schema.recordsTree)
            })
        else { return false }
        let record = try schema.parseRecord(bytes, identifier: identifier)
        guard let instance = try schema.decodeIfReadable(record, identifier: identifier, core: core) else {
            return true
        }
        return schema.indexValues(index, of: instance, identifier: identifier) != (record.indexKeys[index.name] ?? [])
    }
}
