import Foundation
import Testing
@_spi(Engine) @testable import Folio

/// How long an ObservableResults follows its query: until it is released, stopped or given
/// another query, each of which ends the live query's subscription (the observation hub's
/// observer count shows it).
@Suite(.timeLimit(.minutes(10))) @MainActor struct ObservableResultsLifetimeTests {
    static let bornBefore1940 = #Predicate<Author> { $0.born < 1940 }

    @Test func releasingTheObjectEndsItsSubscription() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        let hub = persistence.core.hub
        try await authors.persist(Author(id: 1, name: "a", born: 1901))
        var object: ObservableResults<AuthorFormat>? = ObservableResults(authors, where: Self.bornBefore1940)
        weak let released = object
        await waitUntil(object!) { $0.phase == .loaded }
        await settle(hub)
        #expect(hub.observerCount == 1)
        object = nil
        // Nothing else keeps it: the following task holds it weakly.
        #expect(released == nil)
        // Its deinit cancelled the task, whose iteration ended and let go of the live query.
        #expect(await observerCount(of: hub, becomes: 0), "the live query's subscription outlived its object")
    }

    @Test func stopEndsTheSubscriptionAndRestartFollowsAgain() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        let hub = persistence.core.hub
        try await authors.persist(Author(id: 1, name: "a", born: 1901))
        let object = ObservableResults(authors, where: Self.bornBefore1940)
        let notices = ResultNotices(object) { MainActorCheck.isCurrent }
        await waitUntil(object) { $0.phase == .loaded }
        object.stop()
        #expect(await observerCount(of: hub, becomes: 0), "stop left the subscription behind")
        try await authors.persist(Author(id: 2, name: "b", born: 1902))
        await settle(hub)
        #expect(object.results.map(\.id) == [1] && object.phase == .loaded, "stopped: results stay as they were")
        #expect(notices.all == 1)

        object.restart()
        await waitUntil(object) { $0.results.map(\.id) == [1, 2] }
        #expect(object.phase == .loaded)
        await settle(hub)
        #expect(hub.observerCount == 1)
    }

    /// As a view's search text changes: each new query replaces the last one, whose
    /// subscription ends, and whose results never come back over the new ones.
    @Test func replacingTheQueryRestartsItAndDropsTheOldOne() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        let hub = persistence.core.hub
        try await persistence.perform {
            for (id, name) in ["ada", "alan", "barbara", "edsger", "grace"].enumerated() {
                try await authors.persist(Author(id: id, name: name, born: 1900 + id))
            }
        }
        let object = ObservableResults(authors, where: #Predicate { $0.name.starts(with: "a") })
        await waitUntil(object) { $0.phase == .loaded }
        #expect(object.results.map(\.name) == ["ada", "alan"])

        object.replaceQuery(
            where: #Predicate { $0.born >= 1902 }, sortBy: [SortDescriptor(\Author.name, order: .reverse)])
        // The old results stay until the new query's arrive; the phase says they are coming.
        #expect(object.results.map(\.name) == ["ada", "alan"])
        await waitUntil(object) { $0.phase == .loading }
        await waitUntil(object) { $0.phase == .loaded }
        #expect(object.results.map(\.name) == ["grace", "edsger", "barbara"])
        #expect(await observerCount(of: hub, becomes: 1), "the replaced query's subscription is still there")

        // Typing fast: only the last query counts (each earlier one shows other results).
        for prefix in ["b", "e", "a", "al"] {
            object.replaceQuery(where: #Predicate { $0.name.starts(with: prefix) })
        }
        await waitUntil(object) { $0.phase == .loaded && $0.results.map(\.name) == ["alan"] }
        // A commit only a replaced query shows changes nothing; one the last shows does.
        try await authors.persist(Author(id: 10, name: "bo", born: 1950))
        try await authors.persist(Author(id: 11, name: "alma", born: 1950))
        await waitUntil(object) { $0.results.count == 2 }
        #expect(object.results.map(\.name) == ["alan", "alma"])
        #expect(await observerCount(of: hub, becomes: 1))
    }

    /// Results of the old query already on their way to the main actor when the query is
    /// replaced are dropped: the first notice after the replacement is the new query's.
    @Test func aReplacedQuerysResultsInFlightNeverLand() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        let hub = persistence.core.hub
        try await authors.persist(Author(id: 1, name: "a", born: 1901))
        try await authors.persist(Author(id: 2, name: "b", born: 1990))
        let object = ObservableResults(authors, where: Self.bornBefore1940)
        await waitUntil(object) { $0.phase == .loaded }
        let notices = ResultNotices(object) { MainActorCheck.isCurrent }

        // Without leaving the main actor: a commit the old query shows, handed to its task
        // (the hub's queue has run it), whose hop back to the main actor must wait...
        let added = Author(id: 3, name: "c", born: 1903)
        let record = try authors.schema.encodeRecord(added, identifier: authors.schema.identifierKey(of: added)).record
        try persistence.store.write { try $0.put(record, for: 3.keyBytes, in: "records/authors") }
        hub.queue.sync {}
        // ...until after the query is replaced.
        object.replaceQuery(where: #Predicate { $0.born >= 1940 })
        await waitUntil(object) { $0.phase == .loaded && $0.results.map(\.id) == [2] }
        #expect(notices.all == 1, "the old query's results landed after it was replaced")
    }
}
