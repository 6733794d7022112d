/// The single I/O seam of the engine.
///
/// Every file operation the engine performs (open, read, write, fsync, directory fsync,
/// rename, unlink, truncate, lock) goes through this protocol and ``StorageFile``. That is
/// what lets tests record the exact call order of a commit, fail the Nth call, or build
/// power-loss images, and it keeps the POSIX details (EINTR, short writes, `F_FULLFSYNC`)
/// in one place: ``POSIXFileSystem``. ``MemoryFileSystem`` backs in-memory stores.
///
/// Paths are absolute, `/`-separated strings. Implementations must be safe to call from
/// several threads at once.
public protocol FileSystem: Sendable {
    /// Opens (and, depending on `mode`, creates) a regular file.
    func open(_ path: String, mode: FileOpenMode) throws(StorageError) -> any StorageFile
    /// Atomically replaces `destination` with `source` (POSIX `rename`).
    func rename(_ source: String, to destination: String) throws(StorageError)
    /// Removes a file (POSIX `unlink`). Open handles to it stay valid.
    func remove(_ path: String) throws(StorageError)
    /// Makes the directory's entries (creations, renames, removals) durable.
    func syncDirectory(_ path: String) throws(StorageError)
    /// Creates one directory level; succeeds if it already exists as a directory.
    func createDirectory(_ path: String) throws(StorageError)
    /// Names (not paths) of the entries in a directory, excluding `.` and `..`.
    func contentsOfDirectory(_ path: String) throws(StorageError) -> [String]
    /// What is at `path`, or nil if nothing is.
    func itemKind(at path: String) -> FileItemKind?
    /// Opens the lock file at `path` (created empty if missing) without locking it. The
    /// handle takes and releases the exclusive advisory lock as often as needed; each open
    /// is a separate holder, so two handles on one file exclude each other even within a
    /// process (see ``LockFile``).
    func openLockFile(_ path: String) throws(StorageError) -> any LockFile
    /// Takes an exclusive, non-blocking advisory lock on `path` (created if missing).
    /// Throws `StorageError.lockedByAnotherWriter(path:)` at once if another holder has it.
    /// The default opens a ``LockFile`` and tries it once; unlocking closes it.
    func lock(_ path: String) throws(StorageError) -> any FileLock
    /// A stable identity of the file at `path` (device and inode on POSIX), used to refuse a
    /// second writer on the same store within one process.
    func identity(of path: String) throws(StorageError) -> FileIdentity
    /// Calls `onChange` (on a background thread) soon after entries of `directory` are
    /// created, renamed or written, and at least every `pollInterval` where the platform
    /// cannot notify. Spurious calls are allowed; missed changes are not.
    func watch(
        _ directory: String, pollInterval: Duration,
        onChange: @escaping @Sendable () -> Void
    ) throws(StorageError) -> any FileWatch
}

/// An open file. All offsets are absolute; there is no file position.
public protocol StorageFile: AnyObject, Sendable {
    /// The path the file was opened at.
    var path: String { get }
    /// Reads up to `count` bytes at `offset`; returns fewer only at end of file.
    func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8]
    /// Writes all of `bytes` at `offset` (short writes are retried until done or failed).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError)
    /// Flushes the file's data to stable storage. A failure poisons the handle: every later
    /// call on it throws, because the kernel may have dropped the unsynced pages.
    func sync() throws(StorageError)
    /// Flushes the file's data, and only the metadata needed to read it back (its length),
    /// to stable storage: `fdatasync`, the one sync of a version 2 commit. Poisons the
    /// handle on failure, as ``sync()`` does. File systems that do not tell the two apart
    /// get ``sync()`` (the default).
    func syncData() throws(StorageError)
    /// Sets the file's length.
    func truncate(to length: UInt64) throws(StorageError)
    /// The file's current length.
    func size() throws(StorageError) -> UInt64
    /// Closes the handle; later calls throw. Closing twice is harmless.
    func close()
    /// The identity of the open file (device and inode on POSIX). Compared with
    /// ``FileSystem/identity(of:)``, it tells whether a path still names this file or was
    /// replaced (renamed over, or removed and created again) since it was opened.
    func identity() throws(StorageError) -> FileIdentity
}

