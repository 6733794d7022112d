#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// When a commit is durable.
public enum Durability: Sendable, Equatable {
    /// Every commit appends its run of pages and returns only once an fdatasync of the
    /// snapshot file covered it and its root is in the root file: a returned commit survives
    /// any crash. Commits of concurrent writers that reach the sync together share it (group
    /// commit, Docs/Durability.md §1.4). The default.
    case full
    /// Commits within `window` share one fsync and root replacement. A commit returns once
    /// its pages are written (readers in this process see it at once); a crash can lose the
    /// commits of the last window, never corrupt the store. ``Store/flush()`` makes
    /// everything so far durable.
    case grouped(window: Duration)

    /// Grouped commits with a 10 ms window.
    public static let grouped = Durability.grouped(window: .milliseconds(10))
}

/// When compaction runs by itself after a commit.
///
/// A commit appends its changed pages and leaves the pages they replace dead in the
/// snapshot file; compaction copies the live pages to a new file. Automatic compaction
/// runs after a commit once the dead bytes exceed `deadToLiveRatio` times the live bytes
/// plus `slackBytes`, so the current file stays at most about `(1 + deadToLiveRatio)`
/// times its live bytes plus `slackBytes` (with the defaults: twice the live bytes plus
/// 4 MiB). The check reads only the root record's committed length and live bytes: no
/// directory listing, no catalog scan per commit.
///
/// The default slack was chosen by measurement (Docs/Benchmarks.md, "Space"): with 4 MiB, a
/// store of 2.7 MiB live updated one record per commit compacts every 300-600 commits,
/// each compaction copying the live bytes in 10-15 ms, 20-50 µs per commit amortised,
/// and after 10,000 such commits it occupies 4.1 MiB (110 MiB before). Since a compaction
/// follows at least `live + slack` appended bytes, it at most doubles the bytes written.
///
/// After a failed automatic compaction (a full disk, say) the next attempt waits until the
/// dead bytes have grown by a further `slackBytes`, doubled on each consecutive failure
/// (capped at 1,024 times), rather than retrying on every commit; the failure is logged
/// once per run of failures, and a successful compaction (automatic or ``Store/compact(progress:)``)
/// ends the backoff.
public struct AutoCompaction: Sendable, Equatable {
    /// Dead bytes allowed beyond `deadToLiveRatio` × live bytes before a compaction; also
    /// the first backoff step after a failed compaction.
    public var slackBytes: UInt64
    /// Dead bytes allowed per live byte (beyond `slackBytes`). 1 means a file at most about
    /// twice its live bytes.
    public var deadToLiveRatio: Double

    /// Compaction once dead bytes exceed `deadToLiveRatio` (1) times the live bytes plus
    /// `slackBytes` (4 MiB).
    public init(slackBytes: UInt64 = 4 << 20, deadToLiveRatio: Double = 1) {
        self.slackBytes = slackBytes
        self.deadToLiveRatio = max(0, deadToLiveRatio)
    }

    /// The dead bytes above which a store of `liveBytes` live bytes compacts.
    public func deadBytesLimit(liveBytes: UInt64) -> UInt64 {
        let relative = deadToLiveRatio * Double(liveBytes)
        let capped = relative >= Double(UInt64.max - slackBytes) ? UInt64.max - slackBytes : UInt64(relative)
        return capped + slackBytes
    }
}

/// How long, and how many bytes of, snapshot files that compaction replaced a writer keeps.
///
/// A reader in another process reads the root file, then opens the snapshot file it names;
/// a compaction between the two would leave it without a file. Keeping replaced files for
/// a grace time makes that race (and replaying recent change records across a compaction)
/// succeed; a reader that still finds its file gone re-reads the root and goes on.
///
/// Replaced files count toward the store's size on disk, so they are bounded three ways:
/// by time (`gracePeriod`), by number (`maximumRetainedFiles`) and by bytes
/// (`maximumRetainedBytes`). Beyond either limit the oldest go at once, except a file a
/// root slot names, which is kept whatever its size: a fallback to that slot needs it. (A
/// version 2 or 3 compaction writes its root into both slots, so only a version 1 store's
/// slot 1 names a replaced file.)
public struct SnapshotRetention: Sendable, Equatable {
    /// How long a replaced snapshot file stays after compaction replaced it.
    public var gracePeriod: Duration
    /// At most this many replaced files are kept, however recent: when compactions follow
    /// each other faster than the grace period (a bulk load), the oldest go at once, so
    /// retention never multiplies the store's size on disk. At least 1.
    public var maximumRetainedFiles: Int
    /// At most this many bytes of replaced files are kept, however recent (a file a root
    /// slot names excepted). The default, 4 MiB, keeps small stores' replaced files for
    /// the grace period, while a large store's go once the root no longer names them.
    public var maximumRetainedBytes: UInt64

