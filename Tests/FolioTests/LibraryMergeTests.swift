import Testing
import Foundation
import Folio
import LibraryExample

/// The guide's `Library.merge(author:into:)` at its edges: an author merged into itself is
/// kept, and a duplicate already deleted does not undo the rewrite of its books.
@Suite struct LibraryMergeTests {
    static func library() throws -> (Library, path: String) {
        let path = FileManager.default.temporaryDirectory.path + "/merge-\(UUID().uuidString)"
        return (try Library(at: path, options: PersistenceOptions(autoCompaction: nil, log: { _ in })), path)
    }

    static func book(_ n: Int, authors: [Int]) -> LibraryExample.Book {
        LibraryExample.Book(
            id: SampleData.bookID(n), title: SampleData.title(n), authorIDs: authors, isbn: "isbn-\(n)", year: 2000 + n)
    }

    @Test func anAuthorMergedIntoItselfIsKept() async throws {
        let (library, path) = try Self.library()
        defer { try? FileManager.default.removeItem(atPath: path) }
        defer { library.persistence.close() }
        try await library.add(LibraryExample.Author(id: 1, name: "Ann", born: 1950))
        try await library.publish(Self.book(1, authors: [1]))
        #expect(try await library.merge(author: 1, into: 1) == 0)
        #expect(try await library.authors.load(1)?.name == "Ann")
        #expect(try await library.books(by: 1).map(\.id) == [SampleData.bookID(1)])
    }

    @Test func booksOfAnAuthorAlreadyDeletedAreStillRewritten() async throws {
        let (library, path) = try Self.library()
        defer { try? FileManager.default.removeItem(atPath: path) }
        defer { library.persistence.close() }
        try await library.add(LibraryExample.Author(id: 1, name: "Ann", born: 1950))
        try await library.add(LibraryExample.Author(id: 2, name: "A. Ann", born: 1950))
        try await library.publish(Self.book(1, authors: [2]))
        try await library.publish(Self.book(2, authors: [1, 2]))
        try await library.authors.delete(2)
        #expect(try await library.merge(author: 2, into: 1) == 2)
        #expect(try await library.books(by: 2).isEmpty)
        #expect(try await library.books(by: 1).map(\.authorIDs) == [[1], [1]])
        #expect(try await library.authors.count() == 1)
    }
}
