import Foundation
import Testing
@_spi(Engine) @testable import Folio

/// What an ObservableResults shows, and when it changes: loading, then the live query's
/// results after every kind of change (insert, update, delete, a record leaving the
/// predicate, a reorder by the sort, a record entering it), each announced exactly once on
/// the main actor, and nothing announced for commits that leave the results as they were.
@Suite(.timeLimit(.minutes(10))) @MainActor struct ObservableResultsChangeTests {
    static let bornBefore1940 = #Predicate<Author> { $0.born < 1940 }
    static let byName = [SortDescriptor(\Author.name)]

    @Test func everyKindOfChangeReplacesTheResultsOnceOnTheMainActor() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await persistence.perform {
            try await authors.persist(Author(id: 1, name: "a", born: 1901))
            try await authors.persist(Author(id: 2, name: "b", born: 1902))
            try await authors.persist(Author(id: 3, name: "c", born: 1903))
            try await authors.persist(Author(id: 4, name: "d", born: 1950))
        }
        let object = ObservableResults(authors, where: Self.bornBefore1940, sortBy: Self.byName)
        // Nothing has run on the main actor since: the first results cannot be here yet.
        #expect(object.phase == .loading && object.results.isEmpty && object.error == nil)
        let notices = ResultNotices(object) { MainActorCheck.isCurrent }

        var delivered = 1
        await waitUntil(object) { $0.phase == .loaded }
        #expect(object.results.map(\.name) == ["a", "b", "c"])
        #expect(notices.all == delivered)

        /// Commits `change`, waits for the results to be `names` (in this order), and checks
        /// them against a fresh fetch, and the notices against one per commit.
        func step(_ label: String, _ names: [String], _ change: () async throws -> Void) async throws {
            try await change()
            delivered += 1
            await waitUntil(object) { $0.results.map(\.name) == names }
            let fetched = try await authors.fetch(where: Self.bornBefore1940, sortBy: Self.byName).collect()
            #expect(object.results == fetched, "\(label)")
            #expect(notices.all == delivered, "\(label): one notice per commit that changes the results")
        }
        try await step("insert", ["a", "b", "bb", "c"]) {
            try await authors.persist(Author(id: 5, name: "bb", born: 1905))
        }
        try await step("update in place", ["a", "b2", "bb", "c"]) {
            try await authors.persist(Author(id: 2, name: "b2", born: 1902))
        }
        try await step("delete", ["b2", "bb", "c"]) { try await authors.delete(1) }
        try await step("leaves the predicate", ["b2", "bb"]) {
            try await authors.persist(Author(id: 3, name: "c", born: 1960))
        }
        try await step("reorder by the sort", ["aa", "b2"]) {
            try await authors.persist(Author(id: 5, name: "aa", born: 1905))
        }
        try await step("enters the predicate", ["aa", "b2", "d"]) {
            try await authors.persist(Author(id: 4, name: "d", born: 1920))
        }
        #expect(object.phase == .loaded)
        #expect(notices.offActor == 0, "every onChange runs on the main actor")
    }

    /// Commits to another datastore, and to records that were and stay outside the
    /// predicate, leave the live query's results as they were: no notice, so no re-render.
    @Test func commitsThatLeaveTheResultsAloneAnnounceNothing() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        let books = persistence.datastore(for: BookFormat.self)
        try await authors.persist(Author(id: 1, name: "a", born: 1901))
        try await authors.persist(Author(id: 2, name: "z", born: 1990))
        let object = ObservableResults(authors, where: Self.bornBefore1940, sortBy: Self.byName)
        let notices = ResultNotices(object) { MainActorCheck.isCurrent }
        await waitUntil(object) { $0.phase == .loaded }
        #expect(notices.all == 1)

        try await books.persist(makeBook(1))  // another datastore
        try await authors.persist(Author(id: 2, name: "zz", born: 1991))  // outside, stays outside
        try await authors.persist(Author(id: 3, name: "y", born: 1980))  // new, outside
        await settle(persistence.core.hub)
        // A commit that does change the results: its notice must be the only one since.
        try await authors.persist(Author(id: 4, name: "b", born: 1904))
        await waitUntil(object) { $0.results.map(\.id) == [1, 4] }
        #expect(notices.all == 2, "only the commit that changed the results was announced")
    }

    /// No predicate: every instance, in the sort's order (identifier order without one).
    @Test func withoutAPredicateEveryInstanceIsFollowed() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        for id in [3, 1, 2] { try await authors.persist(Author(id: id, name: "n\(4 - id)", born: 1900 + id)) }
        let byID = ObservableResults(authors)
        let byName = ObservableResults(authors, sortBy: Self.byName, limit: 2)
        await waitUntil(byID) { $0.phase == .loaded }
        await waitUntil(byName) { $0.phase == .loaded }
        #expect(byID.results.map(\.id) == [1, 2, 3])
        #expect(byName.results.map(\.id) == [3, 2])
        try await authors.persist(Author(id: 0, name: "n0", born: 1800))
        await waitUntil(byID) { $0.results.map(\.id) == [0, 1, 2, 3] }
        await waitUntil(byName) { $0.results.map(\.id) == [0, 3] }
    }
}
