import Dispatch
import Synchronization

/// A store: named B+trees of byte keys and values in append-only snapshot files. A commit
/// appends a run of pages and is durable once one `fdatasync` of that run returns; its
/// root is then written in place into one of the root file's two slots, which says where
/// the next open starts, not what is durable (format versions 2 and 3, Docs/Durability.md §1).
///
/// Open one writer per store in each process (``open(at:options:)``), in as many processes
/// as need to write: their writes take turns. A writer holds an exclusive `flock` on the
/// store's lock file only while it writes (from its first active write transaction until
/// the last has ended and its commits are durable), and catches up on what other processes
/// committed each time it takes it (Store+WriterTurns.swift); idle, it holds no lock. Open
/// any number of readers (``openReadOnly(at:options:)``), in any process; they take no lock
/// and write nothing.
///
/// Reading the source, in the order a store is used (after bbolt's "Reading the Source"):
/// - Open: `Store+Open.swift` (root file, slot fallback, recovery), `Store+Create.swift`.
/// - Begin: ``beginWrite()`` → `WriteTransaction.swift`; ``read()`` → `ReadView.swift`.
/// - Put / Get: `Tree/TreeEditor+Insertion.swift`, `Tree/TreeReader.swift`.
/// - Cursor: `Tree/Cursor.swift`.
/// - Commit: `Store+Commit.swift` (the numbered protocol of Docs/Durability.md).
/// - Compaction: `Store+Compaction.swift`; verification: `Verify/`.
///
/// Concurrency: the newest committed root is published through one small lock; a reader
/// takes it once and then walks immutable pages without locks (pages are never rewritten),
/// so reads never wait for a commit's fsync. Write transactions run concurrently
/// (optimistically): each commits after the others, onto the newest commit, if no commit
/// since it began changed a tree it read or wrote, and otherwise fails with
/// `StorageError.writeConflict(trees:)` (Docs/Architecture.md invariant 7). Compaction runs
/// its catch-up alone (Store+WriterExclusion.swift), while transactions begin and commit
/// during its copy.
public final class Store: Sendable {
    /// The store's directory.
    public let path: String
    /// True for a store opened with ``openReadOnly(at:options:)``.
    public let isReadOnly: Bool
    let layout: StoreLayout
    let options: StoreOptions
    let cache: PageCache
    let counters: IOCounters
    let state: Mutex<State>
    /// The write critical section (Docs/Architecture.md, "The locks of a store, and their
    /// order"): held by a commit from its first appended page until it is the tip, by a
    /// compaction from its catch-up to its root switch (not while it copies), and by
    /// ``close()`` while it flushes and closes. So close waits for an in-flight commit or compaction,
    /// and a commit or compaction that starts after close finds the store closed (checked
    /// under this lock) and writes nothing. Order: `writeSection`, then `rootFileLock`,
    /// then `state`. Observers are never called under it (see `deliveries`).
    let writeSection = Mutex<Void>(())
    /// Serialises root slot writes and root file syncs between commits, grouped flushes,
    /// compaction and close, and owns the writer's ``RootSlots`` (nil for a read-only store,
    /// and once the store is closed).
    let rootFileLock: Mutex<RootSlots?>
    /// Group commit's turn to sync (Docs/Durability.md §1.4, `Store+GroupCommit.swift`):
    /// the commit waiting for durability that holds it syncs everything appended so far;
    /// the others wait for it in one queue, first come first served, blocked threads and
    /// suspended tasks alike. Taken with no lock held, before `rootFileLock`.
    let syncTurn = AsyncGate()
    /// Where an async caller's group-commit sync runs (`SyncQueue`): a serial queue of this
    /// store's, so that the sync blocks none of the cooperative pool's threads. Blocking
    /// callers sync on their own thread.
    let syncQueue: SyncQueue
    /// Events waiting to be handed to observers, in generation order (see Store+Delivery).
    let deliveries: Mutex<DeliveryQueue>
    let observers = Mutex<StoreObservers>(StoreObservers())
    /// Raised after each root slot this object writes for its own commits (Store+PublishSignals).
    let publishSignals = Mutex<PublishSignals>(PublishSignals())
    /// Told of each generation this object creates before it is visible (Store+Generations).
    let generationListener = Mutex<GenerationListener?>(nil)
    /// Where past generations' commit pages are, as far as reads of them walked the chain
    /// (``read(at:)``).
    let past = Mutex(PastGenerations())
    /// The store's follower, once started (``startFollowing(pollInterval:)``); for a writer,
    /// only while it has observers (Store+Following).
    let following = Mutex(Following())
    /// Pauses a writer's watch during its turns and its waits for one.
    let watchPause = WatchPause()
    /// A writer's follow is scheduled to run again (a notification found it busy): one at
    /// a time, however many notifications find it so.
    let followRetryScheduled = Atomic<Bool>(false)
    /// The look at the root file's slots that reads take first (nil where the file system
    /// cannot map it, or for a version 1 root file).
    let rootGlance: RootGlance?
    /// One compaction at a time, automatic ones in the background; close stops it and waits.
    let compactionTurn = CompactionTurn()
    /// A writer's lock file, open from the store's open to its close, locked only during a
    /// turn of writing (`WriterState.holdsLock`); nil for a read-only store.
    let writerLock: WriterLock?
    /// Waiters' requests for the lock, shared with the other writer processes (nil for a
    /// read-only store, or where the file system cannot map files).
    let turnRequest: TurnRequest?
    /// Waiters of this process asking for the lock now: while there is one, this process
    /// does not yield to requests (the request may be its own).
    let askingWaiters = Atomic<Int>(0)
    /// Tries of the lock this process gave up to another process's request: for tests.
    let yieldedTries = Atomic<Int>(0)
    /// The lock file's identity, registered for this process (`WriterRegistry`) from open to
    /// close; nil for a read-only store.
    let writerIdentity: FileIdentity?

