import Synchronization
import FolioStorage

/// The in-memory half of a persistence's key-value store: the values set in this process
/// that readers cannot see in the store yet, as reads see them (this file), the committer
/// that moves them into commits (KeyValueMemory+Committing.swift), and a cache of committed
/// values (KeyValueMemory+Cache.swift). Docs/Cache.md §8 gives the argument below at more
/// length.
///
/// **A set is visible at once, and stays visible until the store shows it.** A set outside
/// any transaction enters `queued` before it returns. A commit of the queue moves it whole
/// into a *batch in flight* (one move under the lock: a reader never waits for a commit's
/// work) that carries the generation its commit creates, known before the commit (the
/// write transaction's: the queue is committed in the exclusive turn). A read at published generation `G` looks at `queued`, then at the
/// batches in flight with a generation above `G`, newest first, then at the store: a batch
/// whose generation is `G` or below is in the store, and is skipped (so a later transaction
/// the store already shows is never hidden behind it). Batches are retired once published,
/// for memory only: skipping, not retiring, is what keeps reads exact.
///
/// **Order.** Sets outside transactions are ordered by their calls, transactions by their
/// commits. Queued sets are committed before any other write transaction begins
/// (`Persistence.begin(in:)`), so a transaction reads every value set before it began. A
/// set made while a transaction runs, of a key the transaction writes, loses to it: as the
/// transaction's commit takes its generation, under the store's write section, such sets
/// leave `queued` for a batch carrying that generation
/// (``transactionCommitting(_:generation:)``), readable until the transaction is published
/// and never committed themselves. Transactions setting values commit at once (their sets
/// are blind writes: the later commit wins); Docs/Architecture.md invariant 9 argues why
/// reads still see the values in generation order. (Which keys a transaction
/// wrote is exact: a nested `perform` that rolls back takes its keys back out.)
///
/// **Lost, never silently.** A failed commit puts its writes back in the queue (unless newer
/// ones replaced them); `flush` retries and reports. Once ``close()`` ran, sets throw.
///
/// Writes are keyed by the names' UTF-8 bytes, as the store keys them: two names Swift
/// calls equal (`"é"` precomposed and decomposed) are two keys, in memory as on disk.
final class KeyValueMemory: Sendable {
    /// Writes taken out of the queue into one commit (a removal is a slot with no bytes).
    struct Batch: Sendable {
        let id: UInt64
        /// The generation of the commit that holds the writes (or that replaces them).
        let generation: UInt64
        let writes: [HashedKey: ValueSlot]
        /// The commit holds these writes (a commit of the queue), rather than replacing them
        /// (sets a transaction's commit wins over): only then are they its values.
        let isCommitted: Bool
        /// The commit, once appended.
        var commit: AppendedCommit?
    }

    /// This process's writes not yet published, as a read at one generation sees them.
    struct Pending: Sendable {
        fileprivate var queued: [HashedKey: ValueSlot]
        fileprivate var inFlight: [Batch]
        /// The published generation the reader reads the store at.
        let published: UInt64

        var isEmpty: Bool { queued.isEmpty && inFlight.isEmpty }

        /// The newest write of `key` the store at `published` does not show, if any.
        func write(_ key: HashedKey) -> ValueSlot? {
            if let slot = queued[key] { return slot }
            for batch in inFlight.reversed() where batch.generation > published {
                if let slot = batch.writes[key] { return slot }
            }
            return nil
        }

        /// The writes whose keys start with the bytes `prefix`, each with whether it sets a
        /// value (true) or removes one.
        func writes(withPrefix prefix: [UInt8]) -> [(key: HashedKey, present: Bool)] {
            var newest: [HashedKey: Bool] = [:]
            for batch in inFlight where batch.generation > published {
                for (key, slot) in batch.writes where key.bytes.starts(with: prefix) { newest[key] = slot.bytes != nil }
            }
            for (key, slot) in queued where key.bytes.starts(with: prefix) { newest[key] = slot.bytes != nil }
            return newest.map { ($0.key, $0.value) }
        }
    }

