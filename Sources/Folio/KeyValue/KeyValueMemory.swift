import Synchronization
import FolioStorage

/// The in-memory half of a persistence's key-value store: the values set in this process
/// that readers cannot see in the store yet, and a cache of committed values.
///
/// **Why a read outside a transaction sees each set at once, and never an older value
/// afterwards.** A set outside any transaction enters `writes` as *queued* before it
/// returns, and reads look at `writes` before the store. A queued write leaves `writes`
/// only after the commit that holds it is published (readers of the store then see it:
/// `published(_:)` runs after `waitUntilDurable`), and only if no newer set replaced it. In
/// between it is *committing*: still read from here, no longer written by another commit.
/// A transaction (`perform`) that writes a key with a write in `writes` replaces that write,
/// at its append, by the value it commits (``supersede(_:by:)``), so a read never goes from
/// the transaction's value back to the older set's.
///
/// **Order.** Sets outside transactions are ordered by their calls, transactions by their
/// commits: queued writes are committed (``commitQueued(in:)``) before any other write
/// transaction begins (`Persistence.beginInSlot`), so a transaction reads every value set
/// before it began, and a set during a transaction that writes the same key loses to it
/// when the transaction commits (it was replaced at the append).
///
/// The cache is a ``RecordCache`` over the key-value tree: its exactness argument
/// (Docs/Cache.md §7.1) holds unchanged for it.
final class KeyValueMemory: Sendable {
    /// A value set and not yet published, or a removal.
    struct Write: Sendable {
        /// Orders writes of one key: the newest replaces the older in `writes`.
        let sequence: UInt64
        let slot: ValueSlot
        /// Waiting for a commit (true), or in a commit appended and not yet published.
        var queued: Bool
    }

    /// Writes taken out of the queue into one commit, to be published together.
    struct Batch: Sendable {
        var entries: [(name: String, sequence: UInt64, slot: ValueSlot)]
        /// The commit that holds them, once appended.
        var commit: AppendedCommit?
    }

    private struct State {
        var writes: [String: Write] = [:]
        var nextSequence: UInt64 = 1
        var queuedCount = 0
        /// A background commit is scheduled and has not taken the queue yet.
        var drainScheduled = false
        /// The newest commit of queued writes: `flush` waits until it is durable.
        var lastCommit: AppendedCommit?
        /// Why the newest commit of queued writes could not be made durable (the store is
        /// then poisoned: every later write fails too).
        var failure: FolioError?
    }

    private let state = Mutex(State())
    /// Committed values by key (nil if the persistence was opened with no value cache).
    let cache: RecordCache?

    init(cacheLimits: RecordCacheLimits?) {
        cache = cacheLimits.map { RecordCache(limits: $0, generation: 0, tracks: { $0 == KeyValueLayout.tree }) }
    }

    /// The write of `name` not yet published, if any.
    func pendingWrite(_ name: String) -> ValueSlot? {
        state.withLock { $0.writes[name]?.slot }
    }

    /// The writes not yet published whose names start with `prefix`.
    func pendingWrites(withPrefix prefix: String) -> [(name: String, present: Bool)] {
        state.withLock { state in
            state.writes.compactMap { name, write in name.hasPrefix(prefix) ? (name, write.slot.bytes != nil) : nil }
        }
    }

    /// Whether writes are waiting for a commit.
    var hasQueued: Bool { state.withLock { $0.queuedCount > 0 } }

    /// Queues a set (or a removal: `slot.bytes == nil`) of `name`, visible to this process's
    /// reads from now on. Returns true if the caller must schedule a background commit.
    func enqueue(_ name: String, _ slot: ValueSlot) -> Bool {
        state.withLock { state in
            let sequence = state.nextSequence
            state.nextSequence += 1
            if state.writes[name]?.queued != true { state.queuedCount += 1 }
            state.writes[name] = Write(sequence: sequence, slot: slot, queued: true)
            if state.drainScheduled { return false }
            state.drainScheduled = true
            return true
        }
    }

