import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage
import FolioTestSupport
import LibraryExample

/// Stores written by each format version through the Folio API: the worked example with 120
/// release-1 books (not migrated), 400 current books and 30 authors, under
/// Fixtures/v<N>/library. Later versions must keep reading them, old records included.
/// `FOLIO_WRITE_FIXTURES=1 swift test --filter LibraryFixtureTests` writes the current
/// version's again (never a released version's: Fixtures/v1 is frozen).
@Suite(.serialized) struct LibraryFixtureTests {
    static func fixture(_ version: String) -> String {
        ProjectExecutable.packageRoot() + "/Fixtures/\(version)/library"
    }
    static let versions = ["v1", "v2"]

    @Test func writesFixtureWhenAsked() async throws {
        guard ProcessInfo.processInfo.environment["FOLIO_WRITE_FIXTURES"] == "1" else { return }
        let fixture = Self.fixture("v2")
        try? FileManager.default.removeItem(atPath: fixture)
        let options = PersistenceOptions(autoCompaction: nil, log: { _ in })
        try await Release1.store(SampleData.oldBooks(120, offset: 5_000, authors: 30), at: fixture, options: options)
        let library = try Library(at: fixture, options: options)
        for author in SampleData.authors(30) { try await library.add(author) }
        try await library.persistence.perform {
            for book in SampleData.books(400, authors: 30) { try await library.books.persist(book) }
        }
        library.persistence.close()
        try? FileManager.default.removeItem(atPath: fixture + "/lock")
    }

    @Test(arguments: versions)
    func libraryReadsExactly(version: String) async throws {
        let persistence = try Persistence(
            readingFrom: Self.fixture(version), options: PersistenceOptions(log: { _ in }))
        defer { persistence.close() }
        let books = persistence.datastore(for: LibraryExample.BookFormat.self)
        let authors = persistence.datastore(for: LibraryExample.AuthorFormat.self)
        #expect(try await books.count() == 520)
        #expect(try await authors.count() == 30)
        // A release-1 record reads converted; a current one as stored.
        let old = SampleData.oldBooks(1, offset: 5_007, authors: 30)[0]
        #expect(try await books.load(old.id) == LibraryExample.Book(old))
        let current = SampleData.books(400, authors: 30)[123]
        #expect(try await books.load(current.id) == current)
        // Every index kind, over both shapes.
        #expect(try await books.load(old.isbn, from: \.isbn) == LibraryExample.Book(old))
        let byAuthor = try await books.load(7, from: \.authors).collect()
        let expected =
            SampleData.oldBooks(120, offset: 5_000, authors: 30).filter { $0.authorID == 7 }.count
            + SampleData.books(400, authors: 30).filter { $0.authorIDs.contains(7) }.count
        #expect(byAuthor.count == expected)
        #expect(
            try await books.count(1960..<1970, from: \.year)
                == SampleData.books(400, authors: 30).filter { (1960..<1970).contains($0.year) }.count)
        #expect(try await authors.load("Ada Okafor", from: \.name).collect().map(\.id) == [0])
        // Without the Swift types.
        let inspector = StoreInspector(store: persistence.store)
        #expect(try inspector.versionsPresent(in: "books") == ["2024-03": 120, "2025-01": 400])
        #expect(try inspector.datastore("books").indexes.map(\.name) == ["authors", "isbn", "title", "year"])
        #expect(persistence.verify().isClean)
    }

    @Test(arguments: versions)
    func libraryUpgradesInACopy(version: String) async throws {
        let copy = FileManager.default.temporaryDirectory.path + "/library-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: Self.fixture(version), toPath: copy)
        let library = try Library(at: copy, options: PersistenceOptions(log: { _ in }))
        defer { library.persistence.close() }
        try await library.upgrade()
        #expect(try StoreInspector(store: library.persistence.store).versionsPresent(in: "books") == ["2025-01": 520])
        #expect(library.persistence.verify().isClean)
    }
}
