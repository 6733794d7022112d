import Foundation
@_spi(Engine) import Folio
import FolioStorage
import LibraryExample

/// Options for stores the tests build: quiet, no automatic compaction, replaced files
/// removed at once.
let quietOptions = PersistenceOptions(
    autoCompaction: nil, retention: SnapshotRetention(gracePeriod: .zero), log: { _ in })

/// A store of the worked example, built in this process: release-1 books left in their old
/// version, then today's authors and books, some books revised (so there are dead bytes).
struct LibraryFixture {
    let path: String
    let authors: [Author]
    /// Today's books, as last written.
    let books: [Book]
    /// Release-1 books, still stored in version 2024-03.
    let oldBooks: [BookV1]

    static func make(at path: String, books count: Int = 150, compacted: Bool = false) async throws -> LibraryFixture {
        let old = SampleData.oldBooks(30, offset: 10_000, authors: 10)
        try await Release1.store(old, at: path, options: quietOptions)
        let library = try Library(at: path, options: quietOptions)
        defer { library.persistence.close() }
        let authors = SampleData.authors(10)
        var books = SampleData.books(count, authors: 10)
        try await library.persistence.perform {
            for author in authors { try await library.add(author) }
            for book in books { try await library.books.persist(book) }
        }
        for index in 0..<5 {
            books[index].title += " (Revised)"
            try await library.books.persist(books[index])
        }
        if compacted { try library.persistence.store.compact() }
        return LibraryFixture(path: path, authors: authors, books: books, oldBooks: old)
    }

    /// Every book as today's app reads it, old ones converted.
    var allBooks: [Book] { books + oldBooks.map(Book.init) }
}

/// Large records with no index, for a store of a few MiB (progress output).
struct Blob: Codable, Identifiable, Sendable, Equatable {
    var id: Int
    var text: String
}

struct BlobFormat: DatastoreFormat {
    enum Version: String, CaseIterable, Sendable { case current = "1" }
    static let key = "blobs"
    static let currentVersion = Version.current
    typealias Instance = Blob
}

/// A store of `count` blobs of about 1 KiB each.
func makeBlobStore(at path: String, count: Int) async throws {
    let persistence = try Persistence(at: path, options: quietOptions)
    defer { persistence.close() }
    let blobs = persistence.datastore(for: BlobFormat.self)
    let text = String(repeating: "folio ", count: 170)
    try await persistence.perform {
        for id in 0..<count { try await blobs.persist(Blob(id: id, text: "\(id) \(text)")) }
    }
}

/// The current snapshot file of a store: the one with the highest number.
func currentSnapshot(of store: String) throws -> String {
    let names = try FileManager.default.contentsOfDirectory(atPath: "\(store)/snapshots").filter {
        $0.hasSuffix(".folio")
    }.sorted()
    return "\(store)/snapshots/\(names.last!)"
}
