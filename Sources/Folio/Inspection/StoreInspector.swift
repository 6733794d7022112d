import FolioStorage
/// A datastore as the store describes it, without its Swift types.
@_spi(Engine) public struct DatastoreSummary: Sendable, Equatable {
    /// The datastore's key (its name in the store).
    public var key: String
    /// The instance type the writer declared (module-qualified, the same on every platform).
    public var instanceType: String
    /// The identifier type the writer declared.
    public var identifierType: String
    /// The version tag new records are stored with.
    public var currentVersion: String
    /// Every version tag the format declares.
    public var versions: [String]
    /// Number of records.
    public var recordCount: Int
    /// The declared indexes, by name.
    public var indexes: [IndexSummary]
}

/// A declared index as the store describes it.
@_spi(Engine) public struct IndexSummary: Sendable, Equatable {
    /// The index's name (the format's property name).
    public var name: String
    /// One-to-many, one-to-one or many-to-many.
    public var kind: IndexKind
    /// Reference or covering.
    public var storage: IndexStorage
    /// True once every record has its entries.
    public var built: Bool
    /// The type of the index's values (module-qualified, the same on every platform).
    public var valueType: String
    /// `\Type.property`, or "computed".
    public var keyPath: String
    /// Entries in the index.
    public var entryCount: Int
}

/// A stored record, without its Swift type.
@_spi(Engine) public struct InspectedRecord: Sendable, Equatable {
    /// The identifier as text (see ``KeyText``).
    public var identifier: String
    /// The version the record was stored in.
    public var version: String
    /// The record's JSON, as stored.
    public var json: [UInt8]
}

/// Reads a store's datastores without the app's Swift types: catalog, records as JSON,
/// index order, versions present. For tools (`folio info`, `folio dump`); apps use
/// ``Datastore``.
@_spi(Engine) public struct StoreInspector: Sendable {
    /// The store inspected.
    public let store: Store

    /// An inspector of `store` (open it read-only to inspect a store another process writes).
    public init(store: Store) {
        self.store = store
    }

    /// Every datastore in the catalog, in key order.
    public func datastores() throws(FolioError) -> [DatastoreSummary] {
        let view = try FolioError.wrap { () throws(StorageError) in try store.readNewest() }
        var cursor = try FolioError.wrap { () throws(StorageError) in try view.cursor(in: DatastoreLayout.catalogTree) }
        var result: [DatastoreSummary] = []
        while let item = try FolioError.wrap({ () throws(StorageError) in try cursor.next() }) {
            let key = String(decoding: item.key, as: UTF8.self)
            result.append(try summary(key, CatalogEntry.decode(item.value, datastore: key), in: view))
        }
        return result
    }

    /// One datastore; throws ``FolioError/unknownDatastore(_:)`` if there is none.
    public func datastore(_ key: String) throws(FolioError) -> DatastoreSummary {
        let view = try FolioError.wrap { () throws(StorageError) in try store.readNewest() }
        return try summary(key, try entry(key, in: view), in: view)
    }

    /// How many records are stored in each version (reads every record's header).
    public func versionsPresent(in key: String) throws(FolioError) -> [String: Int] {
        let view = try FolioError.wrap { () throws(StorageError) in try store.readNewest() }
        _ = try entry(key, in: view)
        var cursor = try FolioError.wrap { () throws(StorageError) in
            try view.cursor(in: DatastoreLayout.recordsTree(key))
        }
        var counts: [String: Int] = [:]
        while let item = try FolioError.wrap({ () throws(StorageError) in try cursor.next() }) {
            guard let record = StoredRecord.decode(item.value) else {
                throw .corruptRecord(
                    datastore: key, detail: "record \(KeyText.text(for: item.key, type: "")) is malformed")
            }
            counts[record.version, default: 0] += 1
        }
        return counts
    }

