import Foundation
import Synchronization
import FolioStorage
/// One declared index, resolved: its name (the format's property name), definition and tree.
///
/// A class, immutable: plans, scans and index entries carry it by reference. Query and
/// batch code is generic over the format and not specialized for the caller's types, so
/// copying a struct of strings and closures went through its type's metadata and value
/// witnesses on every entry read or record written; a reference is one retain.
final class SchemaIndex<Instance>: Sendable {
    let name: String
    let definition: IndexDefinition<Instance>
    let tree: String

    init(name: String, definition: IndexDefinition<Instance>, tree: String) {
        self.name = name
        self.definition = definition
        self.tree = tree
    }

    var unique: Bool { definition.kind == .oneToOne }
    var covering: Bool { definition.storage == .covering }
    /// What writing its entries needs, as a plain value.
    var layout: IndexLayout { IndexLayout(name: name, tree: tree, unique: unique, covering: covering) }
    /// Whether a value's entries are its key followed by more bytes (an identifier), so that a
    /// read of one value is a prefix range: every non-unique index, and a unique one whose nil
    /// entries carry their identifier. (Keys are prefix-free, so for any other value of a
    /// unique index the prefix range is exactly its one key.)
    var suffixedRanges: Bool { !unique || definition.nilIsDistinct }
}

/// What writing one index's entries needs, as a plain value: the write path's loops over a
/// datastore's indexes read these (``DatastoreSchema/indexLayouts``) rather than the array of
/// generic ``SchemaIndex``, whose every traversal in code not specialized for the caller's
/// types instantiated generic metadata (a few per cent of a record write).
struct IndexLayout: Sendable {
    let name: String
    let tree: String
    let unique: Bool
    let covering: Bool
}

/// A datastore's declaration, resolved once: the format instance, the indexes found on it by
/// reflection, tree names, and the signature checked against the store.
final class DatastoreSchema<Format: DatastoreFormat>: Sendable {
    let format: Format
    let key: String
    let recordsTree: String
    let indexes: [SchemaIndex<Format.Instance>]
    /// `indexes`' layouts, position for position.
    let indexLayouts: [IndexLayout]
    private let indexByDeclaration: [UInt64: Int]
    let currentTag: String
    /// Version tags to versions, built once (formatting each raw value on every read costs).
    let versionsByTag: [String: Format.Version]
    /// `Format.identifier`, resolved once: the requirement is often a computed property
    /// that builds a new key path on every call, which costs more than a JSON field.
    let identifierPath: KeyPath<Format.Instance, Format.Identifier> & Sendable
    /// Reads `identifierPath` from an instance, directly where it is a stored property.
    let identifierReader: StoredPropertyReader<Format.Instance, Format.Identifier>
    let signature: DatastoreSignature
    /// The count of catalog changes by other writers (`PersistenceCore.catalogChanges`) at
    /// which this declaration is known registered and prepared in its persistence (a
    /// read-write one), -1 before: while the count has not moved, `prepare` returns at once
    /// instead of comparing the declaration with the registry on every read. A schema
    /// belongs to one `Datastore` value, so to one persistence.
    let knownReadyAt = Atomic<Int>(-1)

    /// Whether this declaration is known prepared in `core` as of now.
    func isKnownReady(in core: PersistenceCore) -> Bool {
        knownReadyAt.load(ordering: .acquiring) == core.catalogChanges.count
    }
    /// Whether two identifiers are `==` exactly when their keys are equal (integers, `Bool`,
    /// `UUID`, `String`): then a point query needs no check of the predicate on the record
    /// it finds (DatastoreSchema+PointQuery.swift). Not for `Double` (`-0.0 == 0.0`, NaN) and
    /// types whose `==` the key encoding does not know.
    let identifierKeyIsExact: Bool
    /// Whether the record cache may keep this datastore's instances: not when they are of
    /// class type, which callers may change (Cache/DatastoreSchema+RecordCache.swift).
    let cachesInstances: Bool
    /// `Format.recordEncoder` and `Format.recordDecoder`, read once.
    let encoder: FolioJSONEncoder
    let decoder: FolioJSONDecoder
    /// Why the declaration itself is unusable, if it is (reported on first use).
    let declarationProblem: String?
    /// Key paths a query named, and whether each is the identifier (QueryPlanner): working
    /// it out prints the key path, which costs more than a point lookup, so once per key
    /// path object, each kept with its key path so that the object's identifier is not
    /// reused (DatastoreSchema+PointQuery.swift).
    let identifierKeyPathObjects = Mutex<[ObjectIdentifier: (path: KeyPathKey, isIdentifier: Bool)]>([:])
    /// Predicate expression types a point query met, and how to read an equality out of
    /// each (nil: not an equality), so the conformance is looked up once per type
    /// (DatastoreSchema+PointQuery.swift).
    let equalityReaders = Mutex<[ObjectIdentifier: EqualityReader?]>([:])
    /// The records the built indexes leave out, as plans must read them (Query/IndexGaps.swift).
    let gapsCache = Mutex<IndexGapsCache?>(nil)

