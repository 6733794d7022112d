import Testing
import Foundation
import Folio
import FolioTestSupport
import LibraryExample

/// README.md's format example, as it is printed there (the guide's `Book` and `BookV1`).
/// `ReadmeTests` checks that the README's block is this code, so the README cannot teach
/// a declaration that no longer compiles, or an out-of-date one.
enum Readme {
    // The test target has a `Book` of its own.
    typealias Book = LibraryExample.Book
    typealias BookV1 = LibraryExample.BookV1

    struct BookFormat: DatastoreFormat {
        enum Version: String, CaseIterable { case v1 = "2024-03", current = "2025-01" }
        static let key = "books"
        static let currentVersion = Version.current
        typealias Instance = Book  // Codable & Identifiable

        static func decode(
            _ version: Version, from data: ArraySlice<UInt8>, using decoder: FolioJSONDecoder
        ) throws -> Book {
            switch version {  // migrations: one case per version
            case .v1: Book(try decoder.decode(BookV1.self, from: data))
            case .current: try decoder.decode(Book.self, from: data)
            }
        }

        let title = Index(\Book.sortTitle)  // one-to-many, computed key path
        let authors = ManyToManyIndex(\Book.authorIDs)  // each element is a value
        let isbn = OneToOneIndex(\Book.isbn, storage: .covering)  // unique; entry holds the record
    }
}

@Suite struct ReadmeTests {
    /// The README's format declaration is the compiled one above, line for line (indentation
    /// aside), and it shows the current migration hook.
    @Test func theFormatExampleIsCompiledCode() throws {
        let readme = ProjectExecutable.packageRoot() + "/README.md"
        let formats = try DocumentedCode.swiftBlocks(inFile: readme).filter { $0.contains(": DatastoreFormat") }
        try #require(formats.count == 1)
        let source = DocumentedCode.normalized(try String(contentsOfFile: #filePath, encoding: .utf8))
        #expect(
            DocumentedCode.source(source, contains: DocumentedCode.normalized(formats[0])),
            "README.md's format example is not the code compiled in ReadmeTests.swift:\n\(formats[0])")
        #expect(formats[0].contains("from data: ArraySlice<UInt8>, using decoder: FolioJSONDecoder"))
    }

    /// The example works: it reads records release 1 wrote, converting them, and finds them
    /// through each of its indexes.
    @Test func theFormatExampleMigratesAndIndexes() async throws {
        let first = Persistence.inMemory()
        let old = SampleData.oldBooks(20, offset: 0, authors: 5)
        let release1 = first.datastore(for: BookFormatRelease1.self)
        try await first.perform {
            for book in old { try await release1.persist(book) }
        }
        let next = try first.reopened()
        defer { next.close() }
        let books = next.datastore(for: Readme.BookFormat.self)
        let sample = try #require(old.first)
        #expect(try await books.load(sample.id) == Readme.Book(sample))
        #expect(try await books.load(sample.isbn, from: \.isbn) == Readme.Book(sample))
        #expect(
            try await books.count(sample.authorID, from: \.authors)
                == old.filter { $0.authorID == sample.authorID }.count)
        #expect(try await books.load(...).collect().count == 20)
        #expect(
            try await books.load(..., from: \.title).collect().map(\.sortTitle)
                == old.map { Readme.Book($0).sortTitle }.sorted())
        expectSound(next)
    }
}
