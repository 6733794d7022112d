#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// When a commit is durable.
public enum Durability: Sendable, Equatable {
    /// Every commit appends its pages, fsyncs the snapshot file, replaces the root file and
    /// fsyncs the directory before it returns: a returned commit survives any crash. The
    /// default.
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
public struct AutoCompaction: Sendable, Equatable {
    /// Compact only once at least this many bytes are dead.
    public var minimumDeadBytes: UInt64
    /// ... and dead bytes are at least this fraction of the snapshot file.
    public var deadFraction: Double

    /// Automatic compaction once at least `minimumDeadBytes` (64 MiB) and `deadFraction` (half) of the file are dead.
    public init(minimumDeadBytes: UInt64 = 64 << 20, deadFraction: Double = 0.5) {
        self.minimumDeadBytes = minimumDeadBytes
        self.deadFraction = deadFraction
    }
}

/// How long a writer keeps snapshot files that compaction replaced.
///
/// A reader in another process reads the root file, then opens the snapshot file it names;
/// a compaction between the two would leave it without a file. Keeping replaced files for
/// a grace time makes that race (and replaying recent change records across a compaction)
/// succeed; a reader that still finds its file gone re-reads the root and goes on.
public struct SnapshotRetention: Sendable, Equatable {
    /// How long a replaced snapshot file stays after compaction replaced it.
    public var gracePeriod: Duration
    /// At most this many replaced files are kept, however recent: when compactions follow
    /// each other faster than the grace period (a bulk load), the oldest go at once, so
    /// retention never multiplies the store's size on disk. At least 1 (the file root slot
    /// 1 names is always kept).
    public var maximumRetainedFiles: Int

    /// Keep replaced files for `gracePeriod` (30 seconds), at most `maximumRetainedFiles`
    /// (2) of them.
    public init(gracePeriod: Duration = .seconds(30), maximumRetainedFiles: Int = 2) {
        self.gracePeriod = gracePeriod
        self.maximumRetainedFiles = max(1, maximumRetainedFiles)
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
    /// Where the store reports recovered problems (a damaged root slot, a truncated tail).
    /// Default: standard error.
    public var log: @Sendable (String) -> Void
    /// How a read-only store replays history to observers (internal: tests narrow it).
    var replay = ReplayBounds()

    /// Options; every argument has the default described on its property.
    public init(fileSystem: any FileSystem = POSIXFileSystem(), durability: Durability = .full,
                cacheCapacity: Int = 8 << 20, createIfMissing: Bool = true,
                autoCompaction: AutoCompaction? = AutoCompaction(), retention: SnapshotRetention = SnapshotRetention(),
                log: @escaping @Sendable (String) -> Void = StoreOptions.standardErrorLog) {
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
