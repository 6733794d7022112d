import FolioStorage

/// A file system that forwards every call to another one and logs it, so a test can assert
/// on the exact call order of a commit ("write the snapshot, sync it, write the root's
/// temporary file, sync it, rename it, sync the directory") and on how much I/O a workload
/// costs.
///
/// Each call is logged when it is issued, before it is forwarded, so failed calls appear in
/// the log too, and calls from several threads appear in the order they reached the log.
/// Handles, locks and lock files it returns log their own calls into the same log (a lock released only
/// because its object was deallocated, without an `unlock()` call, is not logged).
public final class RecordingFileSystem: FileSystem {
    /// The file system every call is forwarded to.
    public let wrapped: any FileSystem
    private let log = OperationLog()

    /// Records calls made through it and forwards them to `fileSystem`.
    public init(wrapping fileSystem: any FileSystem) {
        wrapped = fileSystem
    }

    // MARK: The log

    /// Every call logged so far (since creation or the last ``reset()``), oldest first.
    public var operations: [FileOperation] { log.operations }

    /// Counters of the calls logged so far.
    public var statistics: OperationCounts { log.statistics }

    /// Empties the log and zeroes the counters.
    public func reset() { log.reset() }

    /// The logged calls of the given kinds, with paths made relative to `root`, as
    /// ``FileOperation/summary`` strings (`write root.tmp`, `syncdir .`). By default only the
    /// durability-relevant kinds (writes, truncates, syncs, renames, removals, directory
    /// creation and syncs) are kept.
    public func summaries(
        relativeTo root: String,
        kinds: Set<FileOperation.Kind> = FileOperation.Kind.durabilityRelevant
    ) -> [String] {
        operations.filter { kinds.contains($0.kind) }.map { $0.relative(to: root).summary }
    }

    /// Like ``summaries(relativeTo:kinds:)`` but with full ``FileOperation/description``
    /// strings (`write snapshots/1.folio @4096 +8192`).
    public func descriptions(
        relativeTo root: String,
        kinds: Set<FileOperation.Kind> = FileOperation.Kind.all
    ) -> [String] {
        operations.filter { kinds.contains($0.kind) }.map { $0.relative(to: root).description }
    }

    // MARK: FileSystem

    /// Logs ``FileOperation/open(path:mode:)`` and forwards; the handle logs its own calls.
    public func open(_ path: String, mode: FileOpenMode) throws(StorageError) -> any StorageFile {
        log.record(.open(path: path, mode: mode))
        return RecordingFile(wrapping: try wrapped.open(path, mode: mode), log: log)
    }

    /// Logs ``FileOperation/rename(from:to:)`` and forwards.
    public func rename(_ source: String, to destination: String) throws(StorageError) {
        log.record(.rename(from: source, to: destination))
        try wrapped.rename(source, to: destination)
    }

    /// Logs ``FileOperation/remove(path:)`` and forwards.
    public func remove(_ path: String) throws(StorageError) {
        log.record(.remove(path: path))
        try wrapped.remove(path)
    }

    /// Logs ``FileOperation/syncDirectory(path:)`` and forwards.
    public func syncDirectory(_ path: String) throws(StorageError) {
        log.record(.syncDirectory(path: path))
        try wrapped.syncDirectory(path)
    }

    /// Logs ``FileOperation/createDirectory(path:)`` and forwards.
    public func createDirectory(_ path: String) throws(StorageError) {
        log.record(.createDirectory(path: path))
        try wrapped.createDirectory(path)
    }

    /// Logs ``FileOperation/list(path:)`` and forwards.
    public func contentsOfDirectory(_ path: String) throws(StorageError) -> [String] {
        log.record(.list(path: path))
        return try wrapped.contentsOfDirectory(path)
    }

    /// Logs ``FileOperation/itemKind(path:)`` and forwards.
    public func itemKind(at path: String) -> FileItemKind? {
        log.record(.itemKind(path: path))
        return wrapped.itemKind(at: path)
    }

    /// Logs ``FileOperation/lock(path:)`` and forwards; the lock logs its ``FileLock/unlock()``.
    public func lock(_ path: String) throws(StorageError) -> any FileLock {
        log.record(.lock(path: path))
        return RecordingLock(wrapping: try wrapped.lock(path), path: path, log: log)
    }

    /// Logs ``FileOperation/openLockFile(path:)`` and forwards; the lock file logs its own
    /// calls.
    public func openLockFile(_ path: String) throws(StorageError) -> any LockFile {
        log.record(.openLockFile(path: path))
        return RecordingLockFile(wrapping: try wrapped.openLockFile(path), log: log)
    }

    /// Logs ``FileOperation/identity(path:)`` and forwards.
    public func identity(of path: String) throws(StorageError) -> FileIdentity {
        log.record(.identity(path: path))
        return try wrapped.identity(of: path)
    }
}
