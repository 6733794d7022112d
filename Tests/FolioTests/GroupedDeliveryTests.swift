import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage

/// Grouped durability as a datastore user sees it: grouped commits reach `observe()`
/// streams, all of them and in order; a dropped grouped persistence keeps its last window;
/// an overflow's reload token names a durable generation. `FOLIO_STRESS_TESTS=1` runs the
/// stress test longer.
@Suite struct GroupedDeliveryTests {
    static var isLong: Bool { ProcessInfo.processInfo.environment["FOLIO_STRESS_TESTS"] == "1" }

    /// 0 ms window, an explicit flush after each commit and a thread flushing in a loop,
    /// all racing the timer's flushes: every change arrives, once, in commit order.
    @Test func groupedObserveStreamGetsEveryChangeInOrder() async throws {
        let count = Self.isLong ? 10_000 : 1_000
        let persistence = Persistence.inMemory(options: PersistenceOptions(durability: .grouped(window: .zero)))
        let authors = persistence.datastore(for: AuthorFormat.self)
        let events = try await authors.observe(bufferLimit: count + 10)
        let store = persistence.store
        let done = Atomic<Bool>(false)
        let flusher = Thread { while !done.load(ordering: .relaxed) { try? store.flush() } }
        flusher.start()
        for n in 0..<count {
            try await authors.persist(Author(id: n, name: "n\(n)", born: n))
            try store.flush()
        }
        done.store(true, ordering: .relaxed)
        let collected = try await take(count, from: events, seconds: 20)
        let identifiers = collected.compactMap { if case .change(let change) = $0 { change.identifier } else { nil } }
        #expect(identifiers == Array(0..<count), "\(identifiers.count) of \(count) changes arrived")
        persistence.close()
    }

    /// A grouped persistence dropped without close() keeps its last window.
    @Test func droppedGroupedPersistenceKeepsItsLastWindow() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/dropped-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let persistence = try Persistence(
                at: path, options: PersistenceOptions(durability: .grouped(window: .seconds(60))))
            let authors = persistence.datastore(for: AuthorFormat.self)
            for n in 0..<5 { try await authors.persist(Author(id: n, name: "n\(n)", born: n)) }
        }
        let reopened = try Persistence(at: path)
        defer { reopened.close() }
        let authors = reopened.datastore(for: AuthorFormat.self)
        for n in 0..<5 { #expect(try await authors.load(n)?.name == "n\(n)") }
    }

    /// After an overflow, the reload token names the last delivered (durable)
    /// generation, not a grouped generation that is not on disk yet.
    @Test func reloadTokenNamesADurableGeneration() async throws {
        let persistence = Persistence.inMemory(options: PersistenceOptions(durability: .grouped(window: .seconds(60))))
        let authors = persistence.datastore(for: AuthorFormat.self)
        let events = try await authors.observe(bufferLimit: 2)
        for n in 0..<5 { try await authors.persist(Author(id: n, name: "n\(n)", born: n)) }
        try persistence.store.flush()
        let durable = persistence.currentToken.generation
        try await Task.sleep(for: .milliseconds(200))  // let the hub overflow the buffer
        try await authors.persist(Author(id: 99, name: "unflushed", born: 0))
        #expect(persistence.currentToken.generation == durable + 1)
        var iterator = events.makeAsyncIterator()
        let first = await iterator.next()
        guard case .reload(let token)? = first else {
            Issue.record("expected a reload, got \(String(describing: first))")
            return
        }
        #expect(token.generation == durable)
        persistence.close()
    }
}
