import Foundation
import Observation
import Testing
@_spi(Engine) @testable import Folio

/// Which actor an ObservableResults changes on: the main actor by default, whatever actor
/// creates it, or the actor given; every `onChange` of an observer runs there.
@Suite(.timeLimit(.minutes(10))) struct ObservableResultsIsolationTests {
    /// Created off the main actor, with no actor given: it still changes on the main actor.
    @Test func changesComeOnTheMainActorByDefault() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await authors.persist(Author(id: 1, name: "a", born: 1901))
        let object = ObservableResults(authors, where: #Predicate { $0.born < 1940 })
        let notices = ResultNotices(object) { MainActorCheck.isCurrent }
        await waitUntil(object, isolation: MainActor.shared) { $0.phase == .loaded }
        try await authors.persist(Author(id: 2, name: "b", born: 1902))
        await waitUntil(object, isolation: MainActor.shared) { $0.results.count == 2 }
        #expect(notices.all == 2)
        #expect(notices.offActor == 0, "an onChange ran off the main actor")
    }

    @Test func changesComeOnTheActorGiven() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await authors.persist(Author(id: 1, name: "a", born: 1901))
        let worker = Worker()
        let executor = worker.executor
        let object = ObservableResults(authors, where: #Predicate { $0.born < 1940 }, isolation: worker)
        let notices = ResultNotices(object) { executor.isCurrent }
        await waitUntil(object, isolation: worker) { $0.phase == .loaded }
        try await authors.persist(Author(id: 2, name: "b", born: 1902))
        await waitUntil(object, isolation: worker) { $0.results.count == 2 }
        object.replaceQuery(where: #Predicate { $0.born > 1901 })
        await waitUntil(object, isolation: worker) { $0.phase == .loaded && $0.results.map(\.id) == [2] }
        #expect(notices.all == 3)
        #expect(notices.offActor == 0, "an onChange ran off the actor given")
        // The phase's notices too, the failure's included.
        let (onWorker, phase) = await firstPhaseNotice(
            of: { ObservableResults(authors, limit: -1, isolation: worker) }, isOnActor: { executor.isCurrent },
            isolation: worker)
        #expect(onWorker, "the failure's notice ran off the actor given")
        #expect(phase != .loading && phase != .loaded)
    }

    /// Releasing an object ends its subscription even while its actor is busy: waiting for
    /// results, and ending, happen off the actor; only hand-overs need it.
    @Test func aBusyActorDoesNotHoldAReleasedObjectsSubscriptionOpen() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        let hub = persistence.core.hub
        try await authors.persist(Author(id: 1, name: "a", born: 1901))
        let worker = Worker()
        var object: ObservableResults<AuthorFormat>? = ObservableResults(authors, isolation: worker)
        await waitUntil(object!, isolation: worker) { $0.phase == .loaded }
        await settle(hub)
        #expect(hub.observerCount == 1)
        let gate = DispatchSemaphore(value: 0)
        await withCheckedContinuation { (entered: CheckedContinuation<Void, Never>) in
            Task { await worker.hold(until: gate) { entered.resume() } }
        }
        object = nil
        #expect(await observerCount(of: hub, becomes: 0), "the subscription waited for the busy actor")
        gate.signal()
    }

    /// Makes an object on its actor and registers for its phase at once (no change can come
    /// between: changes run on that actor too); returns whether the first notice ran on the
    /// actor, and the phase after it.
    private func firstPhaseNotice<Format: DatastoreFormat>(
        of make: @Sendable () -> ObservableResults<Format>, isOnActor: @escaping @Sendable () -> Bool,
        isolation: isolated any Actor
    ) async -> (Bool, ObservableResults<Format>.Phase) {
        let object = make()
        let onActor = await withCheckedContinuation { (noticed: CheckedContinuation<Bool, Never>) in
            withObservationTracking {
                _ = object.phase
            } onChange: {
                noticed.resume(returning: isOnActor())
            }
        }
        return (onActor, object.phase)
    }
}
