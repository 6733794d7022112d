import Dispatch
import Foundation
import Synchronization
import FolioStorage

/// The shared, thread-safe part of a persistence: the engine store and
/// what this process knows about each datastore. Reads use it directly, without hopping
/// onto the ``Persistence`` actor (reads never wait for a writer's commit; a read that
/// finds another process's commit adopts it first, `Store.followIfRootFileChanged()`).
final class PersistenceCore: Sendable {
    let store: Store
    let isReadOnly: Bool
    let durability: Durability
    let registry = Mutex<[String: Registration]>([:])
    /// One preparation at a time per datastore, by key (`Datastore.prepare(in:)`).
    private let preparationTurns = Mutex<[String: AsyncGate]>([:])
    /// Which write transaction is preparing each datastore (``PreparationHolds``).
    let preparationHolds = PreparationHolds()
    /// Observation of this persistence's commits (idle until the first observer).
    let hub: ObservationHub
    /// Decoded records by datastore and identifier (Cache/RecordCache.swift); nil if off.
    let records: RecordCache?
    /// The limits `records` was made with, for ``Persistence/reopened()``.
    let recordCacheLimits: RecordCacheLimits?
    /// The key-value store's values set and not yet published, and its cache.
    let values: KeyValueMemory
    /// The limits the key-value store's cache was made with, for ``Persistence/reopened()``.
    let valueCacheLimits: RecordCacheLimits?
    /// How long `Persistence.close()` waits for the writer slot to commit values still
    /// queued, in milliseconds: a bound, since the slot may be held by a transaction that
    /// will not end soon (or by the very task that calls close, inside `perform`). Tests
    /// change it, to wait without a deadline or to give up at once.
    let valuesCloseWait = Atomic<Int>(2_000)
    /// Changes of the store's catalog made by writers in other processes, counted as this
    /// process learns of them: a datastore is ready at the count its preparation saw, and
    /// compared with the catalog again once the count has moved (``CatalogChanges``).
    let catalogChanges = CatalogChanges()

    /// One datastore as this process has declared it.
    struct Registration {
        var signature: DatastoreSignature
        /// Read-write: the catalog matches the declaration and every index is built, as of
        /// this count of other writers' catalog changes (nil: not prepared). Ready while the
        /// count has not moved since.
        var readyAt: Int?
        /// Read-only: the catalog entry last seen, and the indexes it says are usable.
        var catalogBytes: [UInt8]?
        var usableIndexes: Set<String> = []
    }

    init(store: Store, durability: Durability, recordCache: RecordCacheLimits?, valueCache: RecordCacheLimits?) {
        self.store = store
        self.isReadOnly = store.isReadOnly
        self.durability = durability
        hub = ObservationHub(store: store)
        recordCacheLimits = recordCache
        valueCacheLimits = valueCache
        // Generation 0: the first read raises it to the store's newest (RecordCache).
        let records = recordCache.map { RecordCache(limits: $0, generation: 0) }
        let values = KeyValueMemory(cacheLimits: valueCache)
        self.records = records
        self.values = values
        // The store's one generation listener tells both caches (Docs/Cache.md §7.1), and
        // counts the catalog changes of writers in other processes: a datastore this process
        // prepared may have been prepared again by another declaration (an extension of an
        // older or newer release), so its next use compares the catalog again.
        let catalogChanges = self.catalogChanges
        store.onGenerationCreated { created in
            records?.generationCreated(created)
            values.cache?.generationCreated(created)
            if created.byAnotherWriter || created.replacesHistory, created.mayHaveChanged(DatastoreLayout.catalogTree) {
                catalogChanges.note(at: created.generation)
            }
        }
    }

    /// A read-only core over another core's store (``Persistence/readOnly()``).
    init(sharingReadOnly other: PersistenceCore) {
        store = other.store
        isReadOnly = true
        durability = other.durability
        hub = other.hub
        records = other.records
        recordCacheLimits = other.recordCacheLimits
        values = other.values
        valueCacheLimits = other.valueCacheLimits
    }

    /// Records the declaration of a datastore, or checks it against an earlier one.
    /// Returns the count of catalog changes at which the datastore is prepared, if it is
    /// (read-write persistences only), nil if it is not.
    func register(_ signature: DatastoreSignature, key: String) throws(FolioError) -> Int? {
        let now = catalogChanges.count
        return try registry.withLock { (registry) throws(FolioError) -> Int? in
            if let existing = registry[key] {
                guard existing.signature == signature else {
                    throw .incompatibleDeclaration(
                        datastore: key,
                        reason: existing.signature.difference(from: signature))
                }
                return existing.readyAt == now ? now : nil
            }
            registry[key] = Registration(signature: signature)
            return nil
        }
    }

    /// The gate a preparation of the datastore of `key` holds while it runs.
    func preparationTurn(for key: String) -> AsyncGate {
        preparationTurns.withLock { turns in
            if let turn = turns[key] { return turn }
            let turn = AsyncGate()
            turns[key] = turn
            return turn
        }
    }

    /// Whether the datastore of `key` is prepared (read-write persistences), and no writer
    /// of another process has changed the catalog since.
    func isReady(_ key: String) -> Bool {
        let now = catalogChanges.count
        return registry.withLock { $0[key]?.readyAt == now }
    }

    /// Marks the datastores prepared as of `count` catalog changes: the count the caller
    /// saw before it read the catalog it compared (see ``CatalogChanges`` for why a read
    /// view must also include the changes counted), so that a change another writer made
    /// meanwhile is not taken as prepared.
    func markReady(_ keys: some Sequence<String>, asOf count: Int) {
        registry.withLock { registry in
            for key in keys { registry[key]?.readyAt = count }
        }
    }

    /// Appends a transaction's commit on the calling thread (step 1 of the protocol); the
    /// caller frees the writer slot and then calls ``acknowledge(_:)``. Appending and
    /// syncing on the calling thread: a sync costs about 100-200 µs on the benchmark
    /// machine, and handing it to another thread and back cost more than that in
    /// wake-ups. Reads never wait for it (they take no lock it holds: a read's look at the
    /// root slots finds this process's turn held and follows nothing).
    func append(
        _ transaction: WriteTransaction, generationAssigned: (UInt64) -> Void = { _ in }
    ) throws(FolioError) -> AppendedCommit {
        try FolioError.wrap { () throws(StorageError) in
            try transaction.commitAppending(generationAssigned: generationAssigned)
        }
    }

    /// Waits until an appended commit is durable (group commit: the sync may be another
    /// writer's, shared), then hands observers their events.
    func acknowledge(_ commit: AppendedCommit) async throws(FolioError) {
        do {
            try await commit.waitUntilDurable()
        } catch {
            throw FolioError.storage(error)
        }
    }
}

/// What identifies a datastore declaration: declaring the same key twice in one
/// persistence must agree on all of it.
struct DatastoreSignature: Equatable, Sendable {
    var instanceType: String
    var identifierType: String
    var versions: [String]
    var currentVersion: String
    var indexes: [String: String]

    func difference(from other: DatastoreSignature) -> String {
        if instanceType != other.instanceType { return "instance types \(instanceType) and \(other.instanceType)" }
        if identifierType != other.identifierType {
            return "identifier types \(identifierType) and \(other.identifierType)"
        }
        if versions != other.versions || currentVersion != other.currentVersion { return "different versions" }
        return "different indexes (\(indexes.keys.sorted()) and \(other.indexes.keys.sorted()))"
    }
}
