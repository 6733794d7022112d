import Foundation
import Testing
@_spi(Engine) import Folio
import FolioStorage

/// The test model: authors and books (several authors each, a unique ISBN).
struct Author: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var name: String
    var born: Int
}

struct Book: Codable, Identifiable, Sendable, Equatable {
    var id: UUID
    var title: String
    var authorIDs: [Int]
    var isbn: String
    var year: Int
    var titleAndYear: (String, Int) { (title, year) }

    enum CodingKeys: String, CodingKey { case id, title, authorIDs, isbn, year }
}

struct AuthorFormat: DatastoreFormat {
    enum Version: Int, CaseIterable { case current = 1 }
    static let key = "authors"
    static let currentVersion = Version.current
    typealias Instance = Author

    let name = Index(\Author.name)
    let born = Index(\Author.born)
}

struct BookFormat: DatastoreFormat {
    enum Version: String, CaseIterable { case current = "2026-01" }
    static let key = "books"
    static let currentVersion = Version.current
    typealias Instance = Book

    let title = Index(\Book.title)
    let isbn = OneToOneIndex(\Book.isbn, storage: .covering)
    let authors = ManyToManyIndex(\Book.authorIDs)
    let year = Index(\Book.year)
    let titleAndYear = Index(\Book.titleAndYear)
}

/// A deterministic book.
func makeBook(_ n: Int, authors: [Int]? = nil) -> Book {
    Book(
        id: UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", n))!,
        title: "Title \(String(format: "%05d", n % 1000))", authorIDs: authors ?? [n % 7, (n + 3) % 7],
        isbn: String(format: "978-%09d", n), year: 1900 + n % 120)
}

/// A fresh disk persistence in a temporary directory, removed by the returned closure.
func diskPersistence(_ label: String = "folio") throws -> (Persistence<ReadWrite>, path: String, cleanup: () -> Void) {
    let path = FileManager.default.temporaryDirectory.path + "/\(label)-\(UUID().uuidString)"
    let persistence = try Persistence(at: path, options: PersistenceOptions(autoCompaction: nil, log: { _ in }))
    return (
        persistence, path,
        {
            persistence.close()
            try? FileManager.default.removeItem(atPath: path)
        }
    )
}

/// Verifies the engine and index/record agreement: every test that touches a store ends so.
func expectSound(_ persistence: Persistence<some AccessMode>, sourceLocation: SourceLocation = #_sourceLocation) {
    let report = persistence.verify()
    #expect(report.isClean, "verify: \(report.lines.prefix(3))", sourceLocation: sourceLocation)
}
