import Synchronization

/// A file system held entirely in memory, with POSIX semantics where the engine relies on
/// them: `rename` replaces atomically, `remove` leaves open handles readable, lock files
/// behave as `flock` does (see ``LockFile``), and a directory must exist before files are
/// created in it.
///
/// It backs in-memory stores (the same engine code paths as on disk, minus durability) and
/// is the base of the test file systems. Syncs are no-ops: nothing here survives the process.
public final class MemoryFileSystem: FileSystem {
    /// The bytes of one file; shared by the directory entry and every open handle, so that a
    /// removed file stays readable through handles opened before removal.
    final class Contents: @unchecked Sendable {
        // Guarded by the owning file system's lock.
        var bytes: [UInt8] = []
        let identity: UInt64
        init(identity: UInt64) { self.identity = identity }
    }

    struct State {
        var files: [String: Contents] = [:]
        var directories: Set<String> = ["/"]
        var nextIdentity: UInt64 = 1
    }

    let state = Mutex(State())
    /// Holders of lock files, by file identity.
    let locks = SimulatedLocks()

    /// Creates an empty file system holding only the root directory `/`.
    public init() {}

    public func open(_ path: String, mode: FileOpenMode) throws(StorageError) -> any StorageFile {
        let path = Self.normalize(path)
        let contents: Contents = try state.withLock { (state) throws(StorageError) -> Contents in
            if let existing = state.files[path] {
                if mode == .createNew { throw .io(operation: "open", path: path, code: SystemError.exists) }
                if mode == .truncate { existing.bytes = [] }
                return existing
            }
            if state.directories.contains(path) {
                // EEXIST for an exclusive creation, as POSIX checks that first; EISDIR otherwise.
                throw .io(operation: "open", path: path, code: mode == .createNew ? SystemError.exists : 21)
            }
            guard mode != .readOnly && mode != .readWrite else {
                throw .io(operation: "open", path: path, code: SystemError.notFound)
            }
            guard state.directories.contains(StoragePath.parent(of: path)) else {
                throw .io(operation: "open", path: path, code: SystemError.notFound)
            }
            let contents = Contents(identity: state.nextIdentity)
            state.nextIdentity += 1
            state.files[path] = contents
            return contents
        }
        return MemoryFile(fileSystem: self, contents: contents, path: path, writable: mode != .readOnly)
    }

    public func rename(_ source: String, to destination: String) throws(StorageError) {
        let source = Self.normalize(source), destination = Self.normalize(destination)
        try state.withLock { (state) throws(StorageError) in
            guard let contents = state.files[source] else {
                throw .io(operation: "rename", path: source, code: SystemError.notFound)
            }
            guard state.directories.contains(StoragePath.parent(of: destination)) else {
                throw .io(operation: "rename", path: destination, code: SystemError.notFound)
            }
            state.files[source] = nil
            state.files[destination] = contents
        }
    }

    public func remove(_ path: String) throws(StorageError) {
        let path = Self.normalize(path)
        try state.withLock { (state) throws(StorageError) in
            guard state.files.removeValue(forKey: path) != nil else {
                throw .io(operation: "unlink", path: path, code: SystemError.notFound)
            }
        }
    }

    public func syncDirectory(_ path: String) throws(StorageError) {
        let path = Self.normalize(path)
        try state.withLock { (state) throws(StorageError) in
            guard state.directories.contains(path) else {
                throw .io(operation: "open directory", path: path, code: SystemError.notFound)
            }
        }
    }

    /// Removes the directory at `path` if it is empty (`rmdir`); does nothing otherwise.
    func removeEmptyDirectory(_ path: String) {
        let path = Self.normalize(path)
        state.withLock { state in
            let inside = StoragePath.join(path, "")
            guard state.directories.contains(path),
                !state.files.keys.contains(where: { $0.hasPrefix(inside) }),
                !state.directories.contains(where: { $0.hasPrefix(inside) })
            else { return }
            state.directories.remove(path)
        }
    }

    public func createDirectory(_ path: String) throws(StorageError) {
        let path = Self.normalize(path)
        try state.withLock { (state) throws(StorageError) in
            if state.directories.contains(path) { return }
            if state.files[path] != nil { throw .io(operation: "mkdir", path: path, code: SystemError.exists) }
            guard state.directories.contains(StoragePath.parent(of: path)) else {
                throw .io(operation: "mkdir", path: path, code: SystemError.notFound)
            }
            state.directories.insert(path)
        }
    }

    public func contentsOfDirectory(_ path: String) throws(StorageError) -> [String] {
        let path = Self.normalize(path)
        return try state.withLock { (state) throws(StorageError) -> [String] in
            guard state.directories.contains(path) else {
                throw .io(operation: "opendir", path: path, code: SystemError.notFound)
            }
            var names: [String] = []
            for file in state.files.keys where StoragePath.parent(of: file) == path {
                names.append(StoragePath.lastComponent(of: file))
            }
            for directory in state.directories where directory != path && StoragePath.parent(of: directory) == path {
                names.append(StoragePath.lastComponent(of: directory))
            }
            return names.sorted()
        }
    }

    public func itemKind(at path: String) -> FileItemKind? {
        let path = Self.normalize(path)
        return state.withLock { state in
            if state.files[path] != nil { return .file }
            if state.directories.contains(path) { return .directory }
            return nil
        }
    }

