import Testing
import Foundation
import Folio

/// A sort by a `String` that an index over it can give: with the `.lexical` comparator,
/// which compares with Swift's `<` off Apple platforms, the index's key order is the sort
/// order (for strings in normal form), so the results stream from the index with no sort
/// step; the default comparator, `.localizedStandard`, still sorts.
@Suite struct LexicalSortPlanTests {
    struct Book: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var title: String
        var year: Int
    }

    struct Books: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "books"
        static let currentVersion = Version.one
        typealias Instance = Book
        let title = Index(\Book.title)
    }

    /// Titles in normal form with repeats (ties go by identifier), mixed case, digits,
    /// accents written precomposed, characters beyond U+FFFF and in U+E000...U+FFFF (where
    /// UTF-16 order differs from scalar order).
    static func titles(_ count: Int) -> [String] {
        var rng = SystemRandomNumberGenerator()
        let pieces = ["a", "B", "b", "10", "9", "é", "z", "Zebra", "\u{FFFD}", "😀", "\u{E000}", "", " "]
        return (0..<count).map { _ in
            (0..<Int.random(in: 0...3, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
                .precomposedStringWithCanonicalMapping
        }
    }

    @Test func aLexicalSortStreamsFromTheIndexInSwiftsOrder() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let books = persistence.datastore(for: Books.self)
        let titles = Self.titles(300)
        try await persistence.perform {
            for (id, title) in titles.enumerated() { try await books.persist(Book(id: id, title: title, year: id % 7)) }
        }
        let all = titles.enumerated().map { Book(id: $0.offset, title: $0.element, year: $0.offset % 7) }
        let lexical = [SortDescriptor(\Book.title, comparator: .lexical)]
        let expected = all.sorted { ($0.title, $0.id) < ($1.title, $1.id) }

        let plan = try await books.explain(sortBy: lexical, limit: 20)
        #if canImport(Darwin)
        #expect(plan.sort != nil, "NSString's lexical order is not key order")
        #else
        #expect(plan.sort == nil, "read in the index's order: \(plan)")
        #expect(plan.access == .index(name: "title", ranges: ["every value"]))
        #endif
        #expect(try await books.fetch(sortBy: lexical).collect() == expected)
        #expect(try await books.fetch(sortBy: lexical, limit: 20).collect() == Array(expected.prefix(20)))
        #expect(
            try await books.fetch(sortBy: lexical, limit: 15, offset: 40).collect()
                == Array(expected.dropFirst(40).prefix(15)))
        // A condition on another field still filters the records read in title order.
        let filtered = try await books.fetch(where: #Predicate { $0.year == 3 }, sortBy: lexical, limit: 10).collect()
        #expect(filtered == Array(expected.filter { $0.year == 3 }.prefix(10)))
    }

    @Test func theDefaultStringComparatorStillSorts() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let books = persistence.datastore(for: Books.self)
        try await persistence.perform {
            for (id, title) in ["b", "B", "a10", "a9"].enumerated() {
                try await books.persist(Book(id: id, title: title, year: 0))
            }
        }
        let localized = [SortDescriptor(\Book.title)]
        #expect(try await books.explain(sortBy: localized).sort != nil)
        let expected = try await books.fetch().collect().sorted { localized[0].compare($0, $1) == .orderedAscending }
        #expect(try await books.fetch(sortBy: localized).collect().map(\.title) == expected.map(\.title))
        // Reversed lexical order of a non-unique index: ties would come in reverse identifier
        // order from the index, so it sorts.
        let reversed = [SortDescriptor(\Book.title, comparator: .lexical, order: .reverse)]
        #expect(try await books.explain(sortBy: reversed).sort != nil)
    }
}
