import FolioStorage
/// Unregisters an observer from its hub when the last sequence or iterator using it goes.
final class ObserverLease: Sendable {
    let hub: ObservationHub
    let observer: any HubObserver

    init(hub: ObservationHub, observer: any HubObserver) {
        self.hub = hub
        self.observer = observer
        hub.add(observer)
    }

    deinit { hub.remove(observer) }
}

/// The changes of a datastore, as ``Datastore/observe(after:bufferLimit:)`` yields them:
/// an `AsyncSequence` that ends only when cancelled or released. Every committed change
/// arrives once, in commit order, after its commit is durable.
public struct DatastoreEvents<Format: DatastoreFormat>: AsyncSequence, Sendable {
    public typealias Element = DatastoreEvent<Format.Instance, Format.Identifier>
    public typealias Failure = Never

    let lease: ObserverLease
    let channel: EventChannel<Element>
    let core: PersistenceCore

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(lease: lease, channel: channel, core: core)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let lease: ObserverLease
        let channel: EventChannel<Element>
        let core: PersistenceCore

        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            switch await channel.pull() {
            case .element(let element): return element
            // The newest generation delivered to observers: durable (in grouped mode the
            // store's generation can be ahead of the disk), and every commit after it is
            // still on its way to this hub.
            case .overflow: return .reload(token: ObservationToken(generation: core.store.deliveredGeneration))
            case .finished: return nil
            }
        }

        public mutating func next() async -> Element? { await next(isolation: nil) }
    }
}

/// One instance over time, as ``Datastore/observe(_:bufferLimit:)`` yields it: its current
/// value, then its value after each commit that changes it; `.deleted` ends the sequence.
/// Values never go back in time: a consumer more than the buffer behind skips to the newest.
public struct InstanceEvents<Format: DatastoreFormat>: AsyncSequence, Sendable {
    public typealias Element = InstanceEvent<Format.Instance>
    public typealias Failure = Never

    let lease: ObserverLease
    let channel: EventChannel<Element>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(lease: lease, channel: channel)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let lease: ObserverLease
        let channel: EventChannel<Element>
        var done = false

        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            guard !done else { return nil }
            while true {
                switch await channel.pull() {
                case .element(let element):
                    if case .deleted = element { done = true }
                    return element
                // The channel restarts from the newest value when the consumer falls behind
                // (no re-read: the store may already be past values the hub has yet to
                // deliver, and those would then arrive after the newer re-read one).
                case .overflow: continue
                case .finished: return nil
                }
            }
        }

        public mutating func next() async -> Element? { await next(isolation: nil) }
    }
}

/// A live query's results, as ``Datastore/liveQuery(_:order:limit:)-(IndexRange<Format.Identifier>,_,_)`` and its index
/// variants yield them: the current results, then the results after each commit that
/// changes them. A consumer that falls behind gets the newest results, never a backlog.
/// A record that fails to decode ends the sequence with its error.
public struct LiveResults<Format: DatastoreFormat>: AsyncSequence, Sendable {
    public typealias Element = [Format.Instance]
    public typealias Failure = FolioError

    let lease: ObserverLease
    let channel: EventChannel<Result<Element, FolioError>>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(lease: lease, channel: channel)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let lease: ObserverLease
        let channel: EventChannel<Result<Element, FolioError>>

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(FolioError) -> Element? {
            switch await channel.pull() {
            case .element(.success(let results)): return results
            case .element(.failure(let error)): throw error
            case .overflow, .finished: return nil
            }
        }

        public mutating func next() async throws(FolioError) -> Element? { try await next(isolation: nil) }
    }
}