    init() {
        let format = Format()
        self.format = format
        key = Format.key
        recordsTree = DatastoreLayout.recordsTree(Format.key)
        currentTag = Format.tag(of: Format.currentVersion)
        versionsByTag = Dictionary(
            Format.Version.allCases.map { (Format.tag(of: $0), $0) }, uniquingKeysWith: { first, _ in first })
        identifierPath = Format.identifier
        identifierReader = StoredPropertyReader(identifierPath)
        identifierKeyIsExact = Format.Identifier.self is any EqualityExactKey.Type
        cachesInstances = !(Format.Instance.self is AnyObject.Type)
        encoder = Format.recordEncoder
        decoder = Format.recordDecoder
        var indexes: [SchemaIndex<Format.Instance>] = []
        var byDeclaration: [UInt64: Int] = [:]
        var problem: String? = nil
        for child in Mirror(reflecting: format).children {
            guard let declaration = child.value as? any IndexDeclaration<Format.Instance>, var name = child.label else {
                continue
            }
            if name.hasPrefix("_") { name.removeFirst() }
            if name.utf8.count > 100 { problem = "index name \(name) is longer than 100 bytes" }
            byDeclaration[declaration.definition.id] = indexes.count
            indexes.append(
                SchemaIndex(
                    name: name, definition: declaration.definition,
                    tree: DatastoreLayout.indexTree(Format.key, name)))
        }
        for tag in Format.Version.allCases.map(Format.tag(of:)) where tag.utf8.count > StoredRecord.maximumVersionLength
        {
            problem = "version tag \(tag.prefix(20))… is longer than \(StoredRecord.maximumVersionLength) bytes"
        }
        if Format.key.isEmpty || Format.key.utf8.count > DatastoreLayout.maximumKeyLength {
            problem = "the datastore key must be 1 to \(DatastoreLayout.maximumKeyLength) bytes"
        }
        self.indexes = indexes
        indexLayouts = indexes.map(\.layout)
        indexByDeclaration = byDeclaration
        declarationProblem = problem
        signature = DatastoreSignature(
            instanceType: TypeName.of(Format.Instance.self), identifierType: TypeName.of(Format.Identifier.self),
            versions: Format.Version.allCases.map { Format.tag(of: $0) },
            currentVersion: Format.tag(of: Format.currentVersion),
            indexes: Dictionary(uniqueKeysWithValues: indexes.map { ($0.name, $0.definition.fingerprint) }))
    }

    /// The index declared by the property at `path` of the format.
    func index<Declaration: IndexDeclaration>(_ path: KeyPath<Format, Declaration>) -> SchemaIndex<Format.Instance>
    where Declaration.Instance == Format.Instance {
        let id = format[keyPath: path].definition.id
        guard let position = indexByDeclaration[id] else {
            preconditionFailure("\(path) is not a stored index property of \(Format.self)")
        }
        return indexes[position]
    }

    func index(named name: String) -> SchemaIndex<Format.Instance>? {
        indexes.first { $0.name == name }
    }

    // MARK: Records

    func identifierKey(of instance: Format.Instance) -> [UInt8] {
        var encoder = KeyEncoder(reservingCapacity: 24)
        encoder.append(identifierReader.read(instance))
        return encoder.bytes
    }

    /// ``describe(identifierKey:)`` of an identifier key read in place.
    func describe(identifierKey bytes: ArraySlice<UInt8>) -> String { describe(identifierKey: Array(bytes)) }

    func describe(identifierKey bytes: [UInt8]) -> String {
        var decoder = KeyDecoder(bytes)
        guard let identifier = try? decoder.decode(Format.Identifier.self) else { return "\(bytes)" }
        return String(describing: identifier)
    }

