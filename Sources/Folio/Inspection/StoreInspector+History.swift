import FolioStorage

// The store's history as the `folio` tool shows it: the commits along the chain
// (`folio log`) and the records that differ between two generations (`folio diff`).

/// One commit, as `folio log` lists it: what it changed, by datastore.
@_spi(Engine) public struct CommitSummary: Sendable, Equatable {
    /// The generation it created.
    public var generation: UInt64
    /// When, in microseconds since 1970.
    public var timestamp: UInt64
    /// "transaction", "creation" or "compaction".
    public var kind: String
    /// The name it was performed with (`perform(named:)`), or of the action it undid or redid.
    public var name: String?
    /// The generation whose commit it reverted, for an undo.
    public var undoes: UInt64?
    /// The generation of the undo commit it reverted, for a redo.
    public var redoes: UInt64?
    /// What it changed, one entry per datastore (and the key-value store, `values`, and any
    /// engine tree of neither), in name order.
    public var changes: [ChangeCount]
    /// The checkpoints that keep this generation (Persistence.checkpoint(_:)).
    public var checkpoints: [String] = []
}

/// What one commit changed in one datastore (its records, not its index entries).
@_spi(Engine) public struct ChangeCount: Sendable, Equatable {
    /// The datastore's key; `values` for the key-value store; `tree NAME` for another tree.
    public var name: String
    /// Records the commit created.
    public var created = 0
    /// Records it wrote over (possibly with the same bytes).
    public var updated = 0
    /// Records it deleted.
    public var deleted = 0
    /// The commit changed more records than it lists (wholesale): counts are not known.
    public var wholesale = false
    /// The commit dropped the datastore (all its records).
    public var dropped = false
}

/// A record that differs between two generations, as `folio diff` prints it.
@_spi(Engine) public struct InspectedDifference: Sendable, Equatable {
    /// The datastore's key.
    public var datastore: String
    /// The identifier, as text.
    public var identifier: String
    /// The identifier's type, as the catalog names it (`Swift.Int`).
    public var identifierType: String
    /// The record at the first generation (nil: it did not exist).
    public var before: InspectedRecord?
    /// The record at the second generation (nil: it does not exist).
    public var after: InspectedRecord?
}

@_spi(Engine) extension StoreInspector {
    /// The newest `limit` commits, newest first, ending early where the store's history ends.
    public func log(limit: Int) throws(FolioError) -> [CommitSummary] {
        var result: [CommitSummary] = []
        let checkpoints = try self.checkpoints()
        for commit in try FolioError.wrap({ () throws(StorageError) in try store.log(limit: limit) }) {
            var counts: [String: ChangeCount] = [:]
            for dropped in commit.changes.droppedTrees {
                guard let name = Self.shownName(of: dropped) else { continue }
                counts[name, default: ChangeCount(name: name)].dropped = true
            }
            for tree in commit.changes.trees {
                guard let name = Self.shownName(of: tree.tree) else { continue }
                var count = counts[name, default: ChangeCount(name: name)]
                if tree.isChangedWholesale { count.wholesale = true }
                for entry in tree.entries {
                    switch entry.kind {
                    case .created: count.created += 1
                    case .updated: count.updated += 1
                    case .deleted: count.deleted += 1
                    }
                }
                counts[name] = count
            }
            let kind: String
            switch commit.kind {
            case .transaction: kind = "transaction"
            case .creation: kind = "creation"
            case .compaction: kind = "compaction"
            }
            var summary = CommitSummary(
                generation: commit.generation, timestamp: commit.timestamp, kind: kind,
                changes: counts.values.sorted { $0.name < $1.name })
            if commit.changes.trees.contains(where: { $0.tree == HistoryLayout.tree }) {
                let view = try FolioError.wrap { () throws(StorageError) in try store.read(at: commit.generation) }
                let value = { (key: [UInt8]) throws(FolioError) -> [UInt8]? in
                    guard commit.changed(key, in: HistoryLayout.tree) else { return nil }
                    return try FolioError.wrap { () throws(StorageError) in try view.get(key, in: HistoryLayout.tree) }
                }
                summary.name = try value(HistoryLayout.name).map { String(decoding: $0, as: UTF8.self) }
                summary.undoes = HistoryLayout.decode(try value(HistoryLayout.undo))
                summary.redoes = HistoryLayout.decode(try value(HistoryLayout.redo))
            }
            summary.checkpoints = checkpoints.filter { $0.generation == commit.generation }.map(\.name)
            result.append(summary)
        }
        return result
    }

