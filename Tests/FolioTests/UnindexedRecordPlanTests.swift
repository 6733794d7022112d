import Testing
import Foundation
import Folio

/// A unique index declared over records that already share a value is built without the
/// duplicates (Guide.md, "Evolve indexes"). Queries must still see every record: a plan
/// that reads such an index also reads the records its build left out, or, when the
/// catalog does not list them all, does not use the index.
@Suite struct UnindexedRecordPlanTests {
    struct Book: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var isbn: String
        var serial: Int
    }

    /// Release 1: no index.
    struct Release1: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "books"
        static let currentVersion = Version.one
        typealias Instance = Book
    }

    /// Release 2: unique indexes over values release 1 stored twice.
    struct Release2: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "books"
        static let currentVersion = Version.one
        typealias Instance = Book
        let isbn = OneToOneIndex(\Book.isbn)
        let serial = OneToOneIndex(\Book.serial)
    }

    static func withStore(_ books: [Book], _ body: (Datastore<Release2, ReadWrite>) async throws -> Void) async throws {
        let path = FileManager.default.temporaryDirectory.path + "/unindexed-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let options = PersistenceOptions(autoCompaction: nil, log: { _ in })
        do {
            let persistence = try Persistence(at: path, options: options)
            let release1 = persistence.datastore(for: Release1.self)
            try await persistence.perform { for book in books { try await release1.persist(book) } }
            persistence.close()
        }
        let persistence = try Persistence(at: path, options: options)
        defer { persistence.close() }
        try await body(persistence.datastore(for: Release2.self))
    }

    @Test func queriesSeeTheRecordsAUniqueIndexLeftOut() async throws {
        let books = [
            Book(id: 1, isbn: "X", serial: 7), Book(id: 2, isbn: "X", serial: 7), Book(id: 3, isbn: "Y", serial: 9),
        ]
        try await Self.withStore(books) { store throws in
            let report = try await store.indexReport()
            #expect(report.map(\.unindexedCount) == [1, 1], "the build left book 2 out of both indexes")
            let isX = #Predicate<Book> { $0.isbn == "X" }
            #expect(try await store.fetch(where: isX).collect().map(\.id) == [1, 2])
            #expect(try await store.count(where: isX) == 2)
            #expect(try await store.first(where: isX, sortBy: [SortDescriptor(\.id, order: .reverse)])?.id == 2)
            #expect(try await store.fetch(where: #Predicate { $0.serial >= 7 }).collect().map(\.id) == [1, 2, 3])
            #expect(
                try await store.fetch(where: #Predicate { $0.serial == 7 || $0.isbn == "Y" }).collect().map(\.id) == [
                    1, 2, 3,
                ])
            // Sorted by a unique index's order: the index alone would leave book 2 out.
            #expect(try await store.fetch(sortBy: [SortDescriptor(\.serial)]).collect().map(\.id) == [1, 2, 3])
            #expect(
                try await store.fetch(sortBy: [SortDescriptor(\.serial, order: .reverse)]).collect().map(\.id) == [
                    3, 1, 2,
                ])
            let live = try await store.liveQuery(where: isX)
            var updates = live.makeAsyncIterator()
            #expect(try await updates.next()?.map(\.id) == [1, 2])
            // Repaired: book 2 gets a value of its own, and is indexed.
            try await store.persist(Book(id: 2, isbn: "Z", serial: 8))
            #expect(try await store.fetch(where: isX).collect().map(\.id) == [1])
            #expect(try await store.fetch(where: #Predicate { $0.isbn == "Z" }).collect().map(\.id) == [2])
            #expect(try await store.fetch(where: #Predicate { $0.isbn >= "X" }).collect().map(\.id) == [1, 2, 3])
            #expect(try await store.delete(where: isX) == 1)
            #expect(try await store.count() == 2)
        }
    }

    @Test func deleteWhereDeletesEveryMatch() async throws {
        let books = [
            Book(id: 1, isbn: "X", serial: 1), Book(id: 2, isbn: "X", serial: 2), Book(id: 3, isbn: "Y", serial: 3),
        ]
        try await Self.withStore(books) { store throws in
            #expect(try await store.delete(where: #Predicate { $0.isbn == "X" }) == 2)
            #expect(try await store.load(...).collect().map(\.id) == [3])
        }
    }

    /// More records left out than the catalog lists (1,000): the index serves no plan.
    @Test func anIndexMissingUnlistedRecordsServesNoPlan() async throws {
        let books = (1...1_002).map { Book(id: $0, isbn: "X", serial: $0) }
        try await Self.withStore(books) { store throws in
            #expect(try await store.indexReport().first { $0.index == "isbn" }?.unindexedCount == 1_001)
            let isX = #Predicate<Book> { $0.isbn == "X" }
            #expect(try await store.explain(where: isX).access == .everyRecord)
            #expect(try await store.count(where: isX) == 1_002)
            #expect(
                try await store.explain(where: #Predicate { $0.serial == 5 }).access != .everyRecord,
                "a complete index still serves")
        }
    }
}
