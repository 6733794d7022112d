import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage

struct Oops: Error {}

@Suite struct TransactionTests {
    /// A unique-index conflict inside `perform` aborts the whole transaction: nothing of
    /// either datastore is kept, and the error names index, value and both identifiers.
    @Test func uniqueConflictRollsBackATransactionAcrossTwoDatastores() async throws {
        let (persistence, _, cleanup) = try diskPersistence()
        defer { cleanup() }
        let books = persistence.datastore(for: BookFormat.self)
        let authors = persistence.datastore(for: AuthorFormat.self)
        let first = makeBook(1)
        try await books.persist(first)
        var duplicate = makeBook(2)
        duplicate.isbn = first.isbn
        await #expect(
            throws: FolioError.uniqueIndexConflict(
                datastore: "books", index: "isbn", value: first.isbn,
                existing: first.id.uuidString, new: duplicate.id.uuidString)
        ) {
            try await persistence.perform {
                try await authors.persist(Author(id: 1, name: "Ann", born: 1970))
                try await books.persist(makeBook(3))
                try await books.persist(duplicate)
            }
        }
        #expect(try await authors.count() == 0)
        #expect(try await books.count() == 1)
        #expect(try await books.load(first.isbn, from: \.isbn) == first)
        // Outside perform, the conflicting call alone fails and changes nothing.
        await #expect(throws: FolioError.self) { try await books.persist(duplicate) }
        #expect(try await books.load(duplicate.id) == nil)
        expectSound(persistence)
    }

    @Test func errorsInsidePerformRollBackAndNestedPerformJoins() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        await #expect(throws: Oops.self) {
            try await persistence.perform {
                try await authors.persist(Author(id: 1, name: "A", born: 1))
                try await persistence.perform {  // joins: same transaction
                    try await authors.persist(Author(id: 2, name: "B", born: 2))
                    #expect(try await authors.count() == 2, "reads see the transaction's own writes")
                }
                throw Oops()
            }
        }
        #expect(try await authors.count() == 0)
        let generation = persistence.store.generation
        try await persistence.perform {
            try await authors.persist(Author(id: 1, name: "A", born: 1))
            try await persistence.perform { try await authors.persist(Author(id: 2, name: "B", born: 2)) }
        }
        #expect(persistence.store.generation == generation + 1, "one commit for the nested transaction")
        #expect(try await authors.count() == 2)
        expectSound(persistence)
    }

    /// `read { }` pins one snapshot: commits made meanwhile are invisible inside it.
    @Test func readPinsOneSnapshot() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await authors.persist(Author(id: 1, name: "A", born: 1))
        try await persistence.read {
            #expect(try await authors.count() == 1)
            try await Task.detached { try await authors.persist(Author(id: 2, name: "B", born: 2)) }.value
            #expect(try await authors.count() == 1, "the snapshot does not see the later commit")
            #expect(try await authors.load(2) == nil)
            await #expect(throws: FolioError.writeInReadOnlySnapshot) {
                try await authors.persist(Author(id: 3, name: "C", born: 3))
            }
        }
        #expect(try await authors.count() == 2)
    }

    /// Concurrent writers are serialised (every increment kept); concurrent readers see each
    /// transaction all or nothing: a transaction rewrites 50 records and an author with the
    /// same counter, so any snapshot that mixes two transactions is torn.
    @Test func concurrentReadersNeverSeeTornTransactions() async throws {
        let (persistence, _, cleanup) = try diskPersistence()
        defer { cleanup() }
        let books = persistence.datastore(for: BookFormat.self)
        let authors = persistence.datastore(for: AuthorFormat.self)
        func write(_ round: Int) async throws {
            try await persistence.perform {
                for n in 0..<50 {
                    var book = makeBook(n)
                    book.year = round
                    try await books.persist(book)
                }
                try await authors.persist(Author(id: 0, name: "counter", born: round))
            }
        }
        try await write(0)
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                for round in 1...60 { try await write(round) }
                return 0
            }
            for _ in 0..<3 {
                group.addTask {
                    var checks = 0
                    for _ in 0..<40 {
                        try await persistence.read {
                            let years = Set(try await books.load(...).collect().map(\.year))
                            let counter = try await authors.load(0)?.born
                            #expect(
                                years.count == 1 && years.first == counter,
                                "torn snapshot: \(years) vs \(String(describing: counter))")
                        }
                        // A lone range read is one snapshot too.
                        #expect(Set(try await books.load(...).collect().map(\.year)).count == 1)
                        checks += 1
                    }
                    return checks
                }
            }
            var total = 0
            for try await checks in group { total += checks }
            #expect(total == 120)
        }
        #expect(try await authors.load(0)?.born == 60)
        expectSound(persistence)
    }

    @Test func concurrentSingleWritesAreAllKept() async throws {
        let persistence = Persistence.inMemory(options: PersistenceOptions(durability: .grouped))
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for n in 0..<50 {
                        try await authors.persist(Author(id: writer * 1000 + n, name: "w\(writer)", born: n))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await authors.count() == 200)
        #expect(try await authors.count("w2", from: \.name) == 50)
        expectSound(persistence)
    }
}
