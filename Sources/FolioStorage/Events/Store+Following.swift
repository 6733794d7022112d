import Dispatch
import Synchronization

/// A store's follower: the watch, and (for a read-only store) the last commit observers
/// were told of. A writer's follower uses the watch only (its turns and ``Store/refresh()``
/// report what they adopt).
final class Follower: Sendable {
    let watch: any FileWatch
    /// The last commit delivered, and the file its root is in. Also serialises catching
    /// up, so observers get events in order.
    let delivered: Mutex<Position>

    /// Where a follower's observers are.
    struct Position: Sendable {
        /// The last commit delivered, by generation, by where its commit page is and by its
        /// chain value: a writer that fell back to an older root (a damaged slot) and
        /// committed past this generation wrote other commits with the same generations, so
        /// a generation alone cannot tell a continuation from another history.
        var commit: DeliveredCommit
        /// The snapshot file of that commit's root, kept open: the next replay starts in it,
        /// and a compaction's retention may have removed it by name. Not the store's current
        /// file, which a read may have moved past meanwhile (``Store/followIfRootFileChanged()``).
        var file: SnapshotFile
    }

    init(watch: any FileWatch, delivered: Position) {
        self.watch = watch
        self.delivered = Mutex(delivered)
    }
}

/// The commit a follower last told its observers of.
///
/// The location alone does not name one commit: the other history of a writer that fell
/// back to an older root is appended from the same committed end, over the bytes of the
/// first, so a commit of the same generation can land at the same offset with the same
/// length. Its chain value (the commit page's checksum over its run, seeded with its
/// predecessor's: Docs/Format.md §7) differs, since the run differs (its timestamp at
/// least) and so does every later one.
struct DeliveredCommit: Sendable, Equatable {
    var generation: UInt64
    var location: CommitLocation
    var chain: UInt32

    /// The commit `root` names.
    init(_ root: CommittedRoot) throws(StorageError) {
        generation = root.record.generation
        location = root.record.location
        chain = try root.file.chainValue(of: root.record)
    }
}

/// Whether a store follows, and its follower.
struct Following: Sendable {
    /// The follower, while one runs.
    var follower: Follower?
    /// A writer's request to follow (``Store/startFollowing(pollInterval:)``), by its poll
    /// interval: its follower runs only while it has observers.
    var writerRequest: Duration?
}

extension Store {
    /// Follow the commits of writers in other processes by themselves. A watch on the
    /// store's directory (see ``POSIXFileSystem/watch(_:pollInterval:onChange:)``: inotify on
    /// Linux, a dispatch source on Apple platforms, polling every `pollInterval` where
    /// neither is available) calls ``catchUp()`` when the root file changes: the store moves
    /// to the newest generation, and observers receive the commits in between, replayed
    /// from the store's history.
    ///
    /// A writer follows between its turns (``refresh()``); it knows its own commits, and its
    /// turns catch up by themselves. Where its root file is mapped, it watches only while it
    /// has observers (``observe(_:)``): without one, nothing waits for another process's
    /// commit, and a read of the layer above adopts it anyway (its look at the root slots
    /// first), so the watch would only cost each turn a pause and a resume. The first
    /// observer starts the watch, which catches up at once (the observer is told of what
    /// other processes committed meanwhile); the last one to cancel stops it.
    public func startFollowing(pollInterval: Duration = .milliseconds(100)) throws(StorageError) {
        if !isReadOnly {
            following.withLock { $0.writerRequest = pollInterval }
            return try watchWhileObserved()
        }
        let started = following.withLock { $0.follower != nil }
        if started { return }
        let current = state.withLock { $0.current }
        let start = Follower.Position(commit: try DeliveredCommit(current), file: current.file)
        let watch = try fileSystem.watch(layout.directory, pollInterval: pollInterval) { [weak self] in
            self?.watchFired()
        }
        let installed = following.withLock { following -> Bool in
            if following.follower != nil { return false }
            following.follower = Follower(watch: watch, delivered: start)
            return true
        }
        if !installed { watch.cancel() }
        catchUp()
    }

