import Synchronization

/// A read-only store's follower: the watch, and the last commit observers were told of.
final class Follower: Sendable {
    let watch: any FileWatch
    /// The last commit delivered, by generation and by where its commit page is: a writer
    /// that fell back to an older root (a damaged slot) and committed past this generation
    /// wrote other commits with the same generations, so a generation alone cannot tell a
    /// continuation from another history. Also serialises catching up, so observers get
    /// events in order.
    let delivered: Mutex<DeliveredCommit>

    init(watch: any FileWatch, delivered: DeliveredCommit) {
        self.watch = watch
        self.delivered = Mutex(delivered)
    }
}

/// The commit a follower last told its observers of.
struct DeliveredCommit: Sendable, Equatable {
    var generation: UInt64
    var location: CommitLocation
}

extension Store {
    /// Read-only stores: follow the writer's commits by themselves. A watch on the store's
    /// directory (see ``POSIXFileSystem/watch(_:pollInterval:onChange:)``: inotify on Linux,
    /// a dispatch source on Apple platforms, polling every `pollInterval` where neither is
    /// available) calls ``catchUp()`` when the root file is replaced: the store moves to the
    /// newest generation, and observers receive the commits in between, replayed from the
    /// store's history. A writer knows its own commits; on it this does nothing.
    public func startFollowing(pollInterval: Duration = .milliseconds(100)) throws(StorageError) {
        guard isReadOnly else { return }
        let started = follower.withLock { $0 != nil }
        if started { return }
        let start = state.withLock { DeliveredCommit(generation: $0.current.record.generation, location: $0.current.record.location) }
        let watch = try fileSystem.watch(layout.directory, pollInterval: pollInterval) { [weak self] in
            self?.catchUp()
        }
        let installed = follower.withLock { follower -> Bool in
            if follower != nil { return false }
            follower = Follower(watch: watch, delivered: start)
            return true
        }
        if !installed { watch.cancel() }
        catchUp()
    }

    /// Moves a read-only store to the newest committed generation and tells observers what
    /// changed since the last time (``StoreEvent``). Called by the follower; callable by hand.
    public func catchUp() {
        guard isReadOnly, let follower = follower.withLock({ $0 }) else {
            _ = try? refresh()
            return
        }
        // Events are queued under the follower's lock (so in order) and handed to observers
        // after it is released: a handler may read the store or call catchUp() itself.
        defer { deliverQueued() }
        follower.delivered.withLock { delivered in
            do throws(StorageError) {
                try refresh()
                let newest = try read().root
                let now = newest.record.generation
                if newest.record.location == delivered.location { return }
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
                        try replay(after: delivered.generation, continuing: delivered.location, upTo: newest,
                                   bounds: options.replay) { batch in
                            enqueue(.committed(batch))
                            reached = batch.last?.generation ?? reached
                        }
                    } catch {
                        enqueue(.historyUnavailable(from: reached, to: now))
                    }
                }
                delivered = DeliveredCommit(generation: now, location: newest.record.location)
            } catch {
                options.log("following \(path) failed for now (will retry): \(error)")
            }
        }
    }

    func stopFollowing() {
        let stopped = follower.withLock { follower -> Follower? in
            defer { follower = nil }
            return follower
        }
        stopped?.watch.cancel()
    }
}