/// A held advisory lock; released by ``unlock()`` or when the holder process exits.
public protocol FileLock: AnyObject, Sendable {
    /// Releases the lock. Unlocking twice is harmless.
    func unlock()
}

/// How ``FileSystem/open(_:mode:)`` opens a file.
public enum FileOpenMode: Sendable, Equatable {
    /// Read only; the file must exist.
    case readOnly
    /// Read and write; the file must exist.
    case readWrite
    /// Read and write; created empty if missing.
    case create
    /// Read and write; truncated to zero length, created if missing.
    case truncate
    /// Read and write; created empty, and the open fails with `EEXIST`
    /// (`SystemError.exists`) if anything is at the path already (POSIX `O_CREAT|O_EXCL`):
    /// the caller knows no other opener shares the file.
    case createNew
}

/// The kind of a directory entry.
public enum FileItemKind: Sendable, Equatable {
    /// A regular file.
    case file
    /// A directory.
    case directory
}

/// Device and inode of a file: equal identities are the same file.
public struct FileIdentity: Hashable, Sendable {
    /// The device the file is on.
    public var device: UInt64
    /// The file's inode on that device.
    public var inode: UInt64
    /// The identity of inode `inode` on `device`.
    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}

extension StorageFile {
    /// ``sync()``: as durable, and all a file system without `fdatasync` can do.
    public func syncData() throws(StorageError) { try sync() }

    /// Writes all of `bytes` at `offset`.
    public func write(_ bytes: [UInt8], at offset: UInt64) throws(StorageError) {
        // Array.withUnsafeBytes rethrows untyped errors; carry the typed one out by hand.
        let failure: StorageError? = bytes.withUnsafeBytes { buffer in
            do throws(StorageError) { try write(buffer, at: offset); return nil } catch { return error }
        }
        if let failure { throw failure }
    }

    /// Reads the whole file.
    public func readAll() throws(StorageError) -> [UInt8] {
        let length = try size()
        // Clamped, not converted: on a 32-bit platform a file over 2 GB must not trap (the
        // files read whole are small; a longer one then fails to decode).
        return try read(at: 0, count: Int(clamping: length))
    }
}

extension FileSystem {
    /// The whole file at `path` (for the small files read whole: info, root).
    func readAll(at path: String) throws(StorageError) -> [UInt8] {
        let file = try open(path, mode: .readOnly)
        defer { file.close() }
        return try file.readAll()
    }

    /// Writes `bytes` to `path` durably and atomically: write a temporary file, fsync it,
    /// rename it over `path`, fsync the directory. After this returns, a crash leaves the
    /// new contents; before the rename, a crash leaves the old ones.
    /// `beforeRename` and `afterRename` run at the named crash points.
    func replaceAtomically(
        _ path: String, with bytes: [UInt8], temporaryPath: String,
        crashPoints: (beforeRename: CrashPoint, afterRename: CrashPoint)? = nil
    )
        throws(StorageError)
    {
        let file = try open(temporaryPath, mode: .truncate)
        defer { file.close() }
        try file.write(bytes, at: 0)
        try file.sync()
        if let crashPoints { crashPoints.beforeRename.reach() }
        try rename(temporaryPath, to: path)
        if let crashPoints { crashPoints.afterRename.reach() }
        try syncDirectory(StoragePath.parent(of: path))
    }
}

/// Small helpers for `/`-separated paths, so the engine never depends on Foundation's URL
/// handling for file names it defines itself.
public enum StoragePath {
    /// `base` and `name` joined with one `/`.
    public static func join(_ base: String, _ name: String) -> String {
        if base.hasSuffix("/") { return base + name }
        return base + "/" + name
    }

    /// The directory that contains `path`.
    public static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// The last component of `path`.
    public static func lastComponent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}
