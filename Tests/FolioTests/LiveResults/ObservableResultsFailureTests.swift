import Foundation
import Testing
@_spi(Engine) @testable import Folio
import FolioStorage

/// When the live query cannot start, or fails while running: the phase says so with the
/// error, the last results stay, nothing is retried, and `restart()` tries again.
@Suite(.timeLimit(.minutes(10))) @MainActor struct ObservableResultsFailureTests {
    @Test func aQueryThatCannotStartFails() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        let object = ObservableResults(authors, limit: -1)
        await waitUntil(object) { $0.phase != .loading }
        guard case .invalidArgument(name: "limit", _)? = object.error else {
            Issue.record("expected an invalid limit, got \(object.phase)")
            return
        }
        #expect(object.results.isEmpty)
        await settle(persistence.core.hub)
        #expect(persistence.core.hub.observerCount == 0)
    }

    @Test func aRecordThatFailsToDecodeEndsTheQueryUntilRestarted() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await authors.persist(Author(id: 1, name: "a", born: 1901))
        // Every instance: each changed record is decoded (an index's range would pick only
        // records with entries in it, and the garbage record has none).
        let hub = persistence.core.hub
        let object = ObservableResults(authors)
        let notices = ResultNotices(object) { MainActorCheck.isCurrent }
        await waitUntil(object) { $0.phase == .loaded }

        // A record the format cannot decode arrives with a commit: the live query fails.
        let garbage = try StoredRecord.encode(version: "1", indexKeys: [], payload: Array("{oops".utf8))
        try persistence.store.write { try $0.put(garbage, for: 5.keyBytes, in: "records/authors") }
        await waitUntil(object) { $0.phase != .loaded }
        guard case .decodingFailed(_, "5", _, _)? = object.error else {
            Issue.record("expected a decoding failure, got \(object.phase)")
            return
        }
        #expect(object.results.map(\.id) == [1], "the last results stay")
        #expect(await observerCount(of: hub, becomes: 0), "a failed query keeps no subscription")

        // Not retried: a later commit the query would show changes nothing.
        try await authors.persist(Author(id: 2, name: "b", born: 1902))
        await settle(hub)
        #expect(object.results.map(\.id) == [1] && object.error != nil && notices.all == 1)

        // Once the record is repaired, restart follows the query again from the start.
        try persistence.store.write { _ = try $0.remove(5.keyBytes, from: "records/authors") }
        object.restart()
        await waitUntil(object) { $0.phase == .loaded }
        #expect(object.results.map(\.id) == [1, 2] && object.error == nil)
    }
}
