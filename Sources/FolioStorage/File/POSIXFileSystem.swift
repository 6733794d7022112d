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
/// - `sync()` uses `F_FULLFSYNC` on Apple platforms (plain `fsync` there does not flush the
///   drive's cache) and `fsync` elsewhere; a failed sync poisons the handle.
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

    public func syncDirectory(_ path: String) throws(StorageError) {
        let fd = try POSIXCall.retrying("open directory", path) { Glibc_open(path, O_RDONLY | O_CLOEXEC, 0) }
        defer { _ = Glibc_close(fd) }
        _ = try POSIXCall.retrying("fsync directory", path) { fsync(fd) }
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

    public func lock(_ path: String) throws(StorageError) -> any FileLock {
        let fd = try POSIXCall.retrying("open lock file", path) { Glibc_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            _ = Glibc_close(fd)
            if code == EWOULDBLOCK || code == EAGAIN { throw .lockedByAnotherWriter(path: path) }
            throw .io(operation: "flock", path: path, code: code)
        }
        return POSIXLock(descriptor: fd)
    }

    public func identity(of path: String) throws(StorageError) -> FileIdentity {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .io(operation: "stat", path: path, code: errno) }
        return FileIdentity(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino))
    }
}

/// An open POSIX file descriptor. Thread-safe: `pread`/`pwrite` take explicit offsets, and the
/// descriptor itself is only read under the lock.
final class POSIXFile: StorageFile {
    let path: String
    private struct State {
        var descriptor: Int32
        /// Set when a sync failed: writes and syncs on this handle throw from then on.
        var poisoned: String?
    }
    private let state: Mutex<State>

    init(path: String, descriptor: Int32) {
        self.path = path
        self.state = Mutex(State(descriptor: descriptor, poisoned: nil))
    }

    deinit { close() }

    private func descriptor(forWriting: Bool, _ operation: String) throws(StorageError) -> Int32 {
        let snapshot = state.withLock { ($0.descriptor, $0.poisoned) }
        if snapshot.0 < 0 { throw .io(operation: operation, path: path, code: EBADF) }
        if forWriting, let cause = snapshot.1 { throw .needsReopen(path: path, cause: cause) }
        return snapshot.0
    }

    func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
        let fd = try descriptor(forWriting: false, "pread")
        // No file extends past off_t's range: reading there finds the end of the file. (A
        // damaged address can hold any offset; converting it to off_t must not trap.)
        guard offset < UInt64(Int64.max) else { return [] }
        let count = Int(min(UInt64(count), UInt64(Int64.max) - offset))
        if count == 0 { return [] }
        var result = [UInt8](repeating: 0, count: count)
        var done = 0
        var failure: Int32 = 0
        result.withUnsafeMutableBytes { buffer in
            while done < count {
                let n = pread(fd, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n > 0 { done += n; continue }
                if n == 0 { break }  // end of file
                if errno == EINTR { continue }
                failure = errno
                break
            }
        }
        if failure != 0 { throw .io(operation: "pread", path: path, code: failure) }
        if done < count { result.removeLast(count - done) }
        return result
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        let fd = try descriptor(forWriting: true, "pwrite")
        guard offset <= UInt64(Int64.max) - UInt64(bytes.count) else { throw .io(operation: "pwrite", path: path, code: EFBIG) }
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
        let fd = try descriptor(forWriting: true, "fsync")
        while true {
            #if canImport(Darwin)
            // F_FULLFSYNC asks the drive to flush its cache; some file systems refuse it.
            var result = fcntl(fd, F_FULLFSYNC)
            if result != 0 && (errno == ENOTSUP || errno == EINVAL) { result = fsync(fd) }
            #else
            let result = fsync(fd)
            #endif
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
        let fd = try descriptor(forWriting: true, "ftruncate")
        _ = try POSIXCall.retrying("ftruncate", path) { ftruncate(fd, off_t(length)) }
    }

    func size() throws(StorageError) -> UInt64 {
        let fd = try descriptor(forWriting: false, "fstat")
        var info = stat()
        _ = try POSIXCall.retrying("fstat", path) { fstat(fd, &info) }
        return UInt64(info.st_size)
    }

    func close() {
        let fd = state.withLock { state -> Int32 in
            let fd = state.descriptor
            state.descriptor = -1
            return fd
        }
        if fd >= 0 { _ = Glibc_close(fd) }
    }
}

/// A held `flock` lock. The descriptor is close-on-exec and closing it releases the lock.
final class POSIXLock: FileLock {
    private let descriptor: Mutex<Int32>

    init(descriptor: Int32) { self.descriptor = Mutex(descriptor) }

    deinit { unlock() }

    func unlock() {
        let fd = descriptor.withLock { fd -> Int32 in
            let old = fd
            fd = -1
            return old
        }
        if fd >= 0 {
            _ = flock(fd, LOCK_UN)
            _ = Glibc_close(fd)
        }
    }
}

/// Retry-on-EINTR wrapper for calls that return -1 and set `errno`.
enum POSIXCall {
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
@inline(__always) private func Glibc_open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Darwin)
    return Darwin.open(path, flags, mode)
    #elseif canImport(Glibc)
    return Glibc.open(path, flags, mode)
    #else
    return Musl.open(path, flags, mode)
    #endif
}

@inline(__always) private func Glibc_close(_ fd: Int32) -> Int32 {
    #if canImport(Darwin)
    return Darwin.close(fd)
    #elseif canImport(Glibc)
    return Glibc.close(fd)
    #else
    return Musl.close(fd)
    #endif
}

@inline(__always) private func Glibc_rename(_ source: String, _ destination: String) -> Int32 {
    #if canImport(Darwin)
    return Darwin.rename(source, destination)
    #elseif canImport(Glibc)
    return Glibc.rename(source, destination)
    #else
    return Musl.rename(source, destination)
    #endif
}
