import Synchronization
import FolioStorage

/// The in-memory half of a persistence's key-value store: the values set in this process
/// that readers cannot see in the store yet, and a cache of committed values.
///
/// **Why a read outside a transaction sees each set at once, and never an older value
/// afterwards.** A set outside any transaction enters `queued` before it returns, and reads
/// look at `queued`, then at the batches in flight from the newest to the oldest, before the
/// store. A background commit moves the whole of `queued` into a new batch in flight (one
/// move under the lock, so a reader never waits for a commit's work), and the batch leaves
/// only after its commit is published (readers of the store then see it: `published(_:)`
/// runs after `waitUntilDurable`). A newer write of the same key is always found first: it
/// is in `queued` or in a newer batch. A transaction (`perform`) that writes keys with a
/// write not yet published drops them from `queued` and adds its committed values as the
/// newest batch, at its append (``supersede(_:by:)``), so a read never goes from the
/// transaction's value back to the older set's.
///
/// **Order.** Sets outside transactions are ordered by their calls, transactions by their
/// commits: queued writes are committed (``commitQueued(in:)``) before any other write
/// transaction begins (`Persistence.beginInSlot`), so a transaction reads every value set
/// before it began, and a set during a transaction that writes the same key loses to it
/// when the transaction commits (it was replaced at the append).
///
/// Writes are keyed by the names' UTF-8 bytes, as the store keys them: two names Swift
/// calls equal (`"é"` precomposed and decomposed) are two keys, in memory as on disk.
///
/// The cache is a ``RecordCache`` over the key-value tree: its exactness argument
/// (Docs/Cache.md §7.1) holds unchanged for it.
final class KeyValueMemory: Sendable {
    /// Writes taken out of the queue into one commit, to be published together (a removal
    /// is a slot with no bytes).
    struct Batch: Sendable {
        let id: UInt64
        let writes: [HashedKey: ValueSlot]
        /// The commit that holds them, once appended.
        var commit: AppendedCommit?
    }

    private struct State {
        /// Writes waiting for a commit.
        var queued: [HashedKey: ValueSlot] = [:]
        /// Writes in commits appended and not yet published, oldest first.
        var inFlight: [(id: UInt64, writes: [HashedKey: ValueSlot])] = []
        var nextBatch: UInt64 = 1
        /// A background commit is scheduled and has not taken the queue yet.
        var drainScheduled = false
        /// The newest commit of queued writes: `flush` waits until it is durable.
        var lastCommit: AppendedCommit?
        /// Why a commit of queued writes could not be made durable (the store is then
        /// poisoned: every later write fails too).
        var failure: FolioError?

        /// The newest write of `name` not yet published.
        func write(_ name: HashedKey) -> ValueSlot? {
            if let slot = queued[name] { return slot }
            for batch in inFlight.reversed() {
                if let slot = batch.writes[name] { return slot }
            }
            return nil
        }
    }

    private let state = Mutex(State())
    /// Committed values by key (nil if the persistence was opened with no value cache).
    let cache: RecordCache?

    init(cacheLimits: RecordCacheLimits?) {
        cache = cacheLimits.map { RecordCache(limits: $0, generation: 0, tracks: { $0 == KeyValueLayout.tree }) }
    }

    /// The newest write of the key `key` (a name's UTF-8 bytes) not yet published, if any.
    func pendingWrite(_ key: [UInt8]) -> ValueSlot? {
        state.withLock { state in
            if state.queued.isEmpty && state.inFlight.isEmpty { return nil }
            return state.write(HashedKey(key))
        }
    }

    /// The keys of the writes not yet published that start with the bytes `prefix`, each
    /// with whether it sets a value (true) or removes one.
    func pendingWrites(withPrefix prefix: [UInt8]) -> [(key: HashedKey, present: Bool)] {
        state.withLock { state in
            var newest: [HashedKey: Bool] = [:]
            for batch in state.inFlight {
                for (key, slot) in batch.writes where key.bytes.starts(with: prefix) { newest[key] = slot.bytes != nil }
            }
            for (key, slot) in state.queued where key.bytes.starts(with: prefix) { newest[key] = slot.bytes != nil }
            return newest.map { ($0.key, $0.value) }
        }
    }

    /// Whether writes are waiting for a commit.
    var hasQueued: Bool { state.withLock { !$0.queued.isEmpty } }

    /// Queues a set (or a removal: `slot.bytes == nil`) of `name`, visible to this process's
    /// reads from now on. Returns true if the caller must schedule a background commit.
    func enqueue(_ key: [UInt8], _ slot: ValueSlot) -> Bool {
        state.withLock { state in
            state.queued[HashedKey(key)] = slot
            if state.drainScheduled { return false }
            state.drainScheduled = true
            return true
        }
    }

    /// Moves every queued write into a new batch in flight (they stay readable).
    private func takeQueued() -> Batch? {
        state.withLock { state in
            state.drainScheduled = false
            guard !state.queued.isEmpty else { return nil }
            let id = state.nextBatch
            state.nextBatch += 1
            let writes = state.queued
            state.queued = [:]
            state.inFlight.append((id, writes))
            return Batch(id: id, writes: writes)
        }
    }

    /// Puts the writes of a batch whose commit failed back in the queue, except those a
    /// newer write replaced.
    private func requeue(_ batch: Batch) {
        state.withLock { state in
            guard let position = state.inFlight.firstIndex(where: { $0.id == batch.id }) else { return }
            let newer = state.inFlight[(position + 1)...]
            state.inFlight.remove(at: position)
            for (key, slot) in batch.writes where state.queued[key] == nil && !newer.contains(where: { $0.writes[key] != nil }) {
                state.queued[key] = slot
            }
        }
    }