    /// The store's checkpoints, oldest generation first: name, generation and its time.
    public func checkpoints() throws(FolioError) -> [(name: String, generation: UInt64, timestamp: UInt64)] {
        try FolioError.wrap { () throws(StorageError) in try store.heldCheckpoints(in: try store.readNewest()) }
            .map { ($0.name, $0.generation, $0.timestamp) }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }
    }

    /// The name a tree's changes are shown under, or nil for trees shown through another
    /// (a datastore's indexes and the catalog change with its records).
    static func shownName(of tree: String) -> String? {
        if DatastoreLayout.isRecordsTree(tree) { return String(tree.dropFirst("records/".count)) }
        if tree == KeyValueLayout.tree { return "values" }
        if tree == RetentionLayout.tree { return "history retention" }
        if tree == DatastoreLayout.catalogTree || tree == HistoryLayout.tree || tree.hasPrefix("index/") { return nil }
        return "tree \(tree)"
    }

    /// Calls `body` with every record that differs between generations `from` and `to` (the
    /// newest if nil), datastore by datastore in key order (only `datastore` if given), each
    /// in identifier order. `body` returns false to stop.
    public func forEachDifference(
        from: UInt64, to: UInt64?, datastore: String? = nil, _ body: (InspectedDifference) throws -> Bool
    ) throws {
        let (old, new) = try FolioError.wrap { () throws(StorageError) -> (ReadView, ReadView) in
            let old = try store.read(at: from)
            if let to { return (old, try store.read(at: to)) }
            return (old, try store.readNewest())
        }
        var keys = Set<String>()
        for view in [old, new] {
            let trees = try FolioError.wrap { () throws(StorageError) in try view.trees() }
            for (name, _) in trees where DatastoreLayout.isRecordsTree(name) {
                keys.insert(String(name.dropFirst("records/".count)))
            }
        }
        if let datastore {
            guard keys.contains(datastore) else { throw FolioError.unknownDatastore(datastore) }
            keys = [datastore]
        }
        for key in keys.sorted() {
            // The identifier's type, from whichever generation has the datastore.
            let catalog = try (try? self.entry(key, in: new)) ?? self.entry(key, in: old)
            var differences = try FolioError.wrap { () throws(StorageError) in
                try store.differences(in: DatastoreLayout.recordsTree(key), from: old, to: new)
            }
            while let difference = try FolioError.wrap({ () throws(StorageError) in try differences.next() }) {
                // An index build rewrote the record's index keys, not the record.
                if StoredRecord.sameStoredInstance(difference.before, difference.after) { continue }
                let identifier = KeyText.text(for: difference.key, type: catalog.identifierType)
                let record = { (bytes: [UInt8]?) throws(FolioError) -> InspectedRecord? in
                    guard let bytes else { return nil }
                    guard let record = StoredRecord.decode(bytes) else {
                        throw .corruptRecord(datastore: key, detail: "record \(identifier) is malformed")
                    }
                    return InspectedRecord(identifier: identifier, version: record.version, json: record.payload)
                }
                let inspected = InspectedDifference(
                    datastore: key, identifier: identifier, identifierType: catalog.identifierType,
                    before: try record(difference.before),
                    after: try record(difference.after))
                guard try body(inspected) else { return }
            }
        }
    }
}
