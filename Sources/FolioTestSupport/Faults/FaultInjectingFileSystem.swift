import FolioStorage

/// A file system that forwards every call to another one but fails the call a
/// ``FaultPlan`` names, to prove the engine survives an I/O error at every point of a
/// workload.
///
/// Every call that can fail — on the file system and on every file handle it returns — is
/// counted in one global, 1-based sequence (``callCount``). `close()`, `unlock()` and
/// `itemKind(at:)` cannot report an error, so they are forwarded without being counted (and
/// locks from `lock(_:)` are returned unwrapped). The usual sweep: run the workload once with no plan to
/// learn `total = callCount`, then for each `n` in `1...total` run it on a fresh stack with
/// `FaultPlan(failingCall: n)` and check the engine's reaction; ``injectedFaults`` tells
/// whether the fault fired.
///
/// Injected errors are `StorageError.io(operation:path:code:)` with the system-call name
/// the real file system would report (`pwrite`, `fsync`, `unlink`, ...) and `EIO` or
/// `ENOSPC` (see ``FaultPlan/Kind``). A failed call does nothing, except a
/// ``FaultPlan/Kind/shortWrite``, which first writes a prefix.
///
/// A failed `sync()` only throws: the handle is not poisoned by this layer, and later calls
/// on it are forwarded as usual (unless a persistent fault fails them). Refusing to write
/// through a handle whose sync failed is the engine's business (``POSIXFileSystem``'s handles
/// do it themselves; ``MemoryFileSystem``'s do not), and tests built on this layer are meant
/// to check that the engine does it without help.
public final class FaultInjectingFileSystem: FileSystem {
    /// The file system calls are forwarded to.
    public let wrapped: any FileSystem
    private let injector: FaultInjector

    /// Wraps `fileSystem`. `plan` is the fault to inject (none if nil); `countedKinds`
    /// restricts which calls are counted (and can be chosen by a plan's call number), for
    /// example `[.write, .sync, .syncDirectory]` to sweep only over those. Persistent faults
    /// fail later mutating calls whether or not their kind is counted.
    public init(
        wrapping fileSystem: any FileSystem, plan: FaultPlan? = nil,
        countedKinds: Set<FileOperation.Kind> = FileOperation.Kind.all
    ) {
        wrapped = fileSystem
        injector = FaultInjector(plan: plan, countedKinds: countedKinds)
    }

    /// The fault to inject, or nil for none. Setting it clears a persistent fault that has
    /// already fired; the call count carries on (see ``reset()``).
    public var plan: FaultPlan? {
        get { injector.plan }
        set { injector.plan = newValue }
    }

    /// The kinds of call that are counted (never `close`, `unlock` or `itemKind`).
    public var countedKinds: Set<FileOperation.Kind> { injector.countedKinds }

    /// If set, only calls on the paths it accepts are counted and can fail (by the plan or
    /// a persistent fault); calls on other paths are forwarded as if there were no plan.
    /// For faults confined to some files: a full disk that fails a compaction's new
    /// snapshot file while commits to the current one go on. Nil (the default): every path.
    public var faultedPaths: (@Sendable (String) -> Bool)? {
        get { injector.faultedPaths }
        set { injector.faultedPaths = newValue }
    }

    /// How many counted calls have been made since creation or the last ``reset()``.
    public var callCount: Int { injector.callCount }

    /// How many calls have failed because of the plan (the chosen call, plus every mutating
    /// call after it under a persistent plan).
    public var injectedFaults: Int { injector.failedOperations.count }

    /// The calls that failed because of the plan, in order.
    public var failedOperations: [FileOperation] { injector.failedOperations }

    /// Zeroes ``callCount`` and ``injectedFaults`` and clears a fired persistent fault;
    /// keeps the plan.
    public func reset() { injector.reset() }

    // MARK: FileSystem

    /// Counts and forwards the open; the returned handle counts its own calls.
    public func open(_ path: String, mode: FileOpenMode) throws(StorageError) -> any StorageFile {
        try injector.admit(.open(path: path, mode: mode))
        return FaultInjectingFile(wrapping: try wrapped.open(path, mode: mode), injector: injector)
    }

    /// Counts and forwards.
    public func rename(_ source: String, to destination: String) throws(StorageError) {
        try injector.admit(.rename(from: source, to: destination))
        try wrapped.rename(source, to: destination)
    }

    /// Counts and forwards.
    public func remove(_ path: String) throws(StorageError) {
        try injector.admit(.remove(path: path))
        try wrapped.remove(path)
    }

    /// Counts and forwards.
    public func syncDirectory(_ path: String) throws(StorageError) {
        try injector.admit(.syncDirectory(path: path))
        try wrapped.syncDirectory(path)
    }

    /// Counts and forwards.
    public func createDirectory(_ path: String) throws(StorageError) {
        try injector.admit(.createDirectory(path: path))
        try wrapped.createDirectory(path)
    }

    /// Counts and forwards.
    public func contentsOfDirectory(_ path: String) throws(StorageError) -> [String] {
        try injector.admit(.list(path: path))
        return try wrapped.contentsOfDirectory(path)
    }

    /// Forwards without counting: this call cannot fail.
    public func itemKind(at path: String) -> FileItemKind? {
        wrapped.itemKind(at: path)
    }

    /// Counts and forwards; the lock is returned as is (unlocking cannot fail).
    public func lock(_ path: String) throws(StorageError) -> any FileLock {
        try injector.admit(.lock(path: path))
        return try wrapped.lock(path)
    }

    /// Counts and forwards; the lock file counts its ``LockFile/tryLock()`` calls (not
    /// `unlock()` or `close()`, which cannot fail).
    public func openLockFile(_ path: String) throws(StorageError) -> any LockFile {
        try injector.admit(.openLockFile(path: path))
        return FaultInjectingLockFile(wrapping: try wrapped.openLockFile(path), injector: injector)
    }

    /// Counts and forwards.
    public func identity(of path: String) throws(StorageError) -> FileIdentity {
        try injector.admit(.identity(path: path))
        return try wrapped.identity(of: path)
    }
}
