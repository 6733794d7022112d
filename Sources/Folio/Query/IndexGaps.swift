import Synchronization
import FolioStorage

/// The records built indexes leave out, as the catalog lists them: a build does not stop at
/// a record it cannot index (one that no longer decodes, or that repeats a unique index's
/// value), it leaves it out and lists it (IndexReport.swift). A plan must not miss such a
/// record, so a plan that reads one of these indexes also reads the records it left out,
/// by identifier (the predicate filters them like any other), and an index that left out
/// more records than the catalog lists (``CatalogEntry/IndexState/unindexedListLimit``)
/// serves no plan at all.
///
/// Reading the listed records is always enough: a record is left out only by a build, the
/// list changes only with the index's next build, and a record listed but since replaced
/// (so indexed) or deleted is read once more, or found absent.
struct IndexGaps: Sendable {
    /// Index name → identifier keys of the records its build left out.
    let missing: [String: [[UInt8]]]
    /// Indexes that left out records the catalog does not list: no plan reads them.
    let unlisted: Set<String>

    static let none = IndexGaps(missing: [:], unlisted: [])

    private init(missing: [String: [[UInt8]]], unlisted: Set<String>) {
        self.missing = missing
        self.unlisted = unlisted
    }

    /// The gaps of the declared indexes `entry` has built as declared.
    init<Instance>(entry: CatalogEntry, indexes: [SchemaIndex<Instance>]) {
        var missing: [String: [[UInt8]]] = [:]
        var unlisted = Set<String>()
        for index in indexes {
            guard let state = entry.indexes[index.name], state.fingerprint == index.definition.fingerprint,
                let count = state.unindexedCount, count > 0
            else { continue }
            let listed = state.unindexed ?? []
            if listed.count >= count { missing[index.name] = listed } else { unlisted.insert(index.name) }
        }
        self.missing = missing
        self.unlisted = unlisted
    }

    /// Whether the index holds every record.
    func isComplete(_ name: String) -> Bool { missing[name] == nil && !unlisted.contains(name) }
}

/// The gaps a schema last read, with the catalog entry they were read from.
struct IndexGapsCache: Sendable {
    var catalog: [UInt8]?
    var gaps: IndexGaps
    /// Read after the datastore was prepared in this process, from a committed state: the
    /// index states cannot change while the declaration stays (only a preparation builds),
    /// so plans over committed states use them without reading the catalog again.
    var settled: Bool
}

extension Datastore {
    /// The gaps of the indexes a plan over `source` may read. `usable` is the availability
    /// the read resolved (nil: every declared index is built, the datastore is prepared).
    func indexGaps(in source: ReadSource, usable: Set<String>?) throws(FolioError) -> IndexGaps {
        guard !schema.indexes.isEmpty else { return .none }
        let committed: Bool
        if case .view = source { committed = usable == nil } else { committed = false }
        if committed, let settled = schema.gapsCache.withLock({ $0?.settled == true ? $0?.gaps : nil }) {
            return settled
        }
        let bytes = try FolioError.wrap { () throws(StorageError) in
            try source.get(Array(key.utf8), in: DatastoreLayout.catalogTree)
        }
        if let cached = schema.gapsCache.withLock({ $0?.catalog == bytes ? $0?.gaps : nil }) {
            if committed { schema.gapsCache.withLock { $0?.settled = true } }
            return cached
        }
        let gaps =
            try bytes.map { (bytes) throws(FolioError) in
                IndexGaps(entry: try CatalogEntry.decode(bytes, datastore: key), indexes: schema.indexes)
            } ?? .none
        schema.gapsCache.withLock { $0 = IndexGapsCache(catalog: bytes, gaps: gaps, settled: committed) }
        return gaps
    }
}
