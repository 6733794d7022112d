import Dispatch

// What a store open for writing keeps besides its roots (`Store.State.writer`): its turn,
// its transactions, what is pending durability, its retired files and its compaction's
// state.
extension Store {
    struct WriterState {
        /// Whether this writer holds the store's lock (`Store.writerLock`): from the start of
        /// its turn (the first active transaction, or a compaction) until nothing needs it
        /// (Store+WriterTurns.swift says when).
        var holdsLock: Bool
        /// Set while a compaction holds the turn: before its copy, to catch up, and from its
        /// catch-up to the removal of what it retired (not during the copy).
        var compactionHoldsLock = false
        /// Whether `Store.writerIdentity` is registered for this writer (`WriterRegistry`):
        /// from open to close, unless a test let it go and another writer took it.
        var registered = true
        /// Write transactions begun and not yet ended (committed, rolled back or dropped).
        var activeTransactions = 0
        /// Set while a compaction's catch-up, a writer taking the lock and catching up on other
        /// processes' commits, or a writer following them between turns, uses the store alone (Store+WriterExclusion.swift): no
        /// transaction is active, and `beginWrite()` waits for it to end.
        var exclusive = false
        /// The transaction that has spilled pages past the committed end, if any: its run
        /// has begun there, so until it ends no other transaction may commit (its run would
        /// overwrite those pages) or spill (WriteTransaction+Spill.swift).
        var tailOwner: ObjectIdentifier?
        /// Set when a transaction takes the tail to spill, until the next catch-up: pages it
        /// read back past the committed end may be in the page cache (Store+CatchUp.swift).
        var spilledSinceCatchUp = false
        /// Set when the store can no longer commit safely (see `StorageError.needsReopen`).
        var poisoned: String?
        /// The root the root file holds (lags `current` in grouped mode).
        var durableRecord: RootRecord
        /// Full durability: the newest commit whose run is appended but not yet synced,
        /// hence not yet published (nil when none is). Group commit: transactions begin on
        /// it, and the next sync makes it and every commit before it durable at once.
        var ahead: CommittedRoot?
        /// Commits appended but not yet durable, oldest first: in grouped mode published,
        /// in full durability waiting for their sync (`ahead`).
        var pendingNotifications: [CommitNotification] = []
        var flushScheduled = false
        /// Flushes between taking the pending commits and their slot write (the turn holds
        /// the store's lock until none is left).
        var flushesInFlight = 0
        /// Callers waiting for a turn another process holds (from their first failed try of
        /// the lock until they enter or give up). While any waits, the watch does not follow
        /// other writers (Store+Following.swift): the turn's catch-up adopts at once what
        /// following would adopt commit by commit.
        var turnsAwaited = 0
        /// Snapshot files replaced by compaction, oldest first: when each may be removed
        /// and its length.
        var retired: [RetiredSnapshot] = []
        /// Set while automatic compaction backs off after failures.
        var compactionBackoff: CompactionBackoff?
        /// Set when an automatic compaction skipped because another process was compacting:
        /// the file it was in, and the dead bytes before which no automatic attempt is made
        /// in that file again (each attempt opens and closes the compaction lock's file,
        /// which wakes every follower of the store).
        var compactionSkipped: (file: UInt64, retryAtDeadBytes: UInt64)?
        /// The highest snapshot file number this writer created: never used again.
        var newestFileNumber: UInt64 = 0
        /// A compaction waiting for the active transactions to end: handed exclusive use by
        /// the last of them to end, before another can begin.
        var exclusiveWaiter: DispatchSemaphore?
        /// `beginWrite()` calls waiting for the compaction's catch-up to end.
        var waitingForExclusive: [DispatchSemaphore] = []
    }
}
