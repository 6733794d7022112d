#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif
import FolioStorage
import Synchronization

/// An in-memory file system that remembers what is durable, so a test can build the images
/// a power cut could leave at any moment (``crashImage(using:mode:)``) and check that the
/// engine recovers from each.
///
/// The model, honoured exactly: **fsynced data survives; unsynced writes may vanish, be
/// reordered, or tear at 512-byte granularity; un-fsynced create/rename/unlink may be
/// undone.** In detail:
///
/// - Each file is an inode with *durable* bytes and a list of *pending* mutations (writes,
///   truncates) made since its last `sync()`. `sync()` on any handle of the inode makes all of
///   them durable. Opening in ``FileOpenMode/truncate`` mode is a pending truncate to zero.
/// - Names form a *durable* namespace plus a list of *pending* namespace operations (create a
///   file, make a directory, rename, unlink) since the directory they change was synced.
///   `syncDirectory(dir)` makes durable every pending operation that changes `dir`'s entries,
///   together with every earlier pending operation that changes a directory one of those
///   touches (so the durable namespace never skips a step the live one took). A rename between
///   directories changes both; syncing either makes it durable. Syncing a new directory does
///   not make its own creation durable: sync its parent for that, as on POSIX. Entries in a
///   directory whose creation is not durable are lost with it.
/// - The live view — what calls return while the process "runs" — applies everything, like
///   an ordinary file system: `rename` replaces atomically, open handles keep reading an
///   unlinked file, lock files behave as `flock` does (see ``LockFile``). A crash image and a
///   file system restored from one hold no lock, as after a real power cut. File data syncs and directory syncs are
///   independent: a synced file whose name is not durable can vanish.
///
/// Every `sync()` and `syncDirectory(_:)` is a numbered sync point (``syncPoints``);
/// ``onSyncPoint`` is told of each just before it takes effect, so an observer that takes
/// images there covers a crash anywhere between the previous sync point and this one.
///
/// It implements ``FileSystem`` fully, so a store can run on it directly. Directories cannot
/// be renamed or removed. No fault is ever injected; stack a ``FaultInjectingFileSystem`` on
/// top for that.
public final class PowerLossFileSystem: FileSystem {
    let state = Mutex(State())
    /// Holders of lock files, by inode number (never reused).
    let locks = SimulatedLocks()
    private let observer = Mutex<(@Sendable (SyncPoint) -> Void)?>(nil)

    /// Creates an empty file system holding only the directory `/`, all durable.
    public init() {}

    /// Creates a file system whose durable and live state are both `image`'s files and
    /// directories, for example to crash again while recovering from a crash image.
    public convenience init(restoring image: MemoryFileSystem) {
        self.init()
        let (files, directories) = image.allPaths()
        state.withLock { state in
            for directory in directories {
                state.live.directories.insert(directory)
            }
            for path in files {
                let inode = state.newInode(PowerLossFileData(durable: image.contents(of: path) ?? []))
                state.live.files[path] = inode.number
            }
            state.durable = state.live
        }
    }

    // MARK: Observation

    /// Called with each sync point just before the sync takes effect (outside the file
    /// system's lock, so it may call ``crashImage(using:mode:)``), on the syncing thread.
    public var onSyncPoint: (@Sendable (SyncPoint) -> Void)? {
        get { observer.withLock { $0 } }
        set { observer.withLock { $0 = newValue } }
    }

    /// How many `sync()` and `syncDirectory(_:)` calls have been made (successful ones only).
    public var syncPoints: Int { state.withLock { $0.syncPoints } }

    /// Pending (unsynced) writes and truncates, over every file that still has a name.
    public var pendingDataOperations: Int {
        state.withLock { $0.inodes.values.reduce(0) { $0 + $1.data.pending.count } }
    }

    /// Bytes carried by pending (unsynced) writes, over every file that still has a name.
    public var pendingWriteBytes: Int {
        state.withLock { $0.inodes.values.reduce(0) { $0 + $1.data.pendingBytes } }
    }

    /// Pending (not directory-synced) creations, renames, unlinks and directory creations.
    public var pendingNamespaceOperations: Int { state.withLock { $0.pendingNames.count } }

    /// The live bytes of the file at `path`, or nil if there is none.
    public func contents(of path: String) -> [UInt8]? {
        let path = TestFilePath.normalize(path)
        return state.withLock { state in state.live.files[path].flatMap { state.inodes[$0]?.data.live } }
    }

    // MARK: FileSystem

    /// Opens a file as ``FileSystem`` says; creating one is a pending namespace operation,
    /// truncating one a pending truncate.
    public func open(_ path: String, mode: FileOpenMode) throws(StorageError) -> any StorageFile {
        let path = TestFilePath.normalize(path)
        let inode = try state.withLock { (state) throws(StorageError) -> PowerLossInode in
            if let number = state.live.files[path], let inode = state.inodes[number] {
                if mode == .createNew { throw .io(operation: "open", path: path, code: SystemError.exists) }
                if mode == .truncate { inode.data.truncate(to: 0) }
                return inode
            }
            if state.live.directories.contains(path) {
                // EEXIST for an exclusive creation, as POSIX checks that first.
                throw .io(operation: "open", path: path, code: mode == .createNew ? SystemError.exists : EISDIR)
            }
            guard mode == .create || mode == .truncate || mode == .createNew,
                state.live.directories.contains(StoragePath.parent(of: path))
            else {
                throw .io(operation: "open", path: path, code: SystemError.notFound)
            }
            return state.create(path)
        }
        return PowerLossFile(fileSystem: self, inode: inode, path: path, writable: mode != .readOnly)
    }

