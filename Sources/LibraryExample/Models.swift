import Foundation
import Folio

// MARK: Authors

/// A writer.
public struct Author: Codable, Identifiable, Sendable, Equatable {
    public var id: Int
    public var name: String
    public var born: Int

    public init(id: Int, name: String, born: Int) {
        self.id = id
        self.name = name
        self.born = born
    }
}

/// The authors datastore: found by identifier, by name, by year of birth.
public struct AuthorFormat: DatastoreFormat {
    public enum Version: String, CaseIterable, Sendable { case current = "2025-01" }
    public static let key = "authors"
    public static let currentVersion = Version.current
    public typealias Instance = Author

    public let name = Index(\Author.name)
    public let born = Index(\Author.born)

    public init() {}
}

/// The authors datastore as a next release of the app would declare it: a second version
/// and an index the first release does not have. For the tests of two releases sharing one
/// store (an app updated before its extension, Docs/Guide.md section 9); the app itself
/// declares ``AuthorFormat``.
public struct AuthorFormatNext: DatastoreFormat {
    public enum Version: String, CaseIterable, Sendable {
        case first = "2025-01"
        case next = "2026-11"
    }
    public static let key = "authors"
    public static let currentVersion = Version.next
    public typealias Instance = Author

    public let name = Index(\Author.name)
    public let born = Index(\Author.born)
    public let byIdentifier = Index(\Author.id)

    public init() {}
}

// MARK: Books

/// A book as release 1 of the app stored it: one author, no year.
public struct BookV1: Codable, Identifiable, Sendable, Equatable {
    public var id: UUID
    public var title: String
    public var authorID: Int
    public var isbn: String

    public init(id: UUID, title: String, authorID: Int, isbn: String) {
        self.id = id
        self.title = title
        self.authorID = authorID
        self.isbn = isbn
    }
}

/// A book today: several authors, a year, and a title for sorting.
public struct Book: Codable, Identifiable, Sendable, Equatable {
    public var id: UUID
    public var title: String
    public var authorIDs: [Int]
    public var isbn: String
    /// Year of publication; 0 when unknown (release 1 did not record it).
    public var year: Int

    public init(id: UUID, title: String, authorIDs: [Int], isbn: String, year: Int) {
        self.id = id
        self.title = title
        self.authorIDs = authorIDs
        self.isbn = isbn
        self.year = year
    }

    /// The title as a library sorts it: case-folded, without a leading article.
    public var sortTitle: String {
        var title = self.title.lowercased()
        for article in ["the ", "a ", "an "] where title.hasPrefix(article) {
            title.removeFirst(article.count)
            break
        }
        return title
    }

    /// Converts a release-1 book.
    public init(_ old: BookV1) {
        self.init(id: old.id, title: old.title, authorIDs: [old.authorID], isbn: old.isbn, year: 0)
    }
}

/// The books datastore as release 1 declared it.
public struct BookFormatRelease1: DatastoreFormat {
    public enum Version: String, CaseIterable, Sendable { case v1 = "2024-03" }
    public static let key = "books"
    public static let currentVersion = Version.v1
    public typealias Instance = BookV1

    public let title = Index(\BookV1.title)
    public let isbn = OneToOneIndex(\BookV1.isbn)

    public init() {}
}

/// The books datastore today: two versions, four indexes.
public struct BookFormat: DatastoreFormat {
    public enum Version: String, CaseIterable, Sendable {
        case v1 = "2024-03"
        case current = "2025-01"
    }
    public static let key = "books"
    public static let currentVersion = Version.current
    public typealias Instance = Book

    public static func decode(
        _ version: Version, from data: ArraySlice<UInt8>, using decoder: FolioJSONDecoder
    ) throws -> Book {
        switch version {
        case .v1: Book(try decoder.decode(BookV1.self, from: data))
        case .current: try decoder.decode(Book.self, from: data)
        }
    }

    /// One-to-many, over a computed property.
    public let title = Index(\Book.sortTitle)
    /// Many-to-many: every book of an author.
    public let authors = ManyToManyIndex(\Book.authorIDs)
    /// Unique, and covering: a read by ISBN needs no second lookup.
    public let isbn = OneToOneIndex(\Book.isbn, storage: .covering)
    /// One-to-many over a stored property.
    public let year = Index(\Book.year)

    public init() {}
}
