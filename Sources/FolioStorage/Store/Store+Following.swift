import Synchronization

/// A read-only store's follower: the watch, and the last generation observers were told of.
final class Follower: Sendable {
    let watch: any FileWatch
    /// Also serialises catching up, so observers get events in order.
    let delivered: Mutex<UInt64>

    init(watch: any FileWatch, delivered: UInt64) {
        self.watch = watch
        self.delivered = Mutex(delivered)
    }
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
        let start = generation
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
                if now == delivered { return }
                if now < delivered {
                    // The writer fell back to an older root: what observers saw is gone.
                    enqueue(.historyUnavailable(from: delivered, to: now))
                } else {
                    // Replayed in bounded batches (``ReplayBounds``); a history too long or
                    // gone, or an error part-way, ends with `historyUnavailable` from the last
                    // generation delivered: observers miss nothing without being told.
                    var reached = delivered
                    do throws(StorageError) {
                        // Held until the lock is released: at most ReplayBounds' cap of
                        // commits (beyond it the replay refuses, and observers reload).
                        try replay(after: delivered, upTo: newest, bounds: options.replay) { batch in
                            enqueue(.committed(batch))
                            reached = batch.last?.generation ?? reached
                        }
                    } catch {
                        enqueue(.historyUnavailable(from: reached, to: now))
                    }
                }
                delivered = now
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