    /// Renames a file (directories cannot be renamed); pending until a directory involved is
    /// synced.
    public func rename(_ source: String, to destination: String) throws(StorageError) {
        let source = TestFilePath.normalize(source), destination = TestFilePath.normalize(destination)
        try state.withLock { (state) throws(StorageError) in
            guard state.live.files[source] != nil else {
                let code = state.live.directories.contains(source) ? EISDIR : SystemError.notFound
                throw .io(operation: "rename", path: source, code: code)
            }
            if state.live.directories.contains(destination) {
                throw .io(operation: "rename", path: destination, code: EISDIR)
            }
            guard state.live.directories.contains(StoragePath.parent(of: destination)) else {
                throw .io(operation: "rename", path: destination, code: SystemError.notFound)
            }
            if source == destination { return }
            state.record(.rename(from: source, to: destination))
        }
    }

    /// Removes a file's name; pending until its directory is synced. Open handles keep
    /// reading the file.
    public func remove(_ path: String) throws(StorageError) {
        let path = TestFilePath.normalize(path)
        try state.withLock { (state) throws(StorageError) in
            guard state.live.files[path] != nil else {
                let code = state.live.directories.contains(path) ? EISDIR : SystemError.notFound
                throw .io(operation: "unlink", path: path, code: code)
            }
            state.record(.unlink(path: path))
        }
    }

    /// A sync point: makes the pending namespace operations on `path`'s entries durable.
    public func syncDirectory(_ path: String) throws(StorageError) {
        let path = TestFilePath.normalize(path)
        let number = try state.withLock { (state) throws(StorageError) -> Int in
            guard state.live.directories.contains(path) else {
                let code = state.live.files[path] != nil ? ENOTDIR : SystemError.notFound
                throw .io(operation: "open directory", path: path, code: code)
            }
            state.syncPoints += 1
            return state.syncPoints
        }
        observer.withLock { $0 }?(SyncPoint(number: number, path: path, kind: .directory))
        state.withLock { $0.makeDurable(directory: path) }
    }

    /// Creates a directory; pending until its parent is synced.
    public func createDirectory(_ path: String) throws(StorageError) {
        let path = TestFilePath.normalize(path)
        try state.withLock { (state) throws(StorageError) in
            if state.live.directories.contains(path) { return }
            if state.live.files[path] != nil { throw .io(operation: "mkdir", path: path, code: SystemError.exists) }
            guard state.live.directories.contains(StoragePath.parent(of: path)) else {
                throw .io(operation: "mkdir", path: path, code: SystemError.notFound)
            }
            state.record(.makeDirectory(path: path))
        }
    }

    /// Names in the live directory, sorted.
    public func contentsOfDirectory(_ path: String) throws(StorageError) -> [String] {
        let path = TestFilePath.normalize(path)
        return try state.withLock { (state) throws(StorageError) -> [String] in
            guard state.live.directories.contains(path) else {
                let code = state.live.files[path] != nil ? ENOTDIR : SystemError.notFound
                throw .io(operation: "opendir", path: path, code: code)
            }
            return state.live.entries(of: path)
        }
    }

    /// What is at `path` in the live view.
    public func itemKind(at path: String) -> FileItemKind? {
        let path = TestFilePath.normalize(path)
        return state.withLock { state in
            if state.live.files[path] != nil { return .file }
            if state.live.directories.contains(path) { return .directory }
            return nil
        }
    }

    /// Opens the lock file at `path`, creating it (a pending creation) if missing. Its lock is
    /// on the inode, and lives only as long as this file system object: an image holds none.
    public func openLockFile(_ path: String) throws(StorageError) -> any LockFile {
        let path = TestFilePath.normalize(path)
        let inode = try state.withLock { (state) throws(StorageError) -> UInt64 in
            if let inode = state.live.files[path] { return inode }
            if state.live.directories.contains(path) {
                throw .io(operation: "open lock file", path: path, code: EISDIR)
            }
            guard state.live.directories.contains(StoragePath.parent(of: path)) else {
                throw .io(operation: "open lock file", path: path, code: SystemError.notFound)
            }
            return state.create(path).number
        }
        return SimulatedLockFile(path: path, file: inode, locks: locks)
    }

    /// The inode number of the live file at `path`, on a device number unique to this
    /// file system.
    public func identity(of path: String) throws(StorageError) -> FileIdentity {
        let path = TestFilePath.normalize(path)
        let inode = try state.withLock { (state) throws(StorageError) -> UInt64 in
            guard let inode = state.live.files[path] else {
                throw .io(operation: "stat", path: path, code: SystemError.notFound)
            }
            return inode
        }
        return FileIdentity(device: device, inode: inode)
    }

    /// The device number of every identity here: unique to this file system object.
    var device: UInt64 { UInt64(UInt(bitPattern: ObjectIdentifier(self).hashValue)) }

    // MARK: For handles

    /// A file-sync point: counts it, tells the observer, then makes the inode's data durable.
    func sync(_ inode: PowerLossInode, path: String) {
        let number = state.withLock { state -> Int in
            state.syncPoints += 1
            return state.syncPoints
        }
        observer.withLock { $0 }?(SyncPoint(number: number, path: path, kind: .file))
        state.withLock { _ in inode.data.sync() }
    }
}