    var fileSystem: any FileSystem { options.fileSystem }

    /// The options this store was opened with, file system included: for opening the same
    /// store again (an in-memory store's file system lives only in them).
    package var openOptions: StoreOptions { options }

    struct State {
        /// The newest root readers see: in full durability the newest durable one, in
        /// grouped mode the newest appended one.
        var current: CommittedRoot
        var closed = false
        var writer: WriterState?

        /// The root the next write transaction builds on: the newest appended, which in
        /// full durability may be ahead of `current` while its sync is pending (group
        /// commit, Docs/Durability.md §1.4).
        var tip: CommittedRoot { writer?.ahead ?? current }
    }

    init(
        path: String, readOnly: Bool, layout: StoreLayout, options: StoreOptions, cache: PageCache,
        counters: IOCounters, state: State, slots: RootSlots? = nil,
        writerLock: (WriterLock, FileIdentity)? = nil
    ) {
        self.rootFileLock = Mutex(slots)
        self.writerLock = writerLock?.0
        self.turnRequest = writerLock == nil ? nil : TurnRequest(path: layout.turns, fileSystem: options.fileSystem)
        self.writerIdentity = writerLock?.1
        self.path = layout.directory
        self.isReadOnly = readOnly
        self.layout = layout
        self.options = options
        self.cache = cache
        self.counters = counters
        self.deliveries = Mutex(DeliveryQueue(delivered: state.current.record.generation))
        self.state = Mutex(state)
        self.syncQueue = SyncQueue(label: "folio.sync \(layout.directory)")
        self.rootGlance = RootGlance(root: layout.root, fileSystem: options.fileSystem)
    }

    deinit {
        // Dropping a store closes it as close() does: the last grouped window is made
        // durable first (the scheduled flush holds the store weakly, so it cannot).
        close()
    }

    // MARK: Reading

    /// A read view pinned to the newest committed generation this store knows (a writer
    /// between its turns knows other processes' commits once it has followed them:
    /// ``refresh()``, ``startFollowing(pollInterval:)``). It sees that generation from
    /// start to end, whatever commits or compactions happen meanwhile (snapshot isolation,
    /// Docs/Architecture.md invariant 7): the lock is taken once, to copy the published
    /// root; the pages it names are never rewritten, so the view reads them with no lock
    /// (Architecture.md, "Readers: no lock past the first").
    public func read() throws(StorageError) -> ReadView {
        let root = try state.withLock { (state) throws(StorageError) -> CommittedRoot in
            if state.closed { throw .closed(path: path) }
            return state.current
        }
        return ReadView(root: root)
    }

    /// The newest committed generation this store object knows.
    public var generation: UInt64 {
        state.withLock { $0.current.record.generation }
    }

    /// ``generation`` while the store is open; nil once it is closed (a read that would
    /// throw `StorageError.closed`).
    package var openGeneration: UInt64? {
        state.withLock { $0.closed ? nil : $0.current.record.generation }
    }

