/// Counters of the I/O a workload issued through a ``RecordingFileSystem``, for "cost follows
/// the work" tests: take ``RecordingFileSystem/statistics`` before and after, subtract, and
/// assert on the difference.
///
/// Calls are counted when issued, whether or not they then fail. ``bytesWritten`` counts
/// the bytes each write asked to write; ``bytesRead`` counts the bytes reads returned.
public struct OperationCounts: Hashable, Sendable, CustomStringConvertible {
    /// Number of ``FolioStorage/StorageFile/read(at:count:)`` calls.
    public var reads: Int = 0
    /// Bytes returned by reads.
    public var bytesRead: Int = 0
    /// Number of ``FolioStorage/StorageFile/write(_:at:)`` calls.
    public var writes: Int = 0
    /// Bytes passed to writes.
    public var bytesWritten: Int = 0
    /// Number of file syncs (``FolioStorage/StorageFile/sync()``).
    public var syncs: Int = 0
    /// Number of directory syncs (``FolioStorage/FileSystem/syncDirectory(_:)``).
    public var directorySyncs: Int = 0
    /// Number of opens.
    public var opens: Int = 0
    /// Number of renames.
    public var renames: Int = 0
    /// Number of removals.
    public var removes: Int = 0
    /// Number of truncations.
    public var truncates: Int = 0

    /// All counters zero.
    public init() {}

    /// Creates statistics with the given counters; unnamed ones are zero.
    public init(
        reads: Int = 0, bytesRead: Int = 0, writes: Int = 0, bytesWritten: Int = 0,
        syncs: Int = 0, directorySyncs: Int = 0, opens: Int = 0, renames: Int = 0,
        removes: Int = 0, truncates: Int = 0
    ) {
        self.reads = reads
        self.bytesRead = bytesRead
        self.writes = writes
        self.bytesWritten = bytesWritten
        self.syncs = syncs
        self.directorySyncs = directorySyncs
        self.opens = opens
        self.renames = renames
        self.removes = removes
        self.truncates = truncates
    }

    /// The counters of `later` minus those of `earlier`: the I/O issued in between.
    public static func - (later: OperationCounts, earlier: OperationCounts) -> OperationCounts {
        OperationCounts(
            reads: later.reads - earlier.reads, bytesRead: later.bytesRead - earlier.bytesRead,
            writes: later.writes - earlier.writes, bytesWritten: later.bytesWritten - earlier.bytesWritten,
            syncs: later.syncs - earlier.syncs, directorySyncs: later.directorySyncs - earlier.directorySyncs,
            opens: later.opens - earlier.opens, renames: later.renames - earlier.renames,
            removes: later.removes - earlier.removes, truncates: later.truncates - earlier.truncates)
    }

    /// One line listing every counter.
    public var description: String {
        "reads \(reads) (\(bytesRead) B), writes \(writes) (\(bytesWritten) B), syncs \(syncs), "
            + "dir syncs \(directorySyncs), opens \(opens), renames \(renames), removes \(removes), "
            + "truncates \(truncates)"
    }

    /// Counts one issued call.
    mutating func count(_ operation: FileOperation) {
        switch operation {
        case .read: reads += 1
        case .write(_, _, let count):
            writes += 1
            bytesWritten += count
        case .sync: syncs += 1
        case .syncDirectory: directorySyncs += 1
        case .open: opens += 1
        case .rename: renames += 1
        case .remove: removes += 1
        case .truncate: truncates += 1
        default: break
        }
    }
}
