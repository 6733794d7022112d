#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// A named place in the commit, compaction, creation and lock paths where a test process
/// can kill itself, to prove that a crash at exactly that instant loses nothing acknowledged.
///
/// Select one with the environment: `FOLIO_CRASH_POINT=commit.afterSnapshotSync` kills the
/// process (SIGKILL, no cleanup, no buffered output) the first time that point is reached;
/// `FOLIO_CRASH_POINT_SKIP=N` lets it pass N times first. Without the variable a crash point
/// costs one load of a constant. The full list is ``CrashPoint/all`` and Docs/Durability.md.
@_spi(Testing) public struct CrashPoint: Sendable, Hashable, CustomStringConvertible {
    /// The point's name, as given in `FOLIO_CRASH_POINT`.
    public let name: String

    init(_ name: String) { self.name = name }

    public var description: String { name }

    /// Kills the process if this point is the selected one and its skip count is used up.
    @inline(__always)
    func reach() {
        guard let selected = CrashPoint.selected, selected == name else { return }
        CrashPoint.reachSelected()
    }

    // MARK: The points

    /// Creation: the directory and lock exist, nothing else.
    public static let createAfterLock = CrashPoint("create.afterLock")
    /// Creation: the first snapshot file is written and synced.
    public static let createAfterSnapshot = CrashPoint("create.afterSnapshot")
    /// Creation: the info file is in place.
    public static let createAfterInfo = CrashPoint("create.afterInfo")
    /// Creation: the first root is written to its temporary file, not yet renamed.
    public static let createBeforeRootRename = CrashPoint("create.beforeRootRename")
    /// Creation: the root is renamed into place; directory not yet synced.
    public static let createAfterRootRename = CrashPoint("create.afterRootRename")
    /// Open: the write lock is held, recovery not yet done.
    public static let openAfterLock = CrashPoint("open.afterLock")
    /// Commit: some pages appended to the snapshot file (after the first chunk).
    public static let commitMidAppend = CrashPoint("commit.midAppend")
    /// Commit: all pages appended, snapshot file not yet synced.
    public static let commitBeforeSnapshotSync = CrashPoint("commit.beforeSnapshotSync")
    /// Commit: the run is synced (the commit is durable), its root slot not yet written.
    public static let commitAfterSnapshotSync = CrashPoint("commit.afterSnapshotSync")
    /// Commit: the root slot written in place (not synced), the commit not yet published.
    public static let commitAfterRootSlotWrite = CrashPoint("commit.afterRootSlotWrite")
    /// Commit: published, not yet acknowledged to the caller.
    public static let commitBeforeAcknowledge = CrashPoint("commit.beforeAcknowledge")
    /// Compaction: part of the live pages copied into the new snapshot file.
    public static let compactMidCopy = CrashPoint("compact.midCopy")
    /// Compaction: the copy's background passes done, the catch-up (which holds the writer
    /// slot) not yet begun; commits may have gone into the old file during the copy.
    public static let compactBeforeCatchUp = CrashPoint("compact.beforeCatchUp")
    /// Compaction: new snapshot file complete and synced, root not yet switched.
    public static let compactBeforeRootSwitch = CrashPoint("compact.beforeRootSwitch")
    /// Compaction: root slot written and synced, old snapshot files not yet removed.
    public static let compactAfterRootSwitch = CrashPoint("compact.afterRootSwitch")
    /// Compaction: some old snapshot files removed.
    public static let compactMidRemove = CrashPoint("compact.midRemove")

    /// Backup: part of the live pages copied into the destination.
    public static let backupMidCopy = CrashPoint("backup.midCopy")

    /// Replication: part of a stretch of a snapshot file written to the replica (after a
    /// full chunk, more of the stretch to come), nothing of the shipment synced.
    public static let replicateMidFile = CrashPoint("replicate.midFile")
    /// Replication: the shipment's bytes written and synced, its root not yet published.
    public static let replicateBeforePublish = CrashPoint("replicate.beforePublish")
    /// Replication: the shipment's root published (its slot written, not synced), the files
    /// the source no longer has not yet removed from the replica.
    public static let replicateAfterPublish = CrashPoint("replicate.afterPublish")

    /// Every crash point, in the order a store's life reaches them.
    public static let all: [CrashPoint] = [
        createAfterLock, createAfterSnapshot, createAfterInfo, createBeforeRootRename, createAfterRootRename,
        openAfterLock,
        commitMidAppend, commitBeforeSnapshotSync, commitAfterSnapshotSync, commitAfterRootSlotWrite,
        commitBeforeAcknowledge,
        compactMidCopy, compactBeforeCatchUp, compactBeforeRootSwitch, compactAfterRootSwitch, compactMidRemove,
        backupMidCopy,
        replicateMidFile, replicateBeforePublish, replicateAfterPublish,
    ]

    // MARK: Selection from the environment

    private static let selected: String? = {
        guard let value = getenv("FOLIO_CRASH_POINT") else { return nil }
        let name = String(cString: value)
        return name.isEmpty ? nil : name
    }()

    private static let remainingSkips: Mutex<Int> = {
        guard let value = getenv("FOLIO_CRASH_POINT_SKIP") else { return Mutex(0) }
        return Mutex(Int(String(cString: value)) ?? 0)
    }()

    private static func reachSelected() {
        let crash = remainingSkips.withLock { skips -> Bool in
            if skips > 0 { skips -= 1; return false }
            return true
        }
        if crash { kill(getpid(), SIGKILL) }
    }
}
