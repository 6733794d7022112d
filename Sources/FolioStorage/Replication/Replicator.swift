import Dispatch
import Synchronization

/// Ships a store to a replica (a ``ReplicaDestination``) as it commits: first its snapshot
/// files, then every committed run as it becomes durable. The commit chain is already a
/// continuous backup: every run is immutable once committed and sealed by its checksums
/// (Docs/Format.md §7), so shipping is appending the bytes between the replica's root and
/// the source's, then publishing the source's root slot.
///
/// It works beside the store's writers, in the same process or another, and takes no lock:
/// it reads the source as a reader does (the newest root slot names a durable generation),
/// off the commit path. What the replica promises (Docs/Durability.md, "Replicas"):
/// - at every moment it is a valid store at some generation the source committed
///   durably, the last root published; it never holds a root whose bytes it has not
///   written and synced;
/// - it keeps the source's history: the runs of every snapshot file the source still
///   holds. A file the source's compaction and retention removed is removed from the
///   replica too, after the replica's root has moved past it;
/// - shipping resumes where the last published root left it, whichever side was killed:
///   bytes past it are sent again;
/// - it refuses a destination holding another history (`StorageError.replicaDiverged(destination:reason:)`).
///
/// ```swift
/// let replicator = Replicator(source: storePath, to: DirectoryReplica(path: "/mnt/backup/library"))
/// let report = try replicator.ship()  // what is committed now
/// print("replica at generation \(report.generation)")
/// ```
public final class Replicator: Sendable {
    /// The store replicated.
    public let sourcePath: String
    /// Where it goes.
    public let destination: any ReplicaDestination

    let options: StoreOptions
    let sourceLayout: StoreLayout
    private let session = Mutex<ReplicationSession?>(nil)
    private let stopRequested = Atomic<Bool>(false)
    private let seenReplica = Atomic<Bool>(false)
    /// The generation of the replica's published root as last known (0: none); kept after
    /// the session closes.
    private let published = Atomic<UInt64>(0)
    private let wake = DispatchSemaphore(value: 0)
    /// A wake-up is signalled and not yet taken: later ones until the loop takes it add
    /// nothing (the shipment after it covers their commits), so each is one pass, not one
    /// pass per notification.
    private let wakePending = Atomic<Bool>(false)

    /// Whether a session of this replicator found (or began) a replica at the destination.
    var hasSeenReplica: Bool {
        get { seenReplica.load(ordering: .relaxed) }
        set { seenReplica.store(newValue, ordering: .relaxed) }
    }

    /// Bytes read from the source and written to the destination at a time.
    static let chunkSize = 1 << 20

    /// A replicator of the store at `source` to `destination`. Nothing is read or written
    /// until the first ``ship()`` or ``follow(pollInterval:minimumInterval:onEvent:)``.
    public init(source: String, to destination: any ReplicaDestination, options: StoreOptions = StoreOptions()) {
        self.sourceLayout = StoreLayout(directory: source)
        self.sourcePath = sourceLayout.directory
        self.destination = destination
        self.options = options
    }

    /// Ships what the source has committed durably now and returns when the replica holds
    /// it: the replica's published root is then the source's newest durable one.
    ///
    /// - Throws: `StorageError.replicaDiverged(destination:reason:)` if the destination
    ///   holds another history; the destination's errors (full, unreachable); the source's
    ///   (not a store, damaged). After an error the replica still holds the last root it
    ///   published, and the next call ships from there.
    @discardableResult
    public func ship() throws(StorageError) -> ReplicationReport {
        try session.withLock { session throws(StorageError) in
            if session == nil {
                do throws(StorageError) {
                    session = try ReplicationSession.start(self)
                } catch {
                    try? destination.finish()
                    throw error
                }
            }
            guard let current = session else { throw .closed(path: sourcePath) }
            do throws(StorageError) {
                let report = try current.ship(self)
                published.store(report.generation, ordering: .relaxed)
                return report
            } catch {
                // Whatever went wrong, the next shipment starts from what the destination
                // says it holds, not from what this one believed; the destination lets go of
                // its lock meanwhile, as a killed replicator's would.
                current.close()
                session = nil
                try? destination.finish()
                throw error
            }
        }
    }

    /// The generation of the root the replica last published, as far as this replicator
    /// knows (nil before its first shipment, or if the replica holds none).
    public var publishedGeneration: UInt64? {
        let generation = published.load(ordering: .relaxed)
        return generation == 0 ? nil : generation
    }

