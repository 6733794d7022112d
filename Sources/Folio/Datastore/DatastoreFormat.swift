import Foundation
import FolioStorage

/// The declaration of one datastore: its key, its versions, its instance and identifier
/// types, and (as stored properties) its indexes.
///
/// ```swift
/// struct BookFormat: DatastoreFormat {
///     enum Version: String, CaseIterable { case v1 = "2024-01", current = "2025-03" }
///     static let key = "books"
///     static let currentVersion = Version.current
///     typealias Instance = Book  // Codable & Identifiable
///
///     static func decode(
///         _ version: Version, from data: ArraySlice<UInt8>,
///         using decoder: FolioJSONDecoder
///     ) throws -> Book {
///         switch version {
///         case .v1: Book(try decoder.decode(BookV1.self, from: data))
///         case .current: try decoder.decode(Book.self, from: data)
///         }
///     }
///
///     let title = Index(\Book.title)  // one-to-many
///     let isbn = OneToOneIndex(\Book.isbn)  // unique
///     let authors = ManyToManyIndex(\Book.authorIDs)
/// }
/// ```
///
/// The switch in ``decode(_:from:using:)-(_,ArraySlice<UInt8>,_)`` is exhaustive over the
/// versions, so the compiler checks that every version the store may hold has a conversion.
///
/// Records are JSON, written and read by Folio's own coders (`FolioJSONEncoder` and
/// `FolioJSONDecoder`, Docs/JSON.md), whose output Foundation's `JSONDecoder` reads to equal
/// values. A format chooses their strategies (dates, data, non-finite floats, key case) with
/// ``recordEncoder`` and ``recordDecoder``; the defaults are Foundation's.
public protocol DatastoreFormat: Sendable {
    /// The versions records may be stored in: an enum with `String` or `Int` raw values. The
    /// raw value is what is stored with each record; never change a shipped one. A format
    /// that declares none has one, ``DefaultVersion``.
    associatedtype Version: RawRepresentable & CaseIterable & Hashable & Sendable = DefaultVersion
    /// The current type of the records.
    associatedtype Instance: Codable & Sendable
    /// The type of the records' identifiers.
    associatedtype Identifier: KeyComponent & Hashable

    /// The datastore's name in its persistence.
    static var key: String { get }
    /// The version new and rewritten records are stored in.
    static var currentVersion: Version { get }
    /// Where an instance's identifier is. Defaults to `\.id` for `Identifiable` instances.
    static var identifier: KeyPath<Instance, Identifier> & Sendable { get }
    /// Decodes a record stored in `version` and converts it to the current `Instance`.
    /// `data` is the record's JSON, a slice of the bytes it is stored in (no copy), and
    /// `decoder` is ``recordDecoder``. The default decodes the current version as
    /// `Instance`, and any other version through the Foundation form of this hook,
    /// ``decode(_:from:using:)-(_,Data,_)``, so formats written for it keep working.
    static func decode(
        _ version: Version, from data: ArraySlice<UInt8>, using decoder: FolioJSONDecoder
    ) throws -> Instance
    /// The form of ``decode(_:from:using:)-(_,ArraySlice<UInt8>,_)`` that earlier releases
    /// called, with Foundation's coder: still called for records stored in a version other
    /// than the current one when a format implements it and not the new form. `decoder` is
    /// a `JSONDecoder` with ``recordDecoder``'s strategies and `userInfo` (its nesting limit
    /// is Foundation's fixed 512, whatever `recordDecoder.maximumDepth` says). New formats
    /// implement the new form, which reads with Folio's faster decoder and no copy. The
    /// default decodes every version as `Instance` with ``recordDecoder``.
    static func decode(_ version: Version, from data: Data, using decoder: JSONDecoder) throws -> Instance
    /// The encoder records are written with. Default: `FolioJSONEncoder()`, Foundation's
    /// default strategies. Read once, when the datastore is first used.
    ///
    /// A record is what it reads back as. Some settings lose information (`.iso8601` dates
    /// keep whole seconds, `.millisecondsSince1970` whole milliseconds, and
    /// `.secondsSince1970` can come back one unit in the last place off), and so can a
    /// `Codable` conformance that normalises a value or leaves a property out. Folio
    /// therefore computes a record's index values from the record decoded again with
    /// ``recordDecoder``, as any read would decode it: `load(_:from:)`, queries and scans
    /// all see the value a reader gets, never the one that was lost. (The default strategies
    /// read back every `Double`, `Date`, `Data` and `String` exactly.) A record whose
    /// identifier would read back as another value, or that would not read back at all, is
    /// refused with ``FolioError/encodingFailed(datastore:identifier:reason:)``, with or
    /// without indexes: an `init(from:)` that normalises the identifier, or an
    /// `id = UUID()` the coding keys leave out, would otherwise store records that neither
    /// identifier finds. The check costs one decode per write.
    ///
    /// Its `maximumDepth` (100 levels of arrays and objects by default) refuses a record
    /// nested deeper than ``recordDecoder`` reads: `persist` throws
    /// ``FolioError/encodingFailed(datastore:identifier:reason:)``.
    static var recordEncoder: FolioJSONEncoder { get }
    /// The decoder records are read with; its strategies must read what ``recordEncoder``
    /// writes, and its `maximumDepth` must be at least the encoder's. Default:
    /// `FolioJSONDecoder()`. Read once, when the datastore is first used. Decoding uses the
    /// reading thread's stack in proportion to a record's nesting: raise `maximumDepth` (on
    /// both coders) only for records read on threads with stack to match (Docs/JSON.md,
    /// "Nesting and the stack").
    static var recordDecoder: FolioJSONDecoder { get }