    struct State {
        /// Writes waiting for a commit.
        var queued: [HashedKey: ValueSlot] = [:]
        /// Writes in commits not yet published, oldest first (generations increase).
        var inFlight: [Batch] = []
        var nextBatch: UInt64 = 1
        /// A background commit is scheduled and has not taken the queue yet.
        var drainScheduled = false
        /// Commits of the queue that have taken it and not yet appended it (or put it back):
        /// their writes are in neither the queue nor the store, so ``close()`` reports them.
        var appending = 0
        /// The newest commit holding (or replacing) queued writes: `flush` waits for it.
        var lastCommit: AppendedCommit?
        /// Why a commit of queued writes could not be made durable (the store is then
        /// poisoned: every later write fails too).
        var failure: FolioError?
        /// Set by ``close()``: later sets throw.
        var closed = false

        func pending(published: UInt64) -> Pending {
            Pending(queued: queued, inFlight: inFlight, published: published)
        }
    }

    let state = Mutex(State())
    /// Committed values by key (nil if the persistence was opened with no value cache).
    let cache: RecordCache?

    init(cacheLimits: RecordCacheLimits?) {
        cache = cacheLimits.map { RecordCache(limits: $0, generation: 0, tracks: { $0 == KeyValueLayout.tree }) }
    }

    // MARK: Reading

    /// The newest write of `key` that `store`'s published generation does not show, if any.
    /// The generation is read under the lock, so that no batch is published between it and
    /// the lookup; a read of the store afterwards sees that generation or a newer one.
    func pendingWrite(_ key: [UInt8], in store: Store) -> ValueSlot? {
        state.withLock { state in
            if state.queued.isEmpty && state.inFlight.isEmpty { return nil }
            guard let published = store.openGeneration else { return nil }  // closed: the read throws
            return state.pending(published: published).write(HashedKey(key))
        }
    }

    /// This process's writes and a view of the store taken together, under the lock, so
    /// that no write is in neither (what a `read { }` scope sees). Nil writes if there are none.
    func snapshot(_ view: () throws(StorageError) -> ReadView) throws(StorageError) -> (ReadView, Pending?) {
        // No writes (always so in a read-only persistence, whose `read()` may refresh from
        // disk): the view is taken outside the lock; a write after the check began after
        // this read did, and may or may not be in the view.
        if state.withLock({ $0.queued.isEmpty && $0.inFlight.isEmpty }) { return (try view(), nil) }
        return try state.withLock { (state) throws(StorageError) -> (ReadView, Pending?) in
            let taken = try view()
            if state.queued.isEmpty && state.inFlight.isEmpty { return (taken, nil) }
            return (taken, state.pending(published: taken.generation))
        }
    }

    // MARK: Setting

    /// Whether writes are waiting for a commit.
    var hasQueued: Bool { state.withLock { !$0.queued.isEmpty } }

    /// Queues a set (or a removal: `slot.bytes == nil`) of `key`, visible to this process's
    /// reads from now on. Returns true if the caller must schedule a background commit.
    /// Throws `closed` after ``close()``.
    func enqueue(_ key: [UInt8], _ slot: ValueSlot, path: String) throws(FolioError) -> Bool {
        try state.withLock { (state) throws(FolioError) -> Bool in
            if state.closed { throw .storage(.closed(path: path)) }
            // A commit of queued values could not be made durable: the store refuses every
            // write until it is reopened, so this set would never be kept either.
            if let failure = state.failure { throw failure }
            state.queued[HashedKey(key)] = slot
            if state.drainScheduled { return false }
            state.drainScheduled = true
            return true
        }
    }

    /// A commit of this persistence (of values or of anything else) could not be made
    /// durable, or found the store needing a reopen: every later write fails, so later sets
    /// throw `error` rather than wait in memory for a commit that cannot happen.
    func noteFailure(_ error: StorageError) {
        if case .closed = error { return }  // closing: sets throw `closed` already
        state.withLock { if $0.failure == nil { $0.failure = .storage(error) } }
    }

    /// Refuses later sets; returns whether the caller must take the writer slot before the
    /// store closes: writes are queued (it commits them), or a commit has taken the queue and
    /// not yet appended it (it holds the slot: waiting for the slot waits for it, rather than
    /// closing the store under it). Neither can start once this has returned false: later
    /// sets throw, and a commit of an empty queue does nothing.
    func close() -> Bool {
        state.withLock { state in
            state.closed = true
            return !state.queued.isEmpty || state.appending > 0
        }
    }
}