    /// The generation of the newest appended commit, which the next commit follows (ahead
    /// of ``generation`` while its sync is pending).
    package var tipGeneration: UInt64 {
        state.withLock { $0.tip.record.generation }
    }

    /// The commit location of the newest generation (for replaying change records).
    public var currentCommit: CommitLocation {
        state.withLock { $0.current.record.location }
    }

    /// Page I/O since the store was opened.
    public var ioStatistics: IOStatistics { counters.snapshot }

    // MARK: Writing

    /// Begins a write transaction on the newest appended commit (the tip: group commit
    /// frees the tip before a commit's sync). Several may be active at once, from any
    /// threads: each reads the tip it began on, and its commit is appended after every
    /// commit made meanwhile if none of them changed a tree it read or wrote, and fails
    /// with `StorageError.writeConflict(trees:)` otherwise (Docs/Architecture.md invariant
    /// 7). Throws `StorageError.readOnly(path:)` on a read-only store and
    /// `StorageError.needsReopen(path:cause:)` after a failure that poisoned the store.
    ///
    /// The first transaction of a turn takes the store's lock (Store+WriterTurns.swift):
    /// while a writer in another process holds it, this waits up to the options'
    /// `busyTimeout`, blocking the thread, and then throws
    /// `StorageError.lockedByAnotherWriter(path:)`; once taken, the commits other
    /// processes made meanwhile are adopted before the transaction begins. It also waits
    /// while a compaction brings its new file up to date (its catch-up, which uses the
    /// store alone and waits for nothing else; Docs/Durability.md §1.3).
    public func beginWrite() throws(StorageError) -> WriteTransaction {
        WriteTransaction(store: self, base: try enterTurnWaiting(.transaction))
    }

    /// ``beginWrite()`` for async callers: while another process holds the store's lock,
    /// the task sleeps between tries instead of blocking its thread.
    package func beginWriteSuspending() async throws(StorageError) -> WriteTransaction {
        var wait = TurnWait(store: self)
        defer { wait.end() }
        while true {
            var yielded = false
            if let base = try enterTurn(.transaction, yielded: &yielded) {
                return WriteTransaction(store: self, base: base)
            }
            var pause = try wait.pause(afterYielding: yielded)
            await Self.sleepSuspending(pause)
            while let next = try wait.pauseAgain() {
                pause = next
                await Self.sleepSuspending(pause)
            }
        }
    }

    /// Suspends the task for `pause`. Cancellation does not end a wait for a turn early:
    /// the caller's turn is the caller's to give up, after the wait returns or throws. A
    /// cancelled task's sleep returns at once, so it pauses on its thread instead (never a
    /// spin).
    private static func sleepSuspending(_ pause: Duration) async {
        do {
            try await Task.sleep(for: pause)
        } catch {
            LockWait.sleep(pause)
        }
    }

    /// Runs `body` in a write transaction and commits it; rolls back if `body` throws.
    @discardableResult
    public func write<Result>(_ body: (WriteTransaction) throws -> Result) throws -> Result {
        let transaction = try beginWrite()
        do {
            let result = try body(transaction)
            try transaction.commit()
            return result
        } catch {
            transaction.rollback()
            throw error
        }
    }

    /// Called by a transaction when it commits or rolls back (once); `abandoningSpill` when
    /// it spilled pages and did not commit them.
    func endTransaction(_ transaction: ObjectIdentifier, abandoningSpill: Bool = false) {
        if abandoningSpill { endAbandonedSpill(of: transaction) }
        let handedTo = state.withLock { state -> DispatchSemaphore? in
            guard var writer = state.writer else { return nil }
            defer { state.writer = writer }
            writer.activeTransactions -= 1
            if writer.tailOwner == transaction { writer.tailOwner = nil }
            defer { releaseLockIfIdle(&writer) }
            return handOverExclusiveIfIdle(&writer)
        }
        handedTo?.signal()
    }

