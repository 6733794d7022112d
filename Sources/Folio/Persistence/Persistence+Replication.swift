import Foundation
import FolioStorage
import Synchronization

// Continuous replication: the store's committed runs shipped to a replica as they become
// durable (FolioStorage's Replicator), from a persistence.

extension Persistence {
    /// Replicates the store to the directory at `destination`: another disk, a mounted
    /// network or cloud drive. It ships the store's snapshot files, then every committed run
    /// as it becomes durable, off the commit path, until the task is cancelled; with
    /// `following: false` it ships what is durable now and returns (in grouped durability, a
    /// commit is shipped once its window is flushed).
    ///
    /// The replica is a store at every moment: open it read-only and it follows
    /// (``Persistence/init(readingFrom:options:)-(String,_)``), restore from it at any generation it
    /// holds (`folio restore REPLICA NEW --at G`, or ``backup(to:at:progress:)`` on it). It keeps
    /// the history this store keeps (``setHistoryRetention(_:)``). Killed at any moment, it
    /// still opens at the last root it published, and the next call resumes from there.
    ///
    /// ```swift
    /// let replication = Task {
    ///     try await persistence.replicate(to: "/Volumes/Backup/Library.folio")
    /// }
    /// // ... the app runs; each commit reaches the replica within a commit's time.
    /// replication.cancel()  // the replica's newest root is made durable, then it returns
    /// ```
    ///
    /// - Parameters:
    ///   - destination: a path that does not exist, an empty directory, or a replica of this
    ///     store.
    ///   - following: whether to go on shipping each commit until the task is cancelled
    ///     (the default), or ship once and return. A following call ships at least once,
    ///     even if cancelled at once.
    ///   - minimumInterval: the least time between two shipments that move the replica:
    ///     the commits made meanwhile are shipped together, with one sync of the replica.
    ///     Zero (the default) ships each commit once durable; a few milliseconds make
    ///     replication cost a writer that commits often much less, for that much more lag.
    ///   - onEvent: called after each shipment that moved the replica, and after each one
    ///     that failed (it is retried with a growing delay).
    /// - Returns: what was shipped in all: from the generation the replica held to the one
    ///   it holds now.
    /// - Throws: `FolioError.storage(.replicaDiverged(destination:reason:))` if `destination`
    ///   holds another store or another history of this one (left as it is);
    ///   `.storage(.destinationNotEmpty(path:))` if it holds anything else. With
    ///   `following: false`, the shipment's error too.
    @discardableResult
    public nonisolated func replicate(
        to destination: String, following: Bool = true, minimumInterval: Duration = .zero,
        onEvent: (@Sendable (ReplicationEvent) -> Void)? = nil
    ) async throws(FolioError) -> ReplicationReport {
        try await replicate(
            to: core.store.replicaDirectory(destination), following: following, minimumInterval: minimumInterval,
            onEvent: onEvent)
    }

    /// Replicates the store to `destination`, any ``ReplicaDestination`` (object storage or
    /// a server, implemented by another package), as
    /// ``replicate(to:following:minimumInterval:onEvent:)-(String,_,_,_)`` does to a directory.
    @discardableResult
    public nonisolated func replicate(
        to destination: any ReplicaDestination, following: Bool = true, minimumInterval: Duration = .zero,
        onEvent: (@Sendable (ReplicationEvent) -> Void)? = nil
    ) async throws(FolioError) -> ReplicationReport {
        core.store.followIfRootFileChanged()
        let replicator = core.store.replicator(to: destination)
        if !following {
            return try FolioError.wrap { () throws(StorageError) in
                defer { try? replicator.close() }
                return try replicator.ship()
            }
        }
        let total = Mutex<ReplicationReport?>(nil)
        // This process's commits wake the replicator as their root slot is written, and its
        // own directory watch wakes it at every root slot write, of this process or another
        // (a compaction's too). Either may come first; the second adds nothing
        // (Replicator.wakeUp()). The signal is not an observer of the store: an observed
        // writer would start a watch of its own, paused and resumed at every turn, and
        // replay other processes' commits for it. Without the replicator's watch, woken by
        // the signals alone, its lag's 99th percentile went from 3 commits to 11-12
        // (Docs/Benchmarks.md).
        let commits = core.store.signalOnPublish { replicator.wakeUp() }
        defer { commits.cancel() }
        let outcome: Result<UInt64?, StorageError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread {
                    do throws(StorageError) {
                        try replicator.follow(minimumInterval: minimumInterval) { event in
                            if case .shipped(let report) = event {
                                total.withLock { total in
                                    guard let sum = total else {
                                        total = report
                                        return
                                    }
                                    total = ReplicationReport(
                                        fromGeneration: sum.fromGeneration, generation: report.generation,
                                        bytesShipped: sum.bytesShipped + report.bytesShipped,
                                        filesWritten: Array(Set(sum.filesWritten + report.filesWritten)).sorted(),
                                        filesRemoved: sum.filesRemoved + report.filesRemoved)
                                }
                            }
                            onEvent?(event)
                        }
                        // Cancelled before the follow's first shipment (before this thread
                        // ran): that shipment is still made, as `following: false` makes it,
                        // so the report names the generation the replica holds.
                        if replicator.publishedGeneration == nil { try replicator.ship() }
                        try replicator.close()
                        continuation.resume(returning: .success(replicator.publishedGeneration))
                    } catch {
                        try? replicator.close()
                        continuation.resume(returning: .failure(error))
                    }
                }
                thread.name = "folio replication"
                thread.start()
            }
        } onCancel: {
            replicator.stop()
        }
        let generation: UInt64?
        switch outcome {
        case .failure(let error): throw .storage(error)
        case .success(let published): generation = published
        }
        if let report = total.withLock({ $0 }) { return report }
        return ReplicationReport(
            fromGeneration: generation, generation: generation ?? 0, bytesShipped: 0, filesWritten: [],
            filesRemoved: [])
    }
}
