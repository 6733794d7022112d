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
///     typealias Instance = Book                     // Codable & Identifiable
///
///     static func decode(_ version: Version, from data: Data, using decoder: JSONDecoder) throws -> Book {
///         switch version {
///         case .v1: Book(try decoder.decode(BookV1.self, from: data))
///         case .current: try decoder.decode(Book.self, from: data)
///         }
///     }
///
///     let title = Index(\Book.title)                // one-to-many
///     let isbn = OneToOneIndex(\Book.isbn)          // unique
///     let authors = ManyToManyIndex(\Book.authorIDs)
/// }
/// ```
///
/// The switch in ``decode(_:from:using:)`` is exhaustive over the versions, so the compiler
/// checks that every version the store may hold has a conversion.
public protocol DatastoreFormat: Sendable {
    /// The versions records may be stored in: an enum with `String` or `Int` raw values. The
    /// raw value is what is stored with each record; never change a shipped one.
    associatedtype Version: RawRepresentable & CaseIterable & Hashable & Sendable
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
    /// The default decodes every version as `Instance`.
    static func decode(_ version: Version, from data: Data, using decoder: JSONDecoder) throws -> Instance

    /// Formats are created with no arguments; their stored properties declare the indexes.
    init()
}

extension DatastoreFormat where Instance: Identifiable, Identifier == Instance.ID {
    public static var identifier: KeyPath<Instance, Identifier> & Sendable { \Instance.id }
}

extension DatastoreFormat {
    public static func decode(_ version: Version, from data: Data, using decoder: JSONDecoder) throws -> Instance {
        try decoder.decode(Instance.self, from: data)
    }

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