    /// Calls `body` with the records of `key` in identifier order, or in the order of the
    /// index named `index`, from `from` through `to` (both inclusive, given as text and read
    /// as the identifier's or index value's type), at most `limit` of them. `body` returns
    /// false to stop. Reads one snapshot.
    public func forEachRecord(
        in key: String, index: String? = nil, from: String? = nil, to: String? = nil,
        order: RangeOrder = .ascending, limit: Int? = nil,
        _ body: (InspectedRecord) throws -> Bool
    ) throws {
        let view = try FolioError.wrap { () throws(StorageError) in try store.readNewest() }
        let entry = try entry(key, in: view)
        let recordsTree = DatastoreLayout.recordsTree(key)
        var tree = recordsTree
        var type = entry.identifierType
        var state: CatalogEntry.IndexState? = nil
        if let index {
            guard let found = entry.indexes[index] else { throw FolioError.unknownIndex(datastore: key, index: index) }
            guard found.built else { throw FolioError.indexNotBuilt(datastore: key, index: index) }
            state = found
            tree = DatastoreLayout.indexTree(key, index)
            type = Self.valueType(of: found.fingerprint)
        }
        // A unique index's nil entries carry their identifier (Format.md §24).
        let suffixed = state.map { $0.kind != .oneToOne || $0.fingerprint.hasSuffix(";nil-distinct") } ?? false
        var range = KeyRange()
        if let from { range.lower = .included(try KeyText.key(for: from, type: type)) }
        if let to {
            let upper = try KeyText.key(for: to, type: type)
            range.upper =
                suffixed ? (KeyBytes.prefixUpperBound(upper).map { .excluded($0) } ?? .unbounded) : .included(upper)
        }
        var cursor = try FolioError.wrap { () throws(StorageError) in
            try view.cursor(in: tree, range: range, direction: order.direction)
        }
        var remaining = limit ?? Int.max
        while remaining > 0, let item = try FolioError.wrap({ () throws(StorageError) in try cursor.next() }) {
            var identifier = item.key
            var bytes = item.value
            if state != nil {
                guard let decoded = IndexEntry.decode(item.value) else {
                    throw FolioError.corruptRecord(
                        datastore: key, detail: "an entry of index \(index ?? "") is malformed")
                }
                identifier = decoded.identifier
                if let record = decoded.record {
                    bytes = record
                } else {
                    guard
                        let stored = try FolioError.wrap({ () throws(StorageError) in
                            try view.get(identifier, in: recordsTree)
                        })
                    else {
                        throw FolioError.corruptRecord(
                            datastore: key, detail: "index \(index ?? "") refers to a missing record")
                    }
                    bytes = stored
                }
            }
            guard let record = StoredRecord.decode(bytes) else {
                throw FolioError.corruptRecord(
                    datastore: key,
                    detail: "record \(KeyText.text(for: identifier, type: entry.identifierType)) is malformed")
            }
            let inspected = InspectedRecord(
                identifier: KeyText.text(for: identifier, type: entry.identifierType),
                version: record.version, json: record.payload)
            guard try body(inspected) else { return }
            remaining -= 1
        }
    }

    func entry(_ key: String, in view: ReadView) throws(FolioError) -> CatalogEntry {
        guard
            let bytes = try FolioError.wrap({ () throws(StorageError) in
                try view.get(Array(key.utf8), in: DatastoreLayout.catalogTree)
            })
        else { throw .unknownDatastore(key) }
        return try CatalogEntry.decode(bytes, datastore: key)
    }

    private func summary(_ key: String, _ entry: CatalogEntry, in view: ReadView) throws(FolioError) -> DatastoreSummary
    {
        let records = try FolioError.wrap { () throws(StorageError) in
            try view.count(in: DatastoreLayout.recordsTree(key))
        }
        var indexes: [IndexSummary] = []
        for (name, state) in entry.indexes.sorted(by: { $0.key < $1.key }) {
            let entries = try FolioError.wrap { () throws(StorageError) in
                try view.count(in: DatastoreLayout.indexTree(key, name))
            }
            let parts = state.fingerprint.split(separator: ";", maxSplits: 3).map(String.init)
            indexes.append(
                IndexSummary(
                    name: name, kind: state.kind, storage: state.storage, built: state.built,
                    valueType: parts.count > 2 ? parts[2] : "?", keyPath: parts.count > 3 ? parts[3] : "?",
                    entryCount: Int(entries)))
        }
        return DatastoreSummary(
            key: key, instanceType: entry.instanceType, identifierType: entry.identifierType,
            currentVersion: entry.currentVersion, versions: entry.versions, recordCount: Int(records),
            indexes: indexes)
    }

    /// The value type recorded in an index fingerprint (kind;storage;type;keypath).
    static func valueType(of fingerprint: String) -> String {
        let parts = fingerprint.split(separator: ";", maxSplits: 3).map(String.init)
        return parts.count > 2 ? parts[2] : ""
    }

    /// Checks the store: see ``Persistence/verify(progress:)``.
    public func verify(progress: ((VerificationProgress) -> Void)? = nil) -> PersistenceVerificationReport {
        DatastoreVerifier.verify(store, progress: progress)
    }
}
