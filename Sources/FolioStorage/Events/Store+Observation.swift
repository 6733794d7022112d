/// What one commit did, as observers receive it.
public struct CommitNotification: Sendable {
    /// The generation the commit created.
    public var generation: UInt64
    /// Commit time, microseconds since 1970.
    public var timestamp: UInt64
    /// Where its commit page is.
    public var location: CommitLocation
    /// The commit before it, if any.
    public var previous: CommitLocation?
    /// The keys it created, updated and deleted, and the trees it dropped.
    public var changes: ChangeRecord
    /// The store as it was just before the commit (for old values), if still readable.
    public var before: ReadView?
    /// The store as the commit left it (for new values).
    public var after: ReadView?
}

/// What observers of a store are told.
public enum StoreEvent: Sendable {
    /// Durable commits, oldest first.
    case committed([CommitNotification])
    /// A read-only store moved from generation `from` to `to` but cannot replay what changed
    /// in between (compaction removed the files holding that history, or the writer fell
    /// back to an older root): observers must reload what they show.
    case historyUnavailable(from: UInt64, to: UInt64)
}

/// The observers of a store.
struct StoreObservers: Sendable {
    var handlers: [UInt64: @Sendable (StoreEvent) -> Void] = [:]
    var nextID: UInt64 = 1
}

/// A registration made with ``Store/observe(_:)``; ``cancel()`` ends it.
public final class StoreObservation: Sendable {
    private let cancellation: @Sendable () -> Void
    init(cancel: @escaping @Sendable () -> Void) { cancellation = cancel }
    /// Stops delivering events to the handler.
    public func cancel() { cancellation() }
}

extension Store {
    /// Calls `handler` with every event of this store object, in order: after each durable
    /// commit of a writer (in grouped mode, with each flushed group), and, for a read-only
    /// store that follows the writer (``startFollowing(pollInterval:)``), with the commits
    /// it replays. The handler runs on the committing, flushing or following thread, with no
    /// lock of the store held, so it may read or write the store; keep it short. Events
    /// reach each handler one at a time and in generation order, none skipped.
    public func observe(_ handler: @escaping @Sendable (StoreEvent) -> Void) -> StoreObservation {
        let id = observers.withLock { observers -> UInt64 in
            let id = observers.nextID
            observers.nextID += 1
            observers.handlers[id] = handler
            return id
        }
        // A writer that follows watches while observed (Store+Following). A watch that
        // cannot start leaves the observer with this process's own commits, and its reads
        // still adopt other processes' (as a writer that never followed).
        do throws(StorageError) {
            try watchWhileObserved()
        } catch {
            options.log("watching \(path) for other processes' commits failed: \(error)")
        }
        return StoreObservation { [weak self] in
            guard let self else { return }
            _ = self.observers.withLock { $0.handlers.removeValue(forKey: id) }
            try? self.watchWhileObserved()
        }
    }

    // MARK: History

    /// The commits after `generation` up to the newest this store object knows, oldest
    /// first, each with views of the store before and after it. They are read back along
    /// the chain of commit pages; throws `StorageError.historyUnavailable(from:)` if a
    /// snapshot file holding part of it is gone (compaction and retention removed it).
    public func commits(after generation: UInt64) throws(StorageError) -> [CommitNotification] {
        let newest = try read().root
        return try commits(after: generation, upTo: newest)
    }

    /// The commits after `generation` up to the generation `view` sees, oldest first.
    public func commits(after generation: UInt64, upTo view: ReadView) throws(StorageError) -> [CommitNotification] {
        try commits(after: generation, upTo: view.root)
    }

    func commits(after generation: UInt64, upTo newest: CommittedRoot) throws(StorageError) -> [CommitNotification] {
        var result: [CommitNotification] = []
        try replay(after: generation, upTo: newest, bounds: ReplayBounds(batch: .max, limit: .max)) { result += $0 }
        return result
    }

