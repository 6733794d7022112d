import Synchronization
import FolioStorage

extension KeyValueStore {
    /// The values of `key` over time: its committed value now (the default if none), then
    /// its value after each commit that changes it, in this process or, for a read-only
    /// persistence, in the writer's. Values set outside transactions arrive once their
    /// background commit is durable. A consumer that falls behind gets the newest value,
    /// never an older one after a newer. A stored value that does not decode as the key's
    /// type ends the sequence with ``FolioError/valueDecodingFailed(key:type:reason:)``.
    public func observe<Value>(_ key: ValueKey<Value>) -> ValueUpdates<Value> {
        let observer = ValueObserver(key: key, core: core)
        return ValueUpdates(lease: ObserverLease(hub: core.hub, observer: observer), channel: observer.channel)
    }
}

/// One key's values over time, as ``KeyValueStore/observe(_:)`` yields them.
public struct ValueUpdates<Value: Codable & Sendable>: AsyncSequence, Sendable {
    /// The key's value after a commit (its default when none is stored).
    public typealias Element = Value
    /// Why a value could not be read: the sequence ends with it.
    public typealias Failure = FolioError

    let lease: ObserverLease
    let channel: EventChannel<Result<Value, FolioError>>

    /// An iterator over the values.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(lease: lease, channel: channel)
    }

    /// Iterates the values of one key.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let lease: ObserverLease
        let channel: EventChannel<Result<Value, FolioError>>
        var done = false

        /// The next value; nil once the sequence is cancelled or has thrown.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(FolioError) -> Value? {
            guard !done else { return nil }
            switch await channel.pull() {
            case .element(.success(let value)): return value
            case .element(.failure(let error)):
                done = true
                throw error
            case .overflow, .finished: return nil
            }
        }

        /// The next value; nil once the sequence is cancelled or has thrown.
        public mutating func next() async throws(FolioError) -> Value? { try await next(isolation: nil) }
    }
}

/// The observer behind ``ValueUpdates``: one key of the key-value tree, driven by the
/// persistence's observation hub like a datastore's observers.
final class ValueObserver<Value: Codable & Sendable>: HubObserver {
    let key: ValueKey<Value>
    let keyBytes: [UInt8]
    let core: PersistenceCore
    /// The newest value waits (a key's value: an older one has no use once a newer exists).
    let channel = EventChannel<Result<Value, FolioError>>(policy: .keepLatest)

    init(key: ValueKey<Value>, core: PersistenceCore) {
        self.key = key
        self.keyBytes = Array(key.name.utf8)
        self.core = core
    }

    var observedTree: String { KeyValueLayout.tree }

    func start(at view: ReadView, hub: ObservationHub) {
        reload(at: view)
    }

    func apply(_ delta: CommitDelta) {
        guard delta.changed(keyBytes), let after = delta.after else { return }
        reload(at: after)
    }

    func reload(at view: ReadView) {
        do throws(FolioError) {
            _ = try KeyValueLayout.key(key.name)
            let bytes = try FolioError.wrap { () throws(StorageError) in try view.get(keyBytes, in: KeyValueLayout.tree)
            }
            let value = try bytes.map { (bytes) throws(FolioError) -> Value in
                try KeyValueLayout.decode(Value.self, from: bytes, key: key.name)
            }
            channel.push(.success(value ?? key.defaultValue))
        } catch {
            channel.push(.failure(error))
            channel.finish()
        }
    }
}
