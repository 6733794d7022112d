#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// The real file system, through POSIX calls. This is the only place the engine touches the
/// operating system's file API; ``FileSystem`` documents the contract.
///
/// - Every call that can return `EINTR` is retried.
/// - Writes loop until every byte is written (short writes happen on signals and some file
///   systems) or a real error occurs.
/// - `sync()` and `syncDirectory(_:)` use `F_FULLFSYNC` on Apple platforms (plain `fsync`
///   there does not flush the drive's cache) and `fsync` elsewhere; a failed sync poisons
///   the handle.
/// - Every descriptor is opened close-on-exec, so a child process never inherits a lock.
public struct POSIXFileSystem: FileSystem {
    /// The real file system.
    public init() {}

    public func open(_ path: String, mode: FileOpenMode) throws(StorageError) -> any StorageFile {
        var flags: Int32 = O_CLOEXEC
        switch mode {
        case .readOnly: flags |= O_RDONLY
        case .readWrite: flags |= O_RDWR
        case .create: flags |= O_RDWR | O_CREAT
        case .truncate: flags |= O_RDWR | O_CREAT | O_TRUNC
        case .createNew: flags |= O_RDWR | O_CREAT | O_EXCL
        }
        let fd = try POSIXCall.retrying("open", path) { Glibc_open(path, flags, 0o644) }
        return POSIXFile(path: path, descriptor: fd)
    }

    public func rename(_ source: String, to destination: String) throws(StorageError) {
        _ = try POSIXCall.retrying("rename", source) { Int32(Glibc_rename(source, destination)) }
    }

    public func remove(_ path: String) throws(StorageError) {
        _ = try POSIXCall.retrying("unlink", path) { unlink(path) }
    }

    /// Removes the directory at `path` if it is empty (`rmdir`); does nothing otherwise.
    func removeEmptyDirectory(_ path: String) {
        _ = rmdir(path)
    }

    public func syncDirectory(_ path: String) throws(StorageError) {
        let fd = try POSIXCall.retrying("open directory", path) { Glibc_open(path, O_RDONLY | O_CLOEXEC, 0) }
        defer { _ = Glibc_close(fd) }
        // A directory's entries need the drive's cache flushed as much as a file's data.
        _ = try POSIXCall.retrying("fsync directory", path) { POSIXCall.fullSync(fd) }
    }

    public func createDirectory(_ path: String) throws(StorageError) {
        while mkdir(path, 0o755) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == EEXIST, itemKind(at: path) == .directory { return }
            throw .io(operation: "mkdir", path: path, code: code)
        }
    }

    public func contentsOfDirectory(_ path: String) throws(StorageError) -> [String] {
        guard let directory = opendir(path) else { throw .io(operation: "opendir", path: path, code: errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                String(cString: UnsafeRawPointer(pointer).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    public func itemKind(at path: String) -> FileItemKind? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFREG: return .file
        default: return nil
        }
    }

    public func openLockFile(_ path: String) throws(StorageError) -> any LockFile {
        let fd = try POSIXCall.retrying("open lock file", path) {
            Glibc_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        }
        return POSIXLockFile(path: path, descriptor: fd)
    }

    public func identity(of path: String) throws(StorageError) -> FileIdentity {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .io(operation: "stat", path: path, code: errno) }
        return FileIdentity(status: info)
    }
}

extension FileIdentity {
    /// The device and inode `stat` or `fstat` reported.
    init(status info: stat) {
        self.init(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino))
    }
}

/// An open POSIX file descriptor. Thread-safe: `pread`/`pwrite` take explicit offsets, and
/// the descriptor cannot be closed while a call uses it: each operation counts itself in
/// under the lock, and ``close()`` during an operation only marks the handle closed, the
/// last operation out closes the descriptor. (Copying the descriptor and closing it
/// meanwhile would let a racing read use a number the process has reused for another file.)
final class POSIXFile: StorageFile {
    let path: String
    private struct State {
        var descriptor: Int32
        /// Set when a sync failed: writes and syncs on this handle throw from then on.
        var poisoned: String?
        /// Operations using `descriptor` right now.
        var users = 0
        /// close() was called: no new operation starts; the last user closes the descriptor.
        var closing = false
    }
    private let state: Mutex<State>

    init(path: String, descriptor: Int32) {
        self.path = path
        self.state = Mutex(State(descriptor: descriptor, poisoned: nil))
    }

    deinit { close() }

    /// Runs `body` with the descriptor, which stays open until `body` returns.
    private func withDescriptor<R>(
        forWriting: Bool, _ operation: String,
        _ body: (Int32) throws(StorageError) -> R
    ) throws(StorageError) -> R {
        let fd = try state.withLock { (state) throws(StorageError) -> Int32 in
            if state.descriptor < 0 || state.closing { throw .io(operation: operation, path: path, code: EBADF) }
            if forWriting, let cause = state.poisoned { throw .needsReopen(path: path, cause: cause) }
            state.users += 1
            return state.descriptor
        }
        defer {
            let last = state.withLock { state -> Int32 in
                state.users -= 1
                guard state.closing, state.users == 0, state.descriptor >= 0 else { return -1 }
                defer { state.descriptor = -1 }
                return state.descriptor
            }
            if last >= 0 { _ = Glibc_close(last) }
        }
        return try body(fd)
    }

