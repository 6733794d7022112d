import Synchronization

/// Signals to raise when this store object publishes a root it wrote: the wake-up of a
/// replicator in the same process, which needs to know that a new durable root exists and
/// nothing else. An observer (``Store/observe(_:)``) would do that too, but it costs more: a
/// writer with observers watches its directory, pausing and resuming the watch at each
/// turn, and replays other processes' commits for them.
struct PublishSignals: Sendable {
    var signals: [UInt64: @Sendable () -> Void] = [:]
    var nextID: UInt64 = 1
}

extension Store {
    /// Calls `signal` each time this store object writes a root slot for commits of its
    /// own, right after the write, on the committing or flushing thread and with the root
    /// file's lock held: `signal` must return at once and touch no lock of this store
    /// (signalling a semaphore is what it is for). Commits of other processes, and the
    /// slots a compaction writes, raise nothing: watch the directory for those.
    /// ``StoreObservation/cancel()`` ends the calls.
    package func signalOnPublish(_ signal: @escaping @Sendable () -> Void) -> StoreObservation {
        let id = publishSignals.withLock { registered -> UInt64 in
            let id = registered.nextID
            registered.nextID += 1
            registered.signals[id] = signal
            return id
        }
        return StoreObservation { [weak self] in
            _ = self?.publishSignals.withLock { $0.signals.removeValue(forKey: id) }
        }
    }

    /// Raises the signals registered with ``signalOnPublish(_:)``.
    func signalPublished() {
        let signals = publishSignals.withLock { $0.signals.isEmpty ? [] : Array($0.signals.values) }
        for signal in signals { signal() }
    }
}