    /// Appends one commit of every queued write. The caller holds the writer slot. Returns
    /// nil if nothing was queued. If the commit cannot be appended, the writes go back in
    /// the queue (nothing set is dropped) and the error is thrown.
    func commitQueued(in store: Store) throws(FolioError) -> Batch? {
        guard var batch = takeQueued() else { return nil }
        do throws(StorageError) {
            let transaction = try store.beginWrite()
            do throws(StorageError) {
                for (key, slot) in batch.writes {
                    // Keys were checked against the limit when they were set.
                    if let bytes = slot.bytes {
                        _ = try transaction.put(bytes, for: key.bytes, in: KeyValueLayout.tree)
                    } else {
                        _ = try transaction.remove(key.bytes, from: KeyValueLayout.tree)
                    }
                }
            } catch {
                transaction.rollback()
                throw error
            }
            let appended = try transaction.commitAppending()
            batch.commit = appended
            state.withLock { $0.lastCommit = appended }
            return batch
        } catch {
            requeue(batch)
            throw .storage(error)
        }
    }

    /// Waits until `batch`'s commit is durable and published, then lets readers find its
    /// writes in the store (``published(_:)``).
    func awaitPublished(_ batch: Batch) async throws(FolioError) {
        guard let commit = batch.commit else { return }
        do throws(StorageError) {
            try await commit.waitUntilDurable()
        } catch {
            state.withLock { $0.failure = .storage(error) }
            throw .storage(error)
        }
        published(batch)
    }

    /// Waits until the newest commit of queued writes is durable, and throws why if it
    /// cannot be.
    func awaitLastCommit() async throws(FolioError) {
        let (commit, failure) = state.withLock { ($0.lastCommit, $0.failure) }
        if let failure { throw failure }
        guard let commit else { return }
        do throws(StorageError) {
            try await commit.waitUntilDurable()
        } catch {
            throw .storage(error)
        }
    }

    /// `batch`'s commit is published: the batch leaves the writes in flight (a newer write
    /// of any of its keys is in a newer batch or the queue), and its values enter the cache
    /// as of its generation. So do the batches before it: batches are made under the writer
    /// slot, in the order of their commits, and commits are published in generation order,
    /// so theirs are published too (an older batch left behind would hide this one's values
    /// for the keys both wrote).
    func published(_ batch: Batch) {
        guard let commit = batch.commit else { return }
        state.withLock { state in state.inFlight.removeAll { $0.id <= batch.id } }
        guard let cache else { return }
        let generation = commit.notification.generation
        for (key, slot) in batch.writes {
            cache.insert(slot, key.bytes, in: KeyValueLayout.tree, generation: generation,
                         bytes: slot.cost + key.bytes.count, format: Self.slotFormat)
        }
    }

    /// The keys among `keys` with a write not yet published (what a committing
    /// transaction must replace, ``supersede(_:by:)``).
    func pendingKeys(among keys: Set<HashedKey>) -> [HashedKey] {
        state.withLock { state in keys.filter { state.write($0) != nil } }
    }

    /// A transaction that wrote the keys in `values` (their committed bytes, nil for none)
    /// was appended as `commit`: its values replace the writes of those keys not yet
    /// published, until it is (see the type's comment). Returns the batch to publish.
    func supersede(_ values: [(key: HashedKey, bytes: [UInt8]?)], by commit: AppendedCommit) -> Batch {
        state.withLock { state in
            var writes: [HashedKey: ValueSlot] = [:]
            for (key, bytes) in values {
                state.queued[key] = nil
                writes[key] = ValueSlot(bytes: bytes, decoded: nil, type: nil)
            }
            let id = state.nextBatch
            state.nextBatch += 1
            state.inFlight.append((id, writes))
            return Batch(id: id, writes: writes, commit: commit)
        }
    }

    /// The committed value of `key` as of `view`: from the cache, or read from the view
    /// (and then cached).
    func committed(_ key: [UInt8], in view: ReadView) throws(FolioError) -> ValueSlot {
        let generation = view.generation
        if let cache, let slot: ValueSlot = cache.instance(key, in: KeyValueLayout.tree, generation: generation, format: Self.slotFormat) {
            return slot
        }
        let bytes = try FolioError.wrap { () throws(StorageError) in try view.get(key, in: KeyValueLayout.tree) }
        let slot = ValueSlot(bytes: bytes, decoded: nil, type: nil)
        cache?.insert(slot, key, in: KeyValueLayout.tree, generation: generation, bytes: slot.cost + key.count, format: Self.slotFormat)
        return slot
    }

    /// The cached committed value of `name` as of `generation`, if any.
    func cached(_ key: [UInt8], generation: UInt64) -> ValueSlot? {
        cache?.instance(key, in: KeyValueLayout.tree, generation: generation, format: Self.slotFormat)
    }

    /// Keeps a decoded value beside its bytes in the cache, so the next read of the same
    /// type does not decode (only if the cache is still at `generation`).
    func rememberDecoded<Value: Sendable>(_ value: Value, of slot: ValueSlot, key: [UInt8], generation: UInt64) {
        guard let cache, let bytes = slot.bytes, !(Value.self is AnyObject.Type) else { return }
        let decoded = ValueSlot(bytes: bytes, decoded: value)
        cache.insert(decoded, key, in: KeyValueLayout.tree, generation: generation, bytes: decoded.cost + key.count, format: Self.slotFormat)
    }

    /// Every slot is cached under one format: the slot itself says which type it decoded.
    static let slotFormat = ObjectIdentifier(ValueSlot.self)
}