    /// Ships until ``stop()``: at once, then whenever the source's root file changes (a
    /// watch on its directory, polled every `pollInterval` where the platform cannot
    /// notify), so the replica trails the source by the shipment in flight. A failed
    /// shipment is retried with a growing delay (up to 30 s) and reported to `onEvent`,
    /// except when no retry can succeed: a destination that holds another history
    /// (`StorageError.replicaDiverged(destination:reason:)`) or something other than a
    /// replica (`StorageError.destinationNotEmpty(path:)`), or a source that is not a
    /// store this build reads, which end it with that error. Blocks the calling thread; run
    /// it on one of its own.
    ///
    /// With a `minimumInterval`, a shipment that moved the replica is followed by a pause of
    /// that long before the next: the commits made meanwhile go in one shipment, with one
    /// sync of the replica, instead of one each. It trades lag for less work beside a writer
    /// that commits often (Docs/Benchmarks.md measures both); zero, the default, ships each
    /// commit as soon as it is seen.
    public func follow(
        pollInterval: Duration = .milliseconds(250), minimumInterval: Duration = .zero,
        onEvent: @escaping @Sendable (ReplicationEvent) -> Void = { _ in }
    ) throws(StorageError) {
        let watch = try options.fileSystem.watch(sourceLayout.directory, pollInterval: pollInterval) { [self] in
            wakeUp()
        }
        defer {
            watch.cancel()
            try? close()
        }
        var failures = 0
        while !stopRequested.load(ordering: .acquiring) {
            var delay = pollInterval
            // Taken before the shipment reads the source's root: a wake-up from here on
            // signals again, and the next wait returns at once.
            wakePending.store(false, ordering: .sequentiallyConsistent)
            do throws(StorageError) {
                let report = try ship()
                failures = 0
                if report.advanced {
                    onEvent(.shipped(report))
                    if minimumInterval > .zero {
                        // Then ship again at once, without waiting for a wake-up: the ones
                        // that came during the pause were consumed by it.
                        pause(minimumInterval)
                        continue
                    }
                }
            } catch {
                if Self.isPermanent(error) { throw error }
                failures += 1
                delay = min(.milliseconds(100) * (1 << min(failures, 9)), .seconds(30))
                onEvent(.failed(error, retryingIn: delay))
                options.log("replicating \(sourcePath) to \(destination.name) failed (will retry): \(error)")
                // Only the stop ends a wait after a failure: a busy source would retry at once.
                pause(delay)
                continue
            }
            _ = wake.wait(timeout: .now() + .milliseconds(Int(min(delay / .milliseconds(1), 3_600_000))))
        }
    }

    /// Waits `duration`, or until ``stop()``. Wake-ups meanwhile do not end it.
    private func pause(_ duration: Duration) {
        let deadline = ContinuousClock.now + duration
        while !stopRequested.load(ordering: .acquiring), ContinuousClock.now < deadline {
            let left = min((deadline - ContinuousClock.now) / .microseconds(1), 50_000)
            _ = wake.wait(timeout: .now() + .microseconds(Int(max(left, 1))))
        }
    }

    /// Errors no retry can mend: the destination holds something else, the source is not
    /// a store this build reads.
    static func isPermanent(_ error: StorageError) -> Bool {
        switch error {
        case .replicaDiverged, .destinationNotEmpty, .notAStore, .storeNotFound, .unsupportedFormatVersion:
            return true
        default:
            return false
        }
    }

    /// Makes ``follow(pollInterval:minimumInterval:onEvent:)`` look at the source now, as a change of its
    /// root file does: for a writer in the same process, which knows of each durable commit
    /// before the directory watch reports it.
    package func wakeUp() {
        if wakePending.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged {
            wake.signal()
        }
    }

    /// Ends ``follow(pollInterval:minimumInterval:onEvent:)`` after the shipment in flight, if any. A
    /// stopped replicator does not follow again (``follow(pollInterval:minimumInterval:onEvent:)`` returns
    /// at once); ``ship()`` still works.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        wake.signal()
    }

    /// Makes the last published root durable and closes what the replicator holds open (the
    /// destination's lock included). A later ``ship()`` starts a new session.
    public func close() throws(StorageError) {
        // Under the session's lock: a shipment in flight on another thread finishes first,
        // so the destination is never finished between its writes and its publish.
        try session.withLock { session throws(StorageError) in
            session?.close()
            session = nil
            try destination.finish()
        }
    }
}

extension Store {
    /// A replicator of this store (its directory, read through its file system) to
    /// `destination`.
    public func replicator(to destination: any ReplicaDestination) -> Replicator {
        Replicator(source: path, to: destination, options: options)
    }

    /// A replica in the directory at `path`, written through this store's file system.
    public func replicaDirectory(_ path: String) -> DirectoryReplica {
        DirectoryReplica(path: path, fileSystem: fileSystem)
    }
}