    /// `StoredRecord.encode`, its refusals reported as ``FolioError/encodingFailed(datastore:identifier:reason:)``.
    func encodeRecord(
        version: String, indexKeys: [(name: String, keys: [[UInt8]])], payload: [UInt8],
        identifier: () -> String
    ) throws(FolioError) -> [UInt8] {
        do {
            return try StoredRecord.encode(version: version, indexKeys: indexKeys, payload: payload)
        } catch {
            throw .encodingFailed(datastore: key, identifier: identifier(), reason: error.description)
        }
    }

    /// The encoded values `instance` has in `index` (what its entries are keyed by).
    func indexValues(
        _ index: SchemaIndex<Format.Instance>, of instance: Format.Instance, identifier: [UInt8]?
    ) -> [[UInt8]] {
        let values = index.definition.values(instance)
        // A unique index does not constrain nil: each record's nil value is keyed by nil's
        // encoding (0x00, below every other value) followed by the record's identifier, so
        // that nil values never collide and a prefix read of nil finds them all.
        guard index.definition.nilIsDistinct, values == [Self.nilKey] else { return values }
        return [Self.nilKey + (identifier ?? identifierKey(of: instance))]
    }

    /// The key encoding of `Optional.none`.
    static var nilKey: [UInt8] { [0x00] }

    func parseRecord(_ bytes: [UInt8], identifier: [UInt8]) throws(FolioError) -> StoredRecord {
        guard let record = StoredRecord.decode(bytes) else {
            throw .corruptRecord(datastore: key, detail: "record \(describe(identifierKey: identifier)) is malformed")
        }
        return record
    }

    /// Decodes a stored record, converting it from the version it was stored in.
    func decode(
        _ record: StoredRecord, identifier: [UInt8], core: PersistenceCore
    ) throws(FolioError) -> Format.Instance {
        try decode(version: record.version, payload: record.payload[...], identifier: identifier[...], core: core)
    }

    /// The record decoded, or nil if it no longer decodes (its type changed, its version is
    /// unknown, or its migration throws for it); other errors are thrown. Replacing,
    /// indexing and migrateAndReindex must work around such a record, never stop at it.
    func decodeIfReadable(
        _ record: StoredRecord, identifier: [UInt8], core: PersistenceCore
    ) throws(FolioError) -> Format.Instance? {
        do throws(FolioError) {
            return try decode(record, identifier: identifier, core: core)
        } catch {
            switch error {
            case .decodingFailed, .unknownVersion: return nil
            default: throw error
            }
        }
    }

    /// Decodes stored record bytes read in place (a slice of the page that holds them): the
    /// header is skipped, not parsed into index keys, and the JSON is decoded where it lies.
    func decode(
        _ bytes: ArraySlice<UInt8>, identifier: [UInt8], core: PersistenceCore
    ) throws(FolioError) -> Format.Instance {
        try decode(bytes, identifier: identifier[...], core: core)
    }

    /// (The identifier is only named in errors: a slice, so a scan copies no key.)
    func decode(
        _ bytes: ArraySlice<UInt8>, identifier: ArraySlice<UInt8>, core: PersistenceCore
    ) throws(FolioError) -> Format.Instance {
        guard let (tag, start) = StoredRecord.header(bytes) else {
            throw .corruptRecord(datastore: key, detail: "record \(describe(identifierKey: identifier)) is malformed")
        }
        return try decode(version: tag, payload: bytes[start...], identifier: identifier, core: core)
    }

    private func decode(
        version tag: String, payload: ArraySlice<UInt8>, identifier: ArraySlice<UInt8>, core: PersistenceCore
    ) throws(FolioError) -> Format.Instance {
        // Almost every record is in the current version: two small strings compare in a few
        // instructions, where the dictionary would hash the tag.
        let version: Format.Version
        if tag == currentTag {
            version = Format.currentVersion
        } else if let stored = versionsByTag[tag] {
            version = stored
        } else {
            throw .unknownVersion(datastore: key, identifier: describe(identifierKey: identifier), version: tag)
        }
        do {
            return try Format.decode(version, from: payload, using: decoder)
        } catch {
            throw .decodingFailed(
                datastore: key, identifier: describe(identifierKey: identifier), version: tag, reason: "\(error)")
        }
    }
}

/// A key path as a dictionary key across threads: key paths are immutable values (the
/// standard library does not mark `AnyKeyPath` `Sendable` only because subclasses could
/// add state; theirs do not).
struct KeyPathKey: Hashable, @unchecked Sendable {
    let path: AnyKeyPath
}