    /// Keep replaced files for `gracePeriod` (30 seconds), at most `maximumRetainedFiles`
    /// (2) of them and at most `maximumRetainedBytes` (4 MiB) in all.
    public init(
        gracePeriod: Duration = .seconds(30), maximumRetainedFiles: Int = 2,
        maximumRetainedBytes: UInt64 = 4 << 20
    ) {
        self.gracePeriod = gracePeriod
        self.maximumRetainedFiles = max(1, maximumRetainedFiles)
        self.maximumRetainedBytes = maximumRetainedBytes
    }
}

/// Settings fixed when a store is opened.
public struct StoreOptions: Sendable {
    /// Where files live: ``POSIXFileSystem`` (the default) or ``MemoryFileSystem``, or a test
    /// file system.
    public var fileSystem: any FileSystem
    /// ``Durability/full`` (default) or ``Durability/grouped(window:)``.
    public var durability: Durability
    /// Byte limit of the decoded-page cache. Default 8 MiB.
    public var cacheCapacity: Int
    /// Create the store (and missing directories) if there is none. Default true; ignored
    /// by read-only opening, which never creates anything.
    public var createIfMissing: Bool
    /// Compaction after commits, or nil for on-demand only.
    public var autoCompaction: AutoCompaction?
    /// How long replaced snapshot files are kept.
    public var retention: SnapshotRetention
    /// A write transaction's memory budget between spills: once the memory it took since
    /// its last spill passes this many bytes (an estimate: the keys and values it changed,
    /// a fixed overhead per changed key for their node entries and its change-log entry,
    /// and the pages it copied into memory to change them), its changed pages are written
    /// past the committed end (unreachable until it commits) and dropped from memory. Its
    /// change log stays until the commit, bounded by ``changeRecordKeyLimit``. Default
    /// 64 MiB (Docs/Benchmarks.md); nil keeps every change in memory until the commit.
    public var transactionSpillBytes: Int? = 64 << 20
    /// How long ``Store/beginWrite()`` (and opening for writing, and a compaction) waits
    /// while a writer in another process holds the store's lock for its turn, before it
    /// throws `StorageError.lockedByAnotherWriter(path:)` (SQLite's busy timeout). The wait
    /// sleeps between tries (never spins), noticing a release within 4 ms, and blocks the
    /// calling thread. Default zero (or less): one try, refused at once. A second open for
    /// writing in this process is refused at once whatever the timeout
    /// (`StorageError.alreadyOpenInThisProcess(path:)`).
    ///
    /// ```swift
    /// var options = StoreOptions()
    /// options.busyTimeout = .seconds(5)  // wait for another process's transaction
    /// let store = try Store.open(at: path, options: options)
    /// ```
    public var busyTimeout: Duration = .zero
    /// The most changed keys of one tree a commit's change record lists. A transaction that
    /// changes more keys of a tree drops that tree's change log and records the tree as
    /// changed wholesale (``ChangeRecord/TreeChanges/isChangedWholesale``): observers then
    /// re-read it instead of applying changes. This bounds what a transaction holds for its
    /// change record to about twice this many keys per tree; values below 1 count as 1.
    ///
    /// Default 16,384, so that the change record of one commit stays bounded however many
    /// keys it changes; observers of a tree past it are told it changed wholesale
    /// (``ChangeRecord/isChangedWholesale(_:)``) and reload it, rather than get its keys.
    /// `Int.max` lists every key. The wholesale marker is part of format version 3
    /// (Docs/Format.md §7, §18.2): a store becomes version 3 at its first commit that
    /// records a tree wholesale, and from then on builds that read version 2 only refuse it
    /// as a newer format version; a store that never reaches the limit stays version 2.
    public var changeRecordKeyLimit: Int = 16_384
    /// Where the store reports what it recovered from (a damaged root slot, commits
    /// recovered past the slot, a damaged run that cut commits off, an interrupted
    /// compaction's copy reclaimed). Called while the store holds its locks: it must not
    /// call into the store. Default: standard error.
    public var log: @Sendable (String) -> Void
    /// How a read-only store replays history to observers (internal: tests narrow it).
    var replay = ReplayBounds()

    /// Options; every argument has the default described on its property.
    public init(
        fileSystem: any FileSystem = POSIXFileSystem(), durability: Durability = .full,
        cacheCapacity: Int = 8 << 20, createIfMissing: Bool = true,
        autoCompaction: AutoCompaction? = AutoCompaction(), retention: SnapshotRetention = SnapshotRetention(),
        log: @escaping @Sendable (String) -> Void = StoreOptions.standardErrorLog
    ) {
        self.fileSystem = fileSystem
        self.durability = durability
        self.cacheCapacity = cacheCapacity
        self.createIfMissing = createIfMissing
        self.autoCompaction = autoCompaction
        self.retention = retention
        self.log = log
    }

    /// Writes a line to standard error, prefixed with "folio: ".
    public static let standardErrorLog: @Sendable (String) -> Void = { message in
        let line = Array("folio: \(message)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}
