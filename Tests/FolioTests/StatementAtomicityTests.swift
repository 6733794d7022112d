import Foundation
import Testing
@_spi(Engine) import Folio
import FolioStorage

/// Each datastore call inside `perform` is atomic (a caught error leaves the transaction
/// exactly as before the call), a nested `perform` is a savepoint, a range read iterates the
/// state as of its start, and child tasks sharing a transaction cannot interleave a
/// read-check-write.
@Suite struct StatementAtomicityTests {
    /// One over-long title (its index key passes the 1,024-byte key limit) caught inside the
    /// loop writes neither the record nor any of its index entries (half written, `verify`
    /// would report "record has no entry for one of its values").
    @Test func aCaughtFailureInsidePerformLeavesNothingHalfApplied() async throws {
        let persistence = Persistence.inMemory()
        let books = persistence.datastore(for: BookFormat.self)
        var batch = (1...10).map { makeBook($0) }
        // The ISBN index comes after the title index: the title entry is written by the time
        // the ISBN entry fails, and must not survive the failure.
        batch[4].isbn = String(repeating: "x", count: 2_000)
        var failures: [Int] = []
        try await persistence.perform {
            for (position, book) in batch.enumerated() {
                do { try await books.persist(book) } catch { failures.append(position) }
            }
        }
        #expect(failures == [4])
        #expect(try await books.count() == 9)
        #expect(try await books.load(batch[4].id) == nil)
        #expect(try await books.load(batch[4].isbn, from: \.isbn) == nil, "no unique entry left behind")
        expectSound(persistence)
    }