    func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
        try withDescriptor(forWriting: false, "pread") { (fd) throws(StorageError) -> [UInt8] in
            try read(fd, at: offset, count: count)
        }
    }

    private func read(_ fd: Int32, at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
        // No file extends past off_t's range: reading there finds the end of the file. (A
        // damaged address can hold any offset; converting it to off_t must not trap.)
        guard offset < UInt64(Int64.max) else { return [] }
        let count = Int(min(UInt64(count), UInt64(Int64.max) - offset))
        if count == 0 { return [] }
        var failure: Int32 = 0
        // Uninitialised, not zero-filled: the read fills it, and what it does not (the end of
        // the file) is cut off. (Zero-filling costs more instructions than the read's copy.)
        let result = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let n = pread(fd, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n > 0 { done += n; continue }
                if n == 0 { break }  // end of file
                if errno == EINTR { continue }
                failure = errno
                break
            }
            initialized = done
        }
        if failure != 0 { throw .io(operation: "pread", path: path, code: failure) }
        return result
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        try withDescriptor(forWriting: true, "pwrite") { (fd) throws(StorageError) in try write(fd, bytes, at: offset) }
    }

    private func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        guard offset <= UInt64(Int64.max) - UInt64(bytes.count) else {
            throw .io(operation: "pwrite", path: path, code: EFBIG)
        }
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n > 0 { done += n; continue }
            if n < 0 && errno == EINTR { continue }
            // A zero-byte write for a non-empty request makes no progress: report it as EIO.
            throw .io(operation: "pwrite", path: path, code: n == 0 ? EIO : errno)
        }
    }

    func sync() throws(StorageError) {
        try withDescriptor(forWriting: true, "fsync") { (fd) throws(StorageError) in
            try sync(fd, call: POSIXCall.fullSync)
        }
    }

    func syncData() throws(StorageError) {
        try withDescriptor(forWriting: true, "fdatasync") { (fd) throws(StorageError) in
            try sync(fd, call: POSIXCall.dataSync)
        }
    }

    private func sync(_ fd: Int32, call: (Int32) -> Int32) throws(StorageError) {
        while true {
            let result = call(fd)
            if result == 0 { return }
            let code = errno
            if code == EINTR { continue }
            // Never retry a failed fsync: after EIO the kernel may mark the dirty pages clean,
            // so a second fsync can succeed without the data being on disk (the PostgreSQL
            // "fsyncgate" lesson). The handle is unusable for writing from now on.
            let cause = "fsync failed: \(SystemError.message(code)) (errno \(code))"
            state.withLock { $0.poisoned = cause }
            throw .io(operation: "fsync", path: path, code: code)
        }
    }

    func truncate(to length: UInt64) throws(StorageError) {
        try withDescriptor(forWriting: true, "ftruncate") { (fd) throws(StorageError) in
            _ = try POSIXCall.retrying("ftruncate", path) { ftruncate(fd, off_t(length)) }
        }
    }

    func size() throws(StorageError) -> UInt64 {
        try withDescriptor(forWriting: false, "fstat") { (fd) throws(StorageError) -> UInt64 in
            var info = stat()
            _ = try POSIXCall.retrying("fstat", path) { fstat(fd, &info) }
            return UInt64(info.st_size)
        }
    }

    func identity() throws(StorageError) -> FileIdentity {
        try withDescriptor(forWriting: false, "fstat") { (fd) throws(StorageError) -> FileIdentity in
            var info = stat()
            _ = try POSIXCall.retrying("fstat", path) { fstat(fd, &info) }
            return FileIdentity(status: info)
        }
    }

    /// Closes the descriptor now, or, if operations are using it, when the last one ends;
    /// operations that start after this fail with `EBADF`.
    func close() {
        let fd = state.withLock { state -> Int32 in
            state.closing = true
            guard state.users == 0 else { return -1 }
            defer { state.descriptor = -1 }
            return state.descriptor
        }
        if fd >= 0 { _ = Glibc_close(fd) }
    }
}

/// Retry-on-EINTR wrapper for calls that return -1 and set `errno`.
enum POSIXCall {
    /// Makes `fd`'s data and metadata durable: `F_FULLFSYNC` on Apple platforms (plain
    /// `fsync` there leaves them in the drive's cache; some file systems refuse it, then
    /// `fsync`), `fsync` elsewhere. Returns the call's result; `errno` says why on failure.
    static func fullSync(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
        let result = fcntl(fd, F_FULLFSYNC)
        if result != 0 && (errno == ENOTSUP || errno == EINVAL) { return fsync(fd) }
        return result
        #else
        return fsync(fd)
        #endif
    }

    /// Makes `fd`'s data durable, with the metadata needed to read it (its length) but
    /// not its times: `fdatasync` on Linux; `F_FULLFSYNC` on Apple platforms, whose
    /// `fdatasync` leaves data in the drive's cache.
    static func dataSync(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
        return fullSync(fd)
        #else
        return fdatasync(fd)
        #endif
    }

    static func retrying(_ operation: String, _ path: String, _ call: () -> Int32) throws(StorageError) -> Int32 {
        while true {
            let result = call()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw .io(operation: operation, path: path, code: code)
        }
    }
}

// Unambiguous names for the libc functions whose Swift names collide with our methods.
// swift-format-ignore: AlwaysUseLowerCamelCase
@inline(__always) private func Glibc_open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Darwin)
    return Darwin.open(path, flags, mode)
    #elseif canImport(Glibc)
    return Glibc.open(path, flags, mode)
    #else
    return Musl.open(path, flags, mode)
    #endif
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@inline(__always) func Glibc_close(_ fd: Int32) -> Int32 {
    #if canImport(Darwin)
    return Darwin.close(fd)
    #elseif canImport(Glibc)
    return Glibc.close(fd)
    #else
    return Musl.close(fd)
    #endif
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@inline(__always) private func Glibc_rename(_ source: String, _ destination: String) -> Int32 {
    #if canImport(Darwin)
    return Darwin.rename(source, destination)
    #elseif canImport(Glibc)
    return Glibc.rename(source, destination)
    #else
    return Musl.rename(source, destination)
    #endif
}