    /// Formats are created with no arguments; their stored properties declare the indexes.
    init()
}

/// The version of a format that declares none: one version, stored with each record as
/// `1`. A format needs versions only once its records change shape; until then it declares
/// neither `Version` nor `currentVersion`.
///
/// ```swift
/// struct NoteFormat: DatastoreFormat {
///     static let key = "notes"
///     typealias Instance = Note  // Codable & Identifiable
/// }
/// ```
///
/// When the shape changes, declare the versions, keeping this one's raw value for the
/// records already stored, and convert them in ``DatastoreFormat/decode(_:from:using:)-(_,ArraySlice<UInt8>,_)``:
/// `enum Version: Int, CaseIterable { case v1 = 1, v2 }`.
public enum DefaultVersion: Int, CaseIterable, Hashable, Sendable {
    /// The only version.
    case v1 = 1
}

extension DatastoreFormat where Version == DefaultVersion {
    /// ``DefaultVersion/v1``, the only version.
    public static var currentVersion: DefaultVersion { .v1 }
}

extension DatastoreFormat where Instance: Identifiable, Identifier == Instance.ID {
    public static var identifier: KeyPath<Instance, Identifier> & Sendable { \Instance.id }
}

extension DatastoreFormat {
    /// Decodes the current version as `Instance`; any other version goes to the Foundation
    /// form of the hook (whose default decodes it as `Instance` too), with a `JSONDecoder`
    /// configured as `decoder`: the same date, data, non-finite float and key strategies and
    /// the same `userInfo`. Only `maximumDepth` has no Foundation setting: that decoder
    /// accepts 512 levels of nesting.
    public static func decode(
        _ version: Version, from data: ArraySlice<UInt8>, using decoder: FolioJSONDecoder
    ) throws -> Instance {
        if version == currentVersion { return try decoder.decode(Instance.self, from: data) }
        // The record was written with the format's strategies: a default JSONDecoder would
        // not read its ISO 8601 dates, snake-case keys or converted non-finite floats.
        return try decode(version, from: Data(data), using: decoder.foundationDecoder)
    }

    /// Decodes every version as `Instance`, with ``recordDecoder`` (not the Foundation
    /// decoder passed in): what formats that implement neither hook get.
    public static func decode(_ version: Version, from data: Data, using decoder: JSONDecoder) throws -> Instance {
        try recordDecoder.decode(Instance.self, from: data)
    }

    /// Foundation's default strategies.
    public static var recordEncoder: FolioJSONEncoder { FolioJSONEncoder() }
    /// Foundation's default strategies.
    public static var recordDecoder: FolioJSONDecoder { FolioJSONDecoder() }

    /// The tag a version is stored under: its raw value as text.
    static func tag(of version: Version) -> String { "\(version.rawValue)" }

    /// The version stored under `tag`, if the format declares one.
    static func version(tagged tag: String) -> Version? {
        Version.allCases.first { Self.tag(of: $0) == tag }
    }
}

/// Index values and identifiers whose type is an enum (or any raw-representable wrapper)
/// get their key encoding from the raw value: `enum Color: Int, Codable, KeyComponent {}`.
extension KeyComponent where Self: RawRepresentable, Self.RawValue: KeyComponent {
    /// Appends the raw value's key.
    public func appendKey(to encoder: inout KeyEncoder) {
        encoder.append(rawValue)
    }

    /// Reads a raw value's key; a raw value no case has is an invalid key.
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Self {
        let raw = try decoder.decode(RawValue.self)
        guard let value = Self(rawValue: raw) else {
            throw .invalidKey(reason: "\(raw) is not a raw value of \(Self.self)")
        }
        return value
    }
}