    /// Takes every queued write out of the queue (they stay readable, as committing).
    private func takeQueued() -> Batch {
        state.withLock { state in
            state.drainScheduled = false
            guard state.queuedCount > 0 else { return Batch(entries: []) }
            var entries: [(name: String, sequence: UInt64, slot: ValueSlot)] = []
            entries.reserveCapacity(state.queuedCount)
            for (name, write) in state.writes where write.queued {
                entries.append((name, write.sequence, write.slot))
                state.writes[name]?.queued = false
            }
            state.queuedCount = 0
            return Batch(entries: entries)
        }
    }

    /// Puts writes of a commit that failed back in the queue, unless newer ones replaced them.
    private func requeue(_ batch: Batch) {
        state.withLock { state in
            for entry in batch.entries where state.writes[entry.name]?.sequence == entry.sequence {
                state.writes[entry.name]?.queued = true
                state.queuedCount += 1
            }
        }
    }

    /// Appends one commit of every queued write. The caller holds the writer slot. Returns
    /// nil if nothing was queued. If the commit cannot be appended, the writes go back in
    /// the queue (nothing set is dropped) and the error is thrown.
    func commitQueued(in store: Store) throws(FolioError) -> Batch? {
        var batch = takeQueued()
        guard !batch.entries.isEmpty else { return nil }
        do throws(StorageError) {
            let transaction = try store.beginWrite()
            do throws(StorageError) {
                for entry in batch.entries {
                    let key = Array(entry.name.utf8)  // checked against the limit when it was set
                    if let bytes = entry.slot.bytes {
                        _ = try transaction.put(bytes, for: key, in: KeyValueLayout.tree)
                    } else {
                        _ = try transaction.remove(key, from: KeyValueLayout.tree)
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

    /// `batch`'s commit is published: its writes leave `writes` (unless replaced since),
    /// and the values enter the cache as of its generation.
    func published(_ batch: Batch) {
        guard let commit = batch.commit else { return }
        state.withLock { state in
            for entry in batch.entries where state.writes[entry.name]?.sequence == entry.sequence {
                state.writes[entry.name] = nil
            }
        }
        guard let cache else { return }
        let generation = commit.notification.generation
        for entry in batch.entries {
            cache.insert(entry.slot, Array(entry.name.utf8), in: KeyValueLayout.tree, generation: generation,
                         bytes: entry.slot.cost + entry.name.utf8.count, format: Self.slotFormat)
        }
    }

    /// The names among `names` with a write in `writes` (what a committing transaction must
    /// replace, ``supersede(_:by:)``).
    func pendingNames(among names: Set<String>) -> [String] {
        state.withLock { state in names.filter { state.writes[$0] != nil } }
    }

    /// A transaction that wrote the keys in `values` (their committed bytes, nil for none)
    /// was appended as `commit`: its values replace the writes of those keys not yet
    /// published, until it is (see the type's comment). Returns the batch to publish.
    func supersede(_ values: [(name: String, bytes: [UInt8]?)], by commit: AppendedCommit) -> Batch {
        state.withLock { state in
            var batch = Batch(entries: [], commit: commit)
            for (name, bytes) in values {
                guard let old = state.writes[name] else { continue }
                if old.queued { state.queuedCount -= 1 }
                let sequence = state.nextSequence
                state.nextSequence += 1
                let slot = ValueSlot(bytes: bytes, decoded: nil, type: nil)
                state.writes[name] = Write(sequence: sequence, slot: slot, queued: false)
                batch.entries.append((name, sequence, slot))
            }
            return batch
        }
    }

    /// The committed value of `name` as of `view`: from the cache, or read from the view
    /// (and then cached).
    func committed(_ name: String, key: [UInt8], in view: ReadView) throws(FolioError) -> ValueSlot {
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
        guard let cache, let bytes = slot.bytes else { return }
        let decoded = ValueSlot(bytes: bytes, decoded: value, type: ObjectIdentifier(Value.self))
        cache.insert(decoded, key, in: KeyValueLayout.tree, generation: generation, bytes: decoded.cost + key.count, format: Self.slotFormat)
    }

    /// Every slot is cached under one format: the slot itself says which type it decoded.
    static let slotFormat = ObjectIdentifier(ValueSlot.self)
}
