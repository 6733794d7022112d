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
        return StoreObservation { [weak self] in
            _ = self?.observers.withLock { $0.handlers.removeValue(forKey: id) }
        }
    }

    // MARK: History

    /// The commits after `generation` up to the newest this store object knows, oldest
    /// first, each with views of the store before and after it. They are read back along
    /// the chain of commit pages; throws ``StorageError/historyUnavailable(from:)`` if a
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
        guard newest.record.generation > generation else { return [] }
        var files: [UInt64: SnapshotFile] = [newest.file.number: newest.file]
        func file(_ number: UInt64) throws(StorageError) -> SnapshotFile {
            if let open = files[number] { return open }
            do throws(StorageError) {
                let opened = try Store.openSnapshot(number, layout: layout, fileSystem: fileSystem, writable: false)
                files[number] = opened
                return opened
            } catch {
                throw .historyUnavailable(from: generation)
            }
        }
        func root(at location: CommitLocation) throws(StorageError) -> (CommittedRoot, CommitRecord) {
            let pages = PageSource(file: try file(location.fileNumber), cache: cache, counters: counters)
            let commit = try pages.commit(at: location.address)
            let record = RootRecord(generation: commit.generation, snapshotFile: location.fileNumber,
                                    committedLength: location.address.end, commitPage: location.address,
                                    catalogRoot: commit.catalogRoot, liveBytes: commit.liveBytes,
                                    timestamp: commit.timestamp, previous: commit.previous)
            return (CommittedRoot(record: record, pages: pages), commit)
        }
        var result: [CommitNotification] = []
        var (current, commit) = (newest, try newest.pages.commit(at: newest.record.commitPage))
        while commit.generation > generation {
            guard let previousLocation = commit.previous else {
                // The first generation has no predecessor; only "after 0" reaches it.
                guard generation == 0 else { throw .historyUnavailable(from: generation) }
                result.append(CommitNotification(generation: commit.generation, timestamp: commit.timestamp,
                                                 location: current.record.location, previous: nil, changes: commit.changes,
                                                 before: nil, after: ReadView(root: current)))
                break
            }
            let (previous, previousCommit) = try root(at: previousLocation)
            guard previousCommit.generation + 1 == commit.generation else { throw .historyUnavailable(from: generation) }
            result.append(CommitNotification(generation: commit.generation, timestamp: commit.timestamp,
                                             location: current.record.location, previous: previousLocation,
                                             changes: commit.changes, before: ReadView(root: previous),
                                             after: ReadView(root: current)))
            (current, commit) = (previous, previousCommit)
        }
        return result.reversed()
    }
}
