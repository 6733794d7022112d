import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage

@Suite struct DatastoreBasicsTests {
    static func persistences() throws -> [(String, Persistence<ReadWrite>, () -> Void)] {
        let (disk, _, cleanup) = try diskPersistence()
        return [
            ("disk", disk, cleanup),
            ("memory", Persistence.inMemory(options: PersistenceOptions(autoCompaction: nil)), {}),
        ]
    }

    @Test func persistLoadReplaceDelete() async throws {
        for (label, persistence, cleanup) in try Self.persistences() {
            defer { cleanup() }
            let books = persistence.datastore(for: BookFormat.self)
            let book = makeBook(1)
            #expect(try await books.persist(book) == nil, "\(label)")
            #expect(try await books.load(book.id) == book)
            var changed = book
            changed.title = "Changed"
            #expect(try await books.persist(changed) == book, "persist returns the replaced instance")
            #expect(try await books.load(book.id) == changed)
            #expect(try await books.count() == 1)
            #expect(try await books.load(book.isbn, from: \.isbn) == changed)
            #expect(try await books.load("Changed", from: \.title).collect() == [changed])
            #expect(try await books.load(book.title, from: \.title).collect().isEmpty, "old index entry removed")
            #expect(try await books.delete(book.id) == changed)
            #expect(try await books.load(book.id) == nil)
            #expect(try await books.deleteIfPresent(book.id) == nil)
            await #expect(throws: FolioError.instanceNotFound(datastore: "books", identifier: book.id.uuidString)) {
                try await books.delete(book.id)
            }
            #expect(try await books.count() == 0)
            #expect(try await books.load(book.isbn, from: \.isbn) == nil)
            expectSound(persistence)
        }
    }

    @Test func readsThroughEveryIndexKind() async throws {
        let persistence = Persistence.inMemory()
        let books = persistence.datastore(for: BookFormat.self)
        let all = (0..<300).map { makeBook($0) }
        try await persistence.perform {
            for book in all { try await books.persist(book) }
        }
        #expect(try await books.count() == 300)
        // One-to-many: exact value, ranges, order, limit.
        let byYear = try await books.load(1950, from: \.year).collect()
        #expect(Set(byYear.map(\.id)) == Set(all.filter { $0.year == 1950 }.map(\.id)))
        let range = try await books.load(1950..<1960, from: \.year).collect()
        #expect(range.map(\.year) == all.filter { (1950..<1960).contains($0.year) }.map(\.year).sorted())
        let closed = try await books.count(1950...1960, from: \.year)
        #expect(closed == all.filter { (1950...1960).contains($0.year) }.count)
        let descending = try await books.load(2000..., from: \.year, order: .descending, limit: 5).collect()
        #expect(descending.map(\.year) == Array(all.map(\.year).filter { $0 >= 2000 }.sorted(by: >).prefix(5)))
        #expect(try await books.load(..<1901, from: \.year).collect().allSatisfy { $0.year < 1901 })
        #expect(try await books.load(...1901, from: \.year).collect().allSatisfy { $0.year <= 1901 })
        // Many-to-many: every book of an author.
        let byAuthor3 = try await books.load(3, from: \.authors).collect()
        #expect(Set(byAuthor3.map(\.id)) == Set(all.filter { $0.authorIDs.contains(3) }.map(\.id)))
        #expect(try await books.count(3, from: \.authors) == byAuthor3.count)
        // One-to-one (covering).
        #expect(try await books.load(all[42].isbn, from: \.isbn) == all[42])
        #expect(
            try await books.load("978-000000100"..."978-000000104", from: \.isbn).collect().map(\.isbn)
                == (100...104).map { String(format: "978-%09d", $0) })
        // Composite: (title, year), ordered by title then year.
        let composite = try await books.load(
            Composite("Title 00010", 1900)..<Composite("Title 00011", 0), from: \.titleAndYear
        ).collect()
        #expect(!composite.isEmpty && composite.allSatisfy { $0.title == "Title 00010" })
        #expect(composite.map(\.year) == composite.map(\.year).sorted())
        // Identifier ranges and all.
        #expect(try await books.load(...).collect().count == 300)
        #expect(
            try await books.load(..., order: .descending, limit: 3).collect().map(\.id)
                == all.map(\.id).sorted { $0 > $1 }.prefix(3).map { $0 })
        #expect(try await books.count(all[10].id..<all[20].id) == 10)
        #expect(try await books.first(where: #Predicate { $0.authorIDs.contains(4) }) != nil)
        expectSound(persistence)
    }

    @Test func rangedDeletes() async throws {
        let persistence = Persistence.inMemory()
        let books = persistence.datastore(for: BookFormat.self)
        try await persistence.perform { for n in 0..<200 { try await books.persist(makeBook(n)) } }
        let years = try await books.count(1900..<1910, from: \.year)
        #expect(try await books.delete(1900..<1910, from: \.year) == years)
        #expect(try await books.count(1900..<1910, from: \.year) == 0)
        #expect(try await books.count() == 200 - years)
        let ids = try await books.load(...).collect().map(\.id)
        #expect(try await books.delete(ids[0]..<ids[10]) == 10)
        #expect(try await books.delete(5, from: \.authors) > 0)
        #expect(try await books.count(5, from: \.authors) == 0)
        let remaining = try await books.count()
        #expect(try await books.delete(...) == remaining)
        #expect(try await books.count() == 0)
        #expect(try await books.load(..., from: \.isbn).collect().isEmpty)
        expectSound(persistence)
    }
}

/// Importing Folio must not change the meaning of Swift's own range members.
@Suite struct NamespaceTests {
    @Test func rangeMembersStayUnambiguous() {
        let range = 1..<5
        let lower = range.lowerBound  // ambiguous if Folio added a second `lowerBound`
        let closed = 1...5
        #expect(lower + closed.upperBound == 6)
    }
}