    /// The same on a replacement: the update fails on its second index, after the first could
    /// already be rewritten; the stored record and every entry stay as they were.
    @Test func aFailedReplacementKeepsTheOldRecordAndEntries() async throws {
        let persistence = Persistence.inMemory()
        let books = persistence.datastore(for: BookFormat.self)
        let original = makeBook(1)
        try await books.persist(original)
        var changed = original
        changed.year = 2001
        changed.title = "Changed"
        changed.isbn = String(repeating: "y", count: 2_000)
        try await persistence.perform {
            await #expect(throws: FolioError.self) { try await books.persist(changed) }
            let inside = try await books.load(original.id)
            #expect(inside == original)
        }
        #expect(try await books.load(original.id) == original)
        #expect(
            try await books.load(1900 + 1 % 120, from: \.year).map(\.id).reduce(into: []) { $0.append($1) } == [
                original.id
            ])
        #expect(try await books.count(2001, from: \.year) == 0)
        #expect(try await books.count("Changed", from: \.title) == 0)
        expectSound(persistence)
    }

    /// A unique conflict caught inside `perform` changed nothing, and the
    /// transaction commits the other writes.
    @Test func aCaughtUniqueConflictChangesNothingAndTheRestCommits() async throws {
        let persistence = Persistence.inMemory()
        let books = persistence.datastore(for: BookFormat.self)
        let first = makeBook(1), second = makeBook(2)
        try await books.persist(first)
        try await books.persist(second)
        var stealing = second
        stealing.isbn = first.isbn
        stealing.title = "Renamed"
        try await persistence.perform {
            await #expect(throws: FolioError.self) { try await books.persist(stealing) }
            try await books.persist(makeBook(3))
        }
        #expect(try await books.load(second.id) == second)
        #expect(try await books.load(second.isbn, from: \.isbn) == second)
        #expect(try await books.load(first.isbn, from: \.isbn) == first)
        #expect(try await books.count("Renamed", from: \.title) == 0)
        #expect(try await books.count() == 3)
        expectSound(persistence)
    }

    /// An inner `perform` that throws undoes its own writes; the outer one catches
    /// the error and commits what it wrote before and after.
    @Test func aNestedPerformIsASavepoint() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await persistence.perform {
            try await authors.persist(Author(id: 1, name: "Outer before", born: 1))
            do {
                try await persistence.perform {
                    try await authors.persist(Author(id: 2, name: "Inner", born: 2))
                    try await authors.persist(Author(id: 1, name: "Inner rewrote", born: 3))
                    try await authors.delete(1)
                    throw Oops()
                }
            } catch is Oops {}
            let one = try await authors.load(1), two = try await authors.load(2)
            #expect(one?.name == "Outer before")
            #expect(two == nil)
            try await persistence.perform {
                try await authors.persist(Author(id: 3, name: "Inner kept", born: 4))
            }
            try await authors.persist(Author(id: 4, name: "Outer after", born: 5))
        }
        #expect(try await authors.load(...).map(\.id).reduce(into: []) { $0.append($1) } == [1, 3, 4])
        #expect(try await authors.count("Inner", from: \.name) == 0)
        #expect(try await authors.count("Inner rewrote", from: \.name) == 0)
        expectSound(persistence)
    }

    /// Updating the indexed value a range iterates visits each record once (a range that
    /// followed its own writes would revisit records without end; the test gives up after
    /// ten times the records).
    @Test func aRangeReadInsidePerformIteratesTheStateAsOfItsStart() async throws {
        let persistence = Persistence.inMemory()
        let books = persistence.datastore(for: BookFormat.self)
        try await persistence.perform { for n in 1...20 { try await books.persist(makeBook(n)) } }
        var visits = 0
        try await persistence.perform {
            for try await book in books.load(1900..., from: \.year) {
                visits += 1
                if visits > 200 { break }
                var moved = book
                moved.year += 500
                try await books.persist(moved)
            }
        }
        #expect(visits == 20)
        #expect(try await books.count(2400..., from: \.year) == 20)
        // Deleting while iterating the identifiers also sees every record exactly once.
        var deleted = 0
        try await persistence.perform {
            for try await book in books.load(...) {
                try await books.delete(book.id)
                try await books.persist(Book(id: UUID(), title: "new", authorIDs: [], isbn: UUID().uuidString, year: 1))
                deleted += 1
                if deleted > 200 { break }
            }
        }
        #expect(deleted == 20)
        #expect(try await books.count() == 20)
        expectSound(persistence)
    }

    /// Child tasks of `perform` writing the same identifier and the same unique value
    /// concurrently: their calls run one at a time, each atomic, so both never pass the
    /// uniqueness check and no stale index entry survives (verify would report "index entry
    /// refers to a value the record no longer has").
    @Test func childTasksSharingATransactionNeverInterleave() async throws {
        let persistence = Persistence.inMemory()
        let books = persistence.datastore(for: BookFormat.self)
        let rounds = ProcessInfo.processInfo.environment["FOLIO_STRESS_TESTS"] == "1" ? 500 : 50
        for round in 0..<rounds {
            let base = round * 100
            // Eight books claiming one ISBN (a unique conflict: exactly one may win), and
            // eight versions of one identifier with different titles and years.
            let claimants = (1...8).map { n -> Book in
                var book = makeBook(base + n)
                book.isbn = "shared-\(round)"
                return book
            }
            let versions = (1...8).map { n -> Book in
                var book = makeBook(base + 50)
                book.title = "Version \(n)"
                book.year = 1500 + n
                return book
            }
            try await persistence.perform {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for book in claimants + versions {
                        group.addTask { _ = try? await books.persist(book) }
                    }
                    try await group.waitForAll()
                }
            }
            var kept = 0
            for book in claimants where try await books.load(book.id) != nil { kept += 1 }
            #expect(kept == 1, "exactly one book holds the shared ISBN")
            let stored = try #require(try await books.load(versions[0].id))
            #expect(versions.contains(stored))
            let titles = try await books.load("Version 1"..."Version 9", from: \.title).reduce(into: 0) { count, _ in
                count += 1
            }
            #expect(titles == 1, "one title entry for the one record")
            #expect(try await books.count(1500...1510, from: \.year) == 1)
            try await books.delete(stored.id)
        }
        expectSound(persistence)
    }
}
