import Foundation
import Testing
import Folio
import FolioTestSupport

/// `update(where:)`, `delete(where:)` and `delete(_ identifiers:)`, which change their
/// records in one pass and each index in one pass, against an in-memory model, on books
/// with a plain index (title, year), a unique covering one (isbn) and a many-to-many one
/// (authors): every index must agree with the model and `verify` after every call, a unique
/// conflict must change nothing, and records of one call may exchange unique values.
@Suite struct BatchChangeModelTests {
    static func expectAgrees(
        _ books: Datastore<BookFormat, ReadWrite>, _ model: [UUID: Book], _ note: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let all = try await books.fetch().collect()
        #expect(
            all == model.values.sorted { $0.id.uuidString < $1.id.uuidString }, "\(note): records",
            sourceLocation: sourceLocation)
        for author in 0..<9 {
            let found = Set(try await books.load(author, from: \.authors).collect().map(\.id))
            #expect(
                found == Set(model.values.filter { $0.authorIDs.contains(author) }.map(\.id)),
                "\(note): author \(author)", sourceLocation: sourceLocation)
        }
        for book in model.values.prefix(40) {
            #expect(
                try await books.load(book.isbn, from: \.isbn) == book, "\(note): isbn", sourceLocation: sourceLocation)
            #expect(
                try await books.load(book.title, from: \.title).collect().contains(book), "\(note): title",
                sourceLocation: sourceLocation)
        }
        for year in stride(from: 1900, to: 2040, by: 7) {
            #expect(
                try await books.count(year, from: \.year) == model.values.filter { $0.year == year }.count,
                "\(note): year \(year)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: [1, 2, 3])
    func batchChangesMatchTheModel(seed: UInt64) async throws {
        let persistence = Persistence.inMemory()
        let books = persistence.datastore(for: BookFormat.self)
        var rng = SplitMix64(seed: seed)
        var model: [UUID: Book] = [:]
        var next = 0
        func newBook(_ rng: inout SplitMix64) -> Book {
            next += 1
            return makeBook(next, authors: [Int(rng.next() % 9), Int(rng.next() % 9)])
        }
        try await persistence.perform {
            for _ in 0..<1_200 {
                let book = newBook(&rng)
                try await books.persist(book)
                model[book.id] = book
            }
        }
        for round in 0..<12 {
            let lower = 1900 + Int(rng.next() % 120), width = 1 + Int(rng.next() % 40)
            let upper = lower + width
            let inside = { (book: Book) in book.year >= lower && book.year < upper }
            try await persistence.perform {
                // Earlier uncommitted changes of the same transaction.
                for _ in 0..<Int(rng.next() % 20) {
                    var book = newBook(&rng)
                    if let existing = model.values.randomElement(using: &rng), rng.next() % 2 == 0 {
                        book.id = existing.id; book.isbn = existing.isbn
                    }
                    try await books.persist(book)
                    model[book.id] = book
                }
                switch rng.next() % 4 {
                case 0:
                    // Titles, years and authors change; the matched books exchange their
                    // ISBNs (unique) in a rotation, which only the whole batch keeps unique.
                    let matched = model.values.filter(inside).sorted { $0.id.uuidString < $1.id.uuidString }
                    var isbns: [UUID: String] = [:]
                    for (position, book) in matched.enumerated() {
                        isbns[book.id] = matched[(position + 1) % matched.count].isbn
                    }
                    let shift = Int(rng.next() % 3)
                    let changed = try await books.update(where: #Predicate { $0.year >= lower && $0.year < upper }) {
                        $0.title = "Changed \($0.year % 5)"
                        $0.authorIDs = [($0.year + shift) % 9, 8]
                        $0.year += shift
                        $0.isbn = isbns[$0.id]!
                    }
                    #expect(changed == matched.count, "round \(round)")
                    for book in matched {
                        var updated = book
                        updated.title = "Changed \(book.year % 5)"
                        updated.authorIDs = [(book.year + shift) % 9, 8]
                        updated.year += shift
                        updated.isbn = isbns[book.id]!
                        model[book.id] = updated
                    }
                case 1:
                    // An exact index plan: nothing decoded.
                    let deleted = try await books.delete(where: #Predicate { $0.year >= lower && $0.year < upper })
                    let matched = model.values.filter(inside).map(\.id)
                    #expect(deleted == matched.count, "round \(round)")
                    for id in matched { model[id] = nil }
                case 2:
                    // A filtered plan (the title is not the index read).
                    let deleted = try await books.delete(
                        where: #Predicate { $0.year >= lower && $0.year < upper && $0.title.contains("1") })
                    let matched = model.values.filter { inside($0) && $0.title.contains("1") }.map(\.id)
                    #expect(deleted == matched.count, "round \(round)")
                    for id in matched { model[id] = nil }
                default:
                    // By identifiers, in any order, repeated, some absent.
                    var ids = model.keys.filter { _ in rng.next() % 5 == 0 }
                    ids += ids.prefix(3) + [makeBook(1_000_000).id]
                    ids.shuffle(using: &rng)
                    let present = Set(ids).filter { model[$0] != nil }
                    #expect(try await books.delete(ids) == present.count, "round \(round)")
                    for id in present { model[id] = nil }
                }
            }
            try await Self.expectAgrees(books, model, "round \(round)")
            expectSound(persistence)
        }
    }

    /// An update whose new ISBN is held by a book outside the batch, or that gives two books
    /// of the batch the same ISBN, throws and changes nothing; caught inside `perform`, the
    /// rest of the transaction commits.
    @Test func aUniqueConflictInABatchChangesNothing() async throws {
        let persistence = Persistence.inMemory()
        let books = persistence.datastore(for: BookFormat.self)
        var model: [UUID: Book] = [:]
        for n in 1...300 {
            let book = makeBook(n)
            try await books.persist(book)
            model[book.id] = book
        }
        let outsider = makeBook(7)
        // Held outside the batch (book 7's year is 1907, outside 1950..<1960).
        await #expect(throws: FolioError.self) {
            try await books.update(where: #Predicate { $0.year >= 1950 && $0.year < 1960 }) {
                $0.title = "Lost"
                if $0.year == 1955 { $0.isbn = outsider.isbn }
            }
        }
        try await Self.expectAgrees(books, model, "held outside")
        // Taken twice inside the batch.
        try await persistence.perform {
            await #expect(throws: FolioError.self) {
                try await books.update(where: #Predicate { $0.year >= 1950 && $0.year < 1960 }) {
                    $0.title = "Lost"
                    if $0.year < 1952 { $0.isbn = "shared" }
                }
            }
            let extra = makeBook(5_000)
            try await books.persist(extra)
            model[extra.id] = extra
        }
        try await Self.expectAgrees(books, model, "taken twice")
        #expect(try await books.count("Lost", from: \.title) == 0)
        expectSound(persistence)
    }
}