    public func openLockFile(_ path: String) throws(StorageError) -> any LockFile {
        let path = Self.normalize(path)
        let identity = try state.withLock { (state) throws(StorageError) -> UInt64 in
            if let contents = state.files[path] { return contents.identity }
            if state.directories.contains(path) { throw .io(operation: "open lock file", path: path, code: 21) }
            guard state.directories.contains(StoragePath.parent(of: path)) else {
                throw .io(operation: "open lock file", path: path, code: SystemError.notFound)
            }
            let contents = Contents(identity: state.nextIdentity)
            state.nextIdentity += 1
            state.files[path] = contents
            return contents.identity
        }
        return SimulatedLockFile(path: path, file: identity, locks: locks)
    }

    public func identity(of path: String) throws(StorageError) -> FileIdentity {
        let path = Self.normalize(path)
        return try state.withLock { (state) throws(StorageError) -> FileIdentity in
            guard let contents = state.files[path] else {
                throw .io(operation: "stat", path: path, code: SystemError.notFound)
            }
            return FileIdentity(device: device, inode: contents.identity)
        }
    }

    /// The device number of every identity here: unique to this file system object.
    var device: UInt64 { UInt64(UInt(bitPattern: ObjectIdentifier(self).hashValue)) }

    // MARK: Direct access, for tests and tools

    /// The bytes of the file at `path`, or nil if there is none.
    public func contents(of path: String) -> [UInt8]? {
        let path = Self.normalize(path)
        return state.withLock { $0.files[path]?.bytes }
    }

    /// Replaces the bytes of the file at `path` (creating it if its directory exists).
    public func setContents(_ bytes: [UInt8], of path: String) {
        let path = Self.normalize(path)
        state.withLock { state in
            if let contents = state.files[path] {
                contents.bytes = bytes
            } else {
                let contents = Contents(identity: state.nextIdentity)
                state.nextIdentity += 1
                contents.bytes = bytes
                state.files[path] = contents
                state.directories.insert(StoragePath.parent(of: path))
            }
        }
    }

    /// Every file path and directory path, sorted.
    public func allPaths() -> (files: [String], directories: [String]) {
        state.withLock { (Array($0.files.keys).sorted(), Array($0.directories).sorted()) }
    }

    static func normalize(_ path: String) -> String {
        if path.count > 1 && path.hasSuffix("/") { return String(path.dropLast()) }
        return path
    }
}

/// An open handle on a ``MemoryFileSystem`` file.
final class MemoryFile: StorageFile {
    let path: String
    private let fileSystem: MemoryFileSystem
    private let contents: MemoryFileSystem.Contents
    private let writable: Bool
    private let closed = Atomic<Bool>(false)

    init(fileSystem: MemoryFileSystem, contents: MemoryFileSystem.Contents, path: String, writable: Bool) {
        self.fileSystem = fileSystem
        self.contents = contents
        self.path = path
        self.writable = writable
    }

    private func check(_ operation: String, writing: Bool) throws(StorageError) {
        if closed.load(ordering: .acquiring) {
            throw .io(operation: operation, path: path, code: SystemError.badDescriptor)
        }
        if writing && !writable { throw .io(operation: operation, path: path, code: SystemError.badDescriptor) }
    }

    func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
        try check("pread", writing: false)
        return fileSystem.state.withLock { _ in
            let bytes = contents.bytes
            guard offset < UInt64(bytes.count), count > 0 else { return [] }
            let start = Int(offset)
            let end = min(bytes.count, start + count)
            return Array(bytes[start..<end])
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        try check("pwrite", writing: true)
        // Like pwrite(2), writing nothing changes nothing (in particular, does not extend the file).
        guard bytes.count > 0 else { return }
        fileSystem.state.withLock { _ in
            let start = Int(offset)
            let end = start + bytes.count
            if contents.bytes.count < end {
                // An array, not repeatElement: appending an array is one memset/memcpy, even in
                // debug builds (the generic path costs more than the rest of a commit there).
                contents.bytes.append(contentsOf: [UInt8](repeating: 0, count: end - contents.bytes.count))
            }
            contents.bytes.withUnsafeMutableBytes { target in
                guard bytes.count > 0 else { return }
                (target.baseAddress! + start).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            }
        }
    }

    func sync() throws(StorageError) {
        try check("fsync", writing: true)
    }

    func truncate(to length: UInt64) throws(StorageError) {
        try check("ftruncate", writing: true)
        fileSystem.state.withLock { _ in
            let length = Int(length)
            if contents.bytes.count > length {
                contents.bytes.removeLast(contents.bytes.count - length)
            } else if contents.bytes.count < length {
                contents.bytes.append(contentsOf: [UInt8](repeating: 0, count: length - contents.bytes.count))
            }
        }
    }

    func size() throws(StorageError) -> UInt64 {
        try check("fstat", writing: false)
        return fileSystem.state.withLock { _ in UInt64(contents.bytes.count) }
    }

    func identity() throws(StorageError) -> FileIdentity {
        try check("fstat", writing: false)
        return FileIdentity(device: fileSystem.device, inode: contents.identity)
    }

    func close() { closed.store(true, ordering: .releasing) }
}
