import FolioStorage

/// What one commit changed in one datastore, with the record lookups and decodings that
/// several observers of that datastore share.
final class CommitDelta: @unchecked Sendable {
    // @unchecked: created, used and dropped on the hub's serial queue only.
    /// The tree changed: a datastore's records tree, or the key-value store's.
    let tree: String
    let token: ObservationToken
    let before: ReadView?
    let after: ReadView?
    /// Changed identifier keys, sorted, with how each changed.
    let entries: [ChangeRecord.Entry]
    private var oldRecords: [[UInt8]: StoredRecord?] = [:]
    private var newRecords: [[UInt8]: StoredRecord?] = [:]
    /// Decoded instances, one typed cache per format (every observer of a datastore has the
    /// same format; the cast happens once per observer and commit, not once per record).
    private var decodedCaches: [ObjectIdentifier: AnyObject] = [:]
    /// Per index (nil: the identifiers themselves), the entries of changed records after and
    /// before the commit.
    private var addedEntries: [String?: ChangedEntries] = [:]
    private var removedEntries: [String?: ChangedEntries] = [:]
    /// Every changed identifier, for observers that look results up by identifier.
    private(set) lazy var changedIdentifiers = KeyTable(entries.map(\.key))

    init(tree: String, token: ObservationToken, before: ReadView?, after: ReadView?, entries: [ChangeRecord.Entry]) {
        self.tree = tree
        self.token = token
        self.before = before
        self.after = after
        self.entries = entries
    }

    /// The decoded instances of this commit for `Format`, shared by its observers.
    func decoded<Format: DatastoreFormat>(_ format: Format.Type) -> DecodedChanges<Format> {
        let id = ObjectIdentifier(format)
        if let known = decodedCaches[id] { return unsafeDowncast(known, to: DecodedChanges<Format>.self) }
        let cache = DecodedChanges<Format>()
        decodedCaches[id] = cache
        return cache
    }

    /// Whether the record `identifier` changed in this commit.
    func changed(_ identifier: [UInt8]) -> Bool {
        changedIdentifiers.contains(identifier)
    }

    func oldRecord(_ identifier: [UInt8]) -> StoredRecord? {
        if let known = oldRecords[identifier] { return known }
        let record = (try? before?.get(identifier, in: tree)).flatMap { $0 }.flatMap(StoredRecord.decode)
        oldRecords[identifier] = .some(record)
        return record
    }

    func newRecord(_ identifier: [UInt8]) -> StoredRecord? {
        if let known = newRecords[identifier] { return known }
        let record = (try? after?.get(identifier, in: tree)).flatMap { $0 }.flatMap(StoredRecord.decode)
        newRecords[identifier] = .some(record)
        return record
    }

    /// The entries changed records have after the commit in index `name` (`unique` decides
    /// the entry key layout; nil: their identifiers, the records tree's keys), sorted by
    /// entry key: what a range over the index may gain.
    func added(index name: String?, unique: Bool) -> ChangedEntries {
        if let known = addedEntries[name] { return known }
        let result = entries(index: name, unique: unique, existing: .deleted, record: newRecord)
        addedEntries[name] = result
        return result
    }

    /// The entries changed records had before the commit in index `name` (nil: their
    /// identifiers), sorted by entry key: what a range over the index may lose. A query's
    /// results in a range hold every one of these that falls in it, since the results were
    /// exact before the commit.
    func removed(index name: String?, unique: Bool) -> ChangedEntries {
        if let known = removedEntries[name] { return known }
        let result = entries(index: name, unique: unique, existing: .created, record: oldRecord)
        removedEntries[name] = result
        return result
    }

    /// The entries of the changed records that exist on one side of the commit (`absent`:
    /// the kind of change after which, or before which, the record does not exist).
    private func entries(
        index name: String?, unique: Bool, existing absent: ChangeRecord.Kind,
        record: ([UInt8]) -> StoredRecord?
    ) -> ChangedEntries {
        var keys: [[UInt8]] = [], identifiers: [[UInt8]] = []
        guard let name else {
            // The identifiers are the entry keys, already sorted.
            for entry in entries where entry.kind != absent {
                keys.append(entry.key)
                identifiers.append(entry.key)
            }
            return ChangedEntries(
                keys: keys, identifiers: identifiers, hashes: keys.map(KeyTable.hash), complete: true)
        }
        var found: [(entryKey: [UInt8], identifier: [UInt8])] = []
        var complete = true
        for entry in entries where entry.kind != absent {
            // The change's kind says the record exists on this side: not finding it (a view
            // missing or unreadable) leaves its entries unknown.
            guard let stored = record(entry.key) else {
                complete = false
                continue
            }
            for value in stored.indexKeys[name] ?? [] {
                found.append((IndexEntry.key(value: value, identifier: entry.key, unique: unique), entry.key))
            }
        }
        found.sort { KeyBytes.compare($0.entryKey, $1.entryKey) < 0 }
        keys.reserveCapacity(found.count)
        identifiers.reserveCapacity(found.count)
        for (key, identifier) in found {
            keys.append(key)
            identifiers.append(identifier)
        }
        return ChangedEntries(
            keys: keys, identifiers: identifiers, hashes: identifiers.map(KeyTable.hash), complete: complete)
    }
}

/// Entries of changed records in one index (or the identifiers themselves), sorted by entry
/// key, as parallel arrays: a query takes the run that falls in its range as array slices.
struct ChangedEntries {
    let keys: [[UInt8]]
    let identifiers: [[UInt8]]
    /// The identifiers' ``KeyTable/hash(_:)`` hashes, for the results that keep them.
    let hashes: [Int]
    /// False if a changed record could not be read on this side of the commit: its entries
    /// are missing, and a query that relies on them must re-run (or match by identifier).
    let complete: Bool

    var count: Int { keys.count }

    /// The positions of the entries in `range` (binary searches: a query's cost is the
    /// changes in its range, not the commit's).
    func positions(in range: KeyRange) -> Range<Int> {
        let lower = partitionPoint(keys.count) { range.isAboveLower(keys[$0]) }
        let upper = lower + partitionPoint(keys.count - lower) { !range.isBelowUpper(keys[lower + $0]) }
        return lower..<upper
    }
}

/// The instances one commit's observers decoded, by identifier key (old and new values), and
/// by position in ``CommitDelta/added(index:unique:)`` (what live queries over an index add).
final class DecodedChanges<Format: DatastoreFormat>: @unchecked Sendable {
    // @unchecked: used on the hub's serial queue only, with the delta that owns it.
    typealias Decoded = Result<Format.Instance, FolioError>
    var old: [HashedKey: Decoded?] = [:]
    var new: [HashedKey: Decoded?] = [:]
    /// Per index (nil: the identifiers), the new instances of its added entries.
    var added: [String?: DecodedRun<Format.Instance>] = [:]
}

/// A key's bytes, hashed in one call over the buffer (`[UInt8]`'s own hashing feeds the
/// hasher one byte at a time, which dominated matching a commit's changes against results).
struct HashedKey: Hashable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (lhs: HashedKey, rhs: HashedKey) -> Bool {
        lhs.bytes == rhs.bytes
    }
}
