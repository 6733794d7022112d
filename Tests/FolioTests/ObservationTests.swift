import Testing
import Foundation
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport

/// Collects up to `count` elements of a sequence, failing once the wait has hung for
/// `seconds` (a ``HangGuard``: the bound, then more looks on the cooperative pool, since a
/// starved pool delays the sequence's producer as much as the clock's waiter).
func take<S: AsyncSequence & Sendable>(_ count: Int, from sequence: S, seconds: Double = 20) async throws -> [S.Element]
where S.Element: Sendable {
    try await withThrowingTaskGroup(of: [S.Element]?.self) { group in
        group.addTask {
            var collected: [S.Element] = []
            for try await element in sequence {
                collected.append(element)
                if collected.count == count { break }
            }
            return collected
        }
        group.addTask {
            var guardian = HangGuard(.seconds(seconds))
            repeat { try await Task.sleep(for: .seconds(1)) } while !guardian.expired()
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        return try #require(first, "timed out waiting for \(count) elements")
    }
}

@Suite struct ObservationTests {
    @Test func changesArriveOnceInOrderWithOldAndNewValues() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await authors.persist(Author(id: 1, name: "before", born: 1))
        let events = try await authors.observe()
        try await authors.persist(Author(id: 2, name: "B", born: 2))
        try await persistence.perform {
            try await authors.persist(Author(id: 1, name: "A2", born: 1))
            try await authors.persist(Author(id: 3, name: "C", born: 3))
        }
        try await authors.delete(2)
        let collected = try await take(4, from: events)
        let changes = collected.compactMap { if case .change(let change) = $0 { change } else { nil } }
        #expect(changes.count == 4)
        #expect(changes.map(\.kind) == [.created, .updated, .created, .deleted])
        #expect(changes.map(\.identifier) == [2, 1, 3, 2])
        #expect(changes[1].oldValue?.name == "before" && changes[1].newValue?.name == "A2")
        #expect(changes[3].oldValue?.name == "B" && changes[3].newValue == nil)
        #expect(changes[1].token == changes[2].token, "one transaction, one token")
        #expect(changes.map(\.token.generation) == changes.map(\.token.generation).sorted())
    }

    @Test func resumingFromATokenReplaysWhatWasMissed() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await authors.persist(Author(id: 1, name: "A", born: 1))
        let token = persistence.currentToken
        try await authors.persist(Author(id: 2, name: "B", born: 2))
        try await authors.persist(Author(id: 3, name: "C", born: 3))
        let events = try await authors.observe(after: token)
        try await authors.persist(Author(id: 4, name: "D", born: 4))
        let collected = try await take(3, from: events)
        let identifiers = collected.compactMap { if case .change(let change) = $0 { change.identifier } else { nil } }
        #expect(identifiers == [2, 3, 4])
    }

    /// A consumer that falls more than the buffer behind gets one reload signal, then the
    /// events after it: bounded memory, no silent loss.
    @Test func slowConsumersGetAReloadSignal() async throws {
        let persistence = Persistence.inMemory(options: PersistenceOptions(durability: .grouped))
        let authors = persistence.datastore(for: AuthorFormat.self)
        let events = try await authors.observe(bufferLimit: 10)
        for n in 0..<50 { try await authors.persist(Author(id: n, name: "n\(n)", born: n)) }
        try await persistence.store.flush()
        try await Task.sleep(for: .milliseconds(200))  // let the hub queue the 50 events
        try await authors.persist(Author(id: 999, name: "after", born: 0))
        var received: [DatastoreEvent<Author, Int>] = []
        for await event in events {
            received.append(event)
            if case .change(let change) = event, change.identifier == 999 { break }
        }
        guard case .reload = received[0] else {
            Issue.record("expected a reload first, got \(received[0])")
            return
        }
        #expect(received.count <= 12, "no more than the buffer waited: \(received.count)")
    }

    @Test func observingOneInstanceEndsWhenItIsDeleted() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await authors.persist(Author(id: 7, name: "v1", born: 1))
        let events = try await authors.observe(7)
        try await authors.persist(Author(id: 8, name: "other", born: 2))
        try await authors.persist(Author(id: 7, name: "v2", born: 1))
        try await authors.delete(7)
        var values: [String] = []
        var ended = false
        for await event in events {
            switch event {
            case .value(let author): values.append(author.name)
            case .deleted: ended = true
            case .failure(let error): Issue.record("\(error)")
            }
        }
        #expect(values == ["v1", "v2"])
        #expect(ended)
    }

    /// Live query over an index range: current results, then each changed result set:
    /// added, changed, moved out of the range, deleted.
    @Test func liveQueriesFollowTheirRange() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        for n in 0..<10 { try await authors.persist(Author(id: n, name: "n\(n)", born: 1900 + n)) }
        let live = try await authors.liveQuery(1903..<1906, from: \.born)
        var iterator = live.makeAsyncIterator()
        #expect(try await iterator.next()?.map(\.id) == [3, 4, 5])
        try await authors.persist(Author(id: 20, name: "new", born: 1904))  // added
        #expect(try await iterator.next()?.map(\.id) == [3, 4, 20, 5])
        try await authors.persist(Author(id: 4, name: "renamed", born: 1904))  // changed
        #expect(try await iterator.next()?.map(\.name) == ["n3", "renamed", "new", "n5"])
        try await authors.persist(Author(id: 3, name: "n3", born: 1950))  // moved out
        #expect(try await iterator.next()?.map(\.id) == [4, 20, 5])
        try await authors.delete(5)  // deleted
        #expect(try await iterator.next()?.map(\.id) == [4, 20])
        try await authors.persist(Author(id: 99, name: "elsewhere", born: 2000))  // unrelated: no result set
        try await authors.persist(Author(id: 6, name: "n6", born: 1905))  // moved in
        #expect(try await iterator.next()?.map(\.id) == [4, 20, 6])
        // Identifier range, descending, with a limit (re-run when affected).
        let top = try await authors.liveQuery(..., order: .descending, limit: 2)
        var topIterator = top.makeAsyncIterator()
        #expect(try await topIterator.next()?.map(\.id) == [99, 20])
        try await authors.persist(Author(id: 150, name: "top", born: 1))
        #expect(try await topIterator.next()?.map(\.id) == [150, 99])
    }

    @Test func decodingFailuresAreReportedNotDropped() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        let events = try await authors.observe()
        let garbage = try StoredRecord.encode(version: "1", indexKeys: [], payload: Array("{oops".utf8))
        try persistence.store.write { txn in
            try txn.put(garbage, for: 5.keyBytes, in: "records/authors")
        }
        try await authors.persist(Author(id: 6, name: "fine", born: 1))
        let collected = try await take(2, from: events)
        guard case .failure(let error, _) = collected[0], case .decodingFailed(_, "5", _, _) = error else {
            Issue.record("expected a decoding failure, got \(collected[0])")
            return
        }
        guard case .change(let change) = collected[1] else { Issue.record("expected a change"); return }
        #expect(change.identifier == 6)
    }
}