    /// Starts a writer's watch if it asked to follow and has observers, stops it if it has
    /// none: after ``startFollowing(pollInterval:)`` and whenever observers come or go.
    ///
    /// Decided and done under `following`, so that an observer's arrival and the last one's
    /// departure, racing, leave the watch as the observers are at the end (the observer count
    /// is read under it too). The watch is created there: its notifications run
    /// ``watchFired()``, which takes no lock this holds.
    func watchWhileObserved() throws(StorageError) {
        guard !isReadOnly else { return }
        let (started, stopped) = try following.withLock {
            (following) throws(StorageError) -> (Bool, (any FileWatch)?) in
            // Without a glance (a version 1 root file, a file system that cannot map), reads
            // do not look at the slots first: the watch is what moves the writer then.
            let observed = rootGlance == nil || observers.withLock { !$0.handlers.isEmpty }
            guard let interval = following.writerRequest, observed else {
                guard let follower = following.follower else { return (false, nil) }
                following.follower = nil
                watchPause.remove()
                return (false, follower.watch)
            }
            if following.follower != nil { return (false, nil) }
            let current = state.withLock { $0.current }
            let start = Follower.Position(commit: try DeliveredCommit(current), file: current.file)
            let watch = try fileSystem.watch(layout.directory, pollInterval: interval) { [weak self] in
                self?.watchFired()
            }
            following.follower = Follower(watch: watch, delivered: start)
            watchPause.install(watch)
            return (true, nil)
        }
        stopped?.cancel()
        // What other processes committed while nothing watched: their notifications are gone.
        if started { catchUp() }
    }

    /// What the watch calls: ``catchUp()``, except on a writer whose turn is held: no other
    /// process commits during it, and its catch-up adopted what came before. (While a turn
    /// is only awaited the watch is paused, WatchPause.swift, so this rarely runs then; when
    /// it does, it follows: the awaited turn may never come, if the wait gives up, and the
    /// notification this consumed would not come again.)
    ///
    /// A writer busy in exclusive use (a read or another thread following, a turn starting)
    /// looks again shortly: the notification this consumed would not come again, and what
    /// that exclusive use adopts may stop short of the commit that sent it.
    private func watchFired() {
        guard !isReadOnly else { return catchUp() }
        if holdsWriterLock { return }
        if (try? followOtherWritersBetweenTurns()) == .busy,
            followRetryScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
                .exchanged
        {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(2)) { [weak self] in
                self?.followRetryScheduled.store(false, ordering: .releasing)
                self?.watchFired()
            }
        }
    }

    /// Moves the store to the newest committed generation and tells observers what changed
    /// since the last time (``StoreEvent``). Called by the follower; callable by hand. On a
    /// writer it is ``refresh()``, which queues the events itself.
    public func catchUp() {
        guard isReadOnly, let follower = following.withLock({ $0.follower }) else {
            _ = try? refresh()
            return
        }
        // Events are queued under the follower's lock (so in order) and handed to observers
        // after it is released: a handler may read the store or call catchUp() itself.
        defer { deliverQueued() }
        follower.delivered.withLock { position in
            do throws(StorageError) {
                let delivered = position.commit
                try refresh()
                let newest = try read().root
                let now = newest.record.generation
                let reaching = try DeliveredCommit(newest)
                if reaching == delivered { return }
                if now <= delivered.generation {
                    // The writer fell back to an older root: what observers saw is gone.
                    enqueue(.historyUnavailable(from: delivered.generation, to: now))
                } else {
                    // Replayed in bounded batches (``ReplayBounds``); a history too long or
                    // gone, one that does not continue the commit delivered, or an error
                    // part-way, ends with `historyUnavailable` from the last generation
                    // delivered: observers miss nothing without being told.
                    var reached = delivered.generation
                    do throws(StorageError) {
                        // Held until the lock is released: at most ReplayBounds' cap of
                        // commits (beyond it the replay refuses, and observers reload).
                        try replay(
                            after: delivered.generation, continuing: delivered, upTo: newest, held: position.file,
                            bounds: options.replay
                        ) { batch in
                            enqueue(.committed(batch))
                            reached = batch.last?.generation ?? reached
                        }
                    } catch {
                        enqueue(.historyUnavailable(from: reached, to: now))
                    }
                }
                position = Follower.Position(commit: reaching, file: newest.file)
            } catch {
                options.log("following \(path) failed for now (will retry): \(error)")
            }
        }
    }

    /// Whether this store's watch runs now: for tests of a writer, which watches only while
    /// it has observers.
    package var isWatching: Bool { following.withLock { $0.follower != nil } }

    /// Stops following for good (a writer's later observers start no watch): at close.
    func stopFollowing() {
        let stopped = following.withLock { following -> Follower? in
            defer { following = Following() }
            watchPause.remove()
            return following.follower
        }
        stopped?.watch.cancel()
    }
}