    /// A transaction that spilled and did not commit left valid pages at the committed end
    /// with no commit page after them: each turn's catch-up, looking there for runs another
    /// writer left (Store+CatchUp.swift), would read every one of them, at every turn, until
    /// a commit wrote over their start. The first page's header is zeroed, so the walk stops
    /// at once. Only while the end of the file is still this transaction's (no commit can be
    /// appended over it meanwhile), and while it is active, so its turn holds the lock. A
    /// failure costs only those reads: it is logged.
    private func endAbandonedSpill(of transaction: ObjectIdentifier) {
        writeSection.withLock { _ in
            let (tip, owner) = state.withLock { ($0.tip, $0.writer?.tailOwner) }
            guard owner == transaction else { return }
            let start = tip.record.committedLength
            do throws(StorageError) {
                try tip.file.handle.write(
                    UnsafeRawBufferPointer(rebasing: ZeroBytes.buffer[0..<PageHeader.size]), at: start)
            } catch {
                options.log("clearing the pages a rolled-back transaction spilled in \(tip.file.path) failed: \(error)")
            }
            cache.remove(PageCache.Key(file: tip.file.cacheIdentity, offset: start))
        }
    }

    // MARK: Closing

    /// Makes pending grouped commits durable, releases the writer lock and closes the store.
    /// Read views already taken stay readable. Closing twice is harmless.
    ///
    /// What close waits for: a running compaction is stopped (its copy abandoned, the store
    /// left on its current file) and gone before close goes on; a commit already writing
    /// (its critical section, from its first appended page to its publication) finishes first, so every commit
    /// whose `commit()` returned is durable once close returns, and the store's files are
    /// left as that commit left them. A transaction that had not reached its commit when
    /// close ran is not waited for: its `commit()` throws `StorageError.closed(path:)`
    /// and keeps nothing. Events of the commits flushed here reach observers before close
    /// returns (unless another thread is delivering them).
    public func close() {
        stopFollowing()
        // A compaction copying or catching up stops and is gone before anything closes.
        compactionTurn.stopAndWait(wakingWaiter: wakeExclusiveWaiter)
        let released = writeSection.withLock { _ -> WriterState? in
            if !isReadOnly {
                defer {
                    // The newest root slot made durable: the next open starts from it rather
                    // than following the runs written since the last root sync. (A poisoned
                    // store writes nothing more: its next open recovers.)
                    rootFileLock.withLock { slots in
                        do throws(StorageError) {
                            if state.withLock({ $0.writer?.poisoned }) == nil {
                                try slots?.close()
                            } else {
                                slots?.abandon()
                            }
                        } catch {
                            options.log("closing \(path): the root file could not be synced: \(error)")
                        }
                        slots = nil
                    }
                }
                do throws(StorageError) {
                    try flushQueuingEvents()
                } catch {
                    // close() cannot throw; say that the last grouped window was not made durable.
                    if case .closed = error {
                    } else {
                        options.log("closing \(path): the last commits could not be made durable: \(error)")
                    }
                }
            }
            return state.withLock { state -> WriterState? in
                if state.closed { return nil }
                state.closed = true
                defer { state.writer = nil }
                return state.writer
            }
        }
        // `beginWrite()` calls waiting for exclusive use (another thread's try of the lock)
        // find the store closed; nobody else would wake them once the writer state is gone.
        for waiter in (released?.waitingForExclusive ?? []) + [released?.exclusiveWaiter].compactMap({ $0 }) {
            waiter.signal()
        }
        deliverQueued()
        if let released {
            // Only files whose grace period is over: a reader in another process may still
            // be opening the others. The next writer to open retires them afresh. Only
            // holding the lock (taken here with one try if the last turn has ended; not while
            // another thread tries it): without it, another writer may be compacting, or
            // have gone back to one of them (a fallback to an older root slot after damage).
            // None while the store declares history (Store+HistoryRetention.swift): deciding
            // which it keeps may walk the chain, which a close does not wait for; the next
            // writer open keeps them all until its first check.
            let now = ContinuousClock.now
            var expired = released.retired.filter { $0.removeAfter <= now && !$0.keptForHistory }.map(\.number)
            if !expired.isEmpty && declaresHistory() { expired = [] }
            if !expired.isEmpty
                && (released.holdsLock || (!released.exclusive && (try? writerLock?.tryAcquire()) == true))
            {
                removeRetiredSnapshots(expired)
            }
            writerLock?.close()
            if let writerIdentity, released.registered { WriterRegistry.unregister(writerIdentity) }
        }
    }

    func poison(_ cause: String) {
        options.log("store at \(path) needs to be reopened: \(cause)")
        state.withLock { state in
            guard var writer = state.writer else { return }
            writer.poisoned = cause
            // A store that writes nothing more must not keep other processes' writers out.
            releaseLockIfIdle(&writer)
            state.writer = writer
        }
    }
}
