import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage

/// Waits until the hub's queue has run everything queued so far.
func settle(_ hub: ObservationHub) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in hub.queue.async { done.resume() } }
}

/// The edges of subscribing, dropping and overflowing observers: a commit racing the first
/// subscription, sequences dropped as soon as they are made, instance observers that
/// overflow.
@Suite struct ObservationEdgeTests {
    /// A commit landing while the first observer subscribes is neither lost nor
    /// applied twice (the hub observes the store first, then reads it).
    @Test func aCommitRacingTheFirstSubscriptionIsNotLost() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await authors.persist(Author(id: 1, name: "first", born: 1))
        let store = persistence.store
        let racer = Author(id: 2, name: "racing", born: 2)
        let racing = try authors.schema.encodeRecord(racer, identifier: authors.schema.identifierKey(of: racer)).record
        let failure = Mutex<String?>(nil)
        persistence.core.hub.betweenSubscribeSteps.withLock {
            $0 = {
                do {
                    try store.write { try $0.put(racing, for: 2.keyBytes, in: "records/authors") }
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
            }
        }
        let live = try await authors.liveQuery(...)
        persistence.core.hub.betweenSubscribeSteps.withLock { $0 = nil }
        #expect(failure.withLock { $0 } == nil)
        var iterator = live.makeAsyncIterator()
        let initial = try await iterator.next()?.map(\.id)
        try await authors.persist(Author(id: 3, name: "after", born: 3))
        var latest = initial
        while latest?.contains(3) != true { latest = try await iterator.next()?.map(\.id) }
        #expect(
            latest == [1, 2, 3], "the racing commit must be in the results (initial \(String(describing: initial)))")
    }

    /// Sequences created and dropped at once leave no observer registered, whatever
    /// order the hub's queue runs the registration and the removal in.
    @Test func droppedSequencesLeaveNoObserverBehind() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await authors.persist(Author(id: 1, name: "a", born: 1))
        let hub = persistence.core.hub
        // Hold the hub's queue: every registration is still queued when its sequence goes.
        let gate = DispatchSemaphore(value: 0)
        hub.queue.async { gate.wait() }
        for _ in 0..<10 {
            _ = try await authors.observe()
            _ = try await authors.observe(1)
            _ = try await authors.liveQuery(...)
        }
        gate.signal()
        await settle(hub)
        #expect(hub.observerCount == 0)
        // And without holding the queue: registration and removal in whatever order they run.
        for _ in 0..<50 {
            _ = try await authors.observe()
            _ = try await authors.observe(1)
        }
        await settle(hub)
        #expect(hub.observerCount == 0)
        // A sequence kept alive stays registered until it goes.
        var kept: InstanceEvents<AuthorFormat>? = try await authors.observe(1)
        await settle(hub)
        #expect(hub.observerCount == 1)
        kept = nil
        _ = kept
        await settle(hub)
        #expect(hub.observerCount == 0)
    }

    /// With `bufferLimit: 3`, five updates and a consumer that reads only afterwards,
    /// the values delivered never go back in time and end at the newest.
    @Test func anOverflowingInstanceObserverNeverGoesBackInTime() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await authors.persist(Author(id: 1, name: "v0", born: 0))
        let events = try await authors.observe(1, bufferLimit: 3)
        for n in 1...5 { try await authors.persist(Author(id: 1, name: "v\(n)", born: n)) }
        await settle(persistence.core.hub)
        let values = try await take(3, from: events).map { event -> Int in
            if case .value(let author) = event { return author.born }
            Issue.record("unexpected \(event)")
            return -1
        }
        #expect(values == values.sorted() && Set(values).count == values.count, "went back in time: \(values)")
        #expect(values.last == 5)
    }

    /// Under load, with the default buffer: a slow consumer of an instance observer sees
    /// strictly increasing values up to the last one, and nothing older after it.
    @Test func aSlowInstanceObserverUnderLoadSeesIncreasingValues() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await authors.persist(Author(id: 1, name: "v0", born: 0))
        let events = try await authors.observe(1)
        let last = 400
        let writer = Task {
            for n in 1...last { try await authors.persist(Author(id: 1, name: "v\(n)", born: n)) }
        }
        var values: [Int] = []
        var iterator = events.makeAsyncIterator()
        while values.last != last, let event = await iterator.next() {
            guard case .value(let author) = event else { Issue.record("unexpected \(event)"); break }
            values.append(author.born)
            try await Task.sleep(for: .microseconds(500))  // a slow consumer
        }
        try await writer.value
        // One more commit: anything older still buffered would come before it.
        try await authors.persist(Author(id: 1, name: "end", born: last + 1))
        while values.last != last + 1, let event = await iterator.next() {
            guard case .value(let author) = event else { Issue.record("unexpected \(event)"); break }
            values.append(author.born)
        }
        let regressions = zip(values, values.dropFirst()).filter { $0 >= $1 }
        #expect(regressions.isEmpty, "went back in time at \(regressions.prefix(5)) of \(values.count) values")
        #expect(values.last == last + 1)
    }
}