    /// The commits after `generation` up to the generation `view` sees, oldest first, handed
    /// to `body` in batches of a bounded size (the store's replay bounds) instead of one
    /// array: what a caller holds at once is one batch. Throws
    /// `StorageError.historyUnavailable(from:)` before calling `body` if part of the
    /// history is gone or it is longer than the bounds allow; an error after some batches
    /// (a damaged page) is thrown after them.
    public func replayCommits(
        after generation: UInt64, upTo view: ReadView,
        _ body: ([CommitNotification]) -> Void
    ) throws(StorageError) {
        try replay(after: generation, upTo: view.root, bounds: options.replay, body)
    }

    /// Replays in two passes so memory stays bounded: back along the chain keeping only each
    /// commit's location, then forward, reading `bounds.batch` commits at a time. With
    /// `continuing`, the commit of `generation` the chain reaches must be that one (its
    /// location and its chain value), or the history is unavailable. `held` is the file of
    /// the root the caller moves from, which it still has open: read through that
    /// descriptor, the replay survives the file's removal (a compaction elsewhere, whose
    /// retention removed the replaced file at once), which a reopen by name would not.
    func replay(
        after generation: UInt64, continuing expected: DeliveredCommit? = nil, upTo newest: CommittedRoot,
        held: SnapshotFile? = nil, bounds: ReplayBounds, _ body: ([CommitNotification]) -> Void
    ) throws(StorageError) {
        guard newest.record.generation > generation else { return }
        // Generations along the chain are consecutive (checked below), so a history longer
        // than the bound is known without walking it, and the walk would only find the same
        // after reading `bounds.limit` commit pages. Not from generation 0: a store's first
        // commit may carry a later generation (a backup's does), so the chain can be shorter.
        guard generation == 0 || newest.record.generation - generation <= UInt64(max(0, bounds.limit)) else {
            throw .historyUnavailable(from: generation)
        }
        var history = HistoryReader(store: self, newest: newest, generation: generation, held: held)
        history.remembering = true
        history.rememberedBytes = bounds.rememberedBytes
        // Pass 1: the chain, newest first, as (commit, its predecessor) locations. Every file
        // it needs is opened here and kept open, so pass 2 cannot lose one to retention.
        var chain: [(location: CommitLocation, previous: CommitLocation?)] = []
        var (location, commit) = (newest.record.location, try newest.pages.commit(at: newest.record.commitPage))
        while commit.generation > generation {
            // Invariant: past the bound, nothing is replayed (observers reload instead).
            guard chain.count < bounds.limit else { throw .historyUnavailable(from: generation) }
            guard let previous = commit.previous else {
                // The first generation has no predecessor; only "after 0" reaches it.
                guard generation == 0 else { throw .historyUnavailable(from: generation) }
                chain.append((location, nil))
                break
            }
            let previousCommit = try history.root(at: previous).commit
            guard previousCommit.generation + 1 == commit.generation else {
                throw .historyUnavailable(from: generation)
            }
            chain.append((location, previous))
            (location, commit) = (previous, previousCommit)
        }
        // Invariant: what is replayed continues the commit the caller holds. A writer that fell
        // back to an older root slot (damage) and committed past `generation` wrote another
        // history whose commits carry the same generations; spliced onto the first, it would
        // reach observers as a continuation of commits it never followed.
        if let expected, commit.generation == generation {
            guard location == expected.location,
                try history.file(location.fileNumber).storedChecksum(at: location.address) == expected.chain
            else { throw .historyUnavailable(from: generation) }
        }
        // Pass 2: oldest first, one batch of notifications (changes and views) at a time.
        history.stopRemembering()
        history.window.readsBackward = false
        var batch: [CommitNotification] = []
        batch.reserveCapacity(min(chain.count, bounds.batch))
        var before: ReadView?
        for (location, previous) in chain.reversed() {
            if before == nil, let previous { before = ReadView(root: try history.root(at: previous).root) }
            let (root, commit) = try history.root(at: location)
            let after = ReadView(root: root)
            batch.append(
                CommitNotification(
                    generation: commit.generation, timestamp: commit.timestamp, location: location,
                    previous: previous, changes: commit.changes, before: before, after: after))
            before = after
            if batch.count >= bounds.batch {
                body(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { body(batch) }
    }
}
