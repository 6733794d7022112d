import Synchronization

/// Pages read and bytes written by a store since it opened: the measure behind "cost
/// follows the work" (Docs/Architecture.md invariant 4), counted here rather than timed.
final class IOCounters: Sendable {
    private let pagesRead = Atomic<Int>(0)
    private let bytesRead = Atomic<Int>(0)
    private let pagesWritten = Atomic<Int>(0)
    private let bytesWritten = Atomic<Int>(0)
    private let commitSyncs = Atomic<Int>(0)

    func recordPageRead(bytes: Int) {
        pagesRead.add(1, ordering: .relaxed)
        bytesRead.add(bytes, ordering: .relaxed)
    }

    func recordPagesWritten(_ pages: Int, bytes: Int) {
        pagesWritten.add(pages, ordering: .relaxed)
        bytesWritten.add(bytes, ordering: .relaxed)
    }

    func recordCommitSync() {
        commitSyncs.add(1, ordering: .relaxed)
    }

    var snapshot: IOStatistics {
        IOStatistics(
            pagesRead: pagesRead.load(ordering: .relaxed), bytesRead: bytesRead.load(ordering: .relaxed),
            pagesWritten: pagesWritten.load(ordering: .relaxed), bytesWritten: bytesWritten.load(ordering: .relaxed),
            commitSyncs: commitSyncs.load(ordering: .relaxed))
    }
}

/// Page I/O a store has done since it was opened (cache hits are not reads).
public struct IOStatistics: Sendable, Equatable {
    /// Pages read from snapshot files (leaf, branch, overflow and commit pages).
    public var pagesRead: Int
    /// Bytes of those pages.
    public var bytesRead: Int
    /// Pages appended to snapshot files.
    public var pagesWritten: Int
    /// Bytes appended to snapshot files.
    public var bytesWritten: Int
    /// fdatasyncs that made commits durable. With group commit one covers every commit
    /// appended before it started, so under concurrent writers this grows more slowly than
    /// the generation (Docs/Durability.md §1.4).
    public var commitSyncs: Int

    /// The difference `self - earlier`, for measuring one operation.
    public func since(_ earlier: IOStatistics) -> IOStatistics {
        IOStatistics(
            pagesRead: pagesRead - earlier.pagesRead, bytesRead: bytesRead - earlier.bytesRead,
            pagesWritten: pagesWritten - earlier.pagesWritten, bytesWritten: bytesWritten - earlier.bytesWritten,
            commitSyncs: commitSyncs - earlier.commitSyncs)
    }
}
