#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A file system whose files can be mapped shared (``SharedMapping``).
protocol SharedMappingFileSystem {
    /// The first `length` bytes of the file at `path`, mapped read-only; nil if the file is
    /// shorter, cannot be opened, or cannot be mapped.
    func mapShared(_ path: String, length: Int) -> SharedMapping?
    /// The first `length` bytes of the file at `path`, mapped for reading and writing; the
    /// file is created if missing and extended with zeros to `length` if shorter. Nil if it
    /// cannot be opened, extended or mapped.
    func mapSharedWritable(_ path: String, length: Int) -> SharedMapping?
}

/// The first bytes of a file, mapped shared and read-only: a look at them is a memory read,
/// with no system call, and sees another process's `pwrite` to the file once it returned
/// (the mapping and the writes share the operating system's page cache, on Linux and on
/// Apple platforms alike). What a look copies can be torn by a write landing meanwhile.
///
/// Why the mapping does not fault: it covers only bytes the file had when it was mapped, and
/// Folio never shortens the file it maps (a store's root file keeps its length from its
/// creation; it is only ever replaced by a rename, which leaves this mapping on the file it
/// had). Another program that truncated a store's root file while it is open would make a
/// look fault, as truncating SQLite's `-shm` file does to SQLite. On a network file
/// system a page the kernel cannot fetch (a server gone) would fault where a `pread`
/// returns an error, and a mapping need not see other clients' writes: Apple platforms map
/// only files on local volumes (`isLocal`).
// @unchecked Sendable: the mapping lives until deinit. A read-only mapping's loads race only
// with other processes' writes, which a look tolerates; a writable one's stores race loads
// and stores of other processes and threads, which its user makes harmless (TurnRequest).
///
/// A writable mapping (``init(path:length:writable:)``) is for a file no reader of the
/// store's format needs (the `turns` file): its stores race other processes' loads, so
/// what it holds must be a hint whose torn or stale reading is harmless.
final class SharedMapping: @unchecked Sendable {
    private let base: UnsafeMutableRawPointer
    /// The mapped length in bytes.
    let length: Int

    /// Maps `length` bytes of the file at `path`; nil as ``SharedMappingFileSystem/mapShared(_:length:)``,
    /// or, `writable`, as ``SharedMappingFileSystem/mapSharedWritable(_:length:)``.
    init?(path: String, length: Int, writable: Bool = false) {
        guard length > 0 else { return nil }
        let fd = writable ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        // The descriptor is not needed once mapped: the mapping keeps the file.
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, Self.isLocal(fd) else { return nil }
        if Int(status.st_size) < length {
            // Extending only ever adds zeros, so two processes doing it at once agree.
            guard writable, ftruncate(fd, off_t(length)) == 0 else { return nil }
        }
        let protection = writable ? PROT_READ | PROT_WRITE : PROT_READ
        guard let mapped = mmap(nil, length, protection, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            return nil
        }
        base = mapped
        self.length = length
    }

    deinit {
        munmap(base, length)
    }

    /// Whether the open file `fd` is on a local file system (see the type's comment). On
    /// Linux, Glibc's Swift module offers no `statfs` (the file system's type): every file
    /// system counts as local there, and a server's store should live on a local disk.
    private static func isLocal(_ fd: Int32) -> Bool {
        #if canImport(Darwin)
        var info = statfs()
        guard fstatfs(fd, &info) == 0 else { return false }
        return info.f_flags & UInt32(MNT_LOCAL) != 0
        #else
        return true
        #endif
    }

    /// The `T` at `offset`, which must lie within ``length``, loaded unaligned, in the
    /// byte order of the machine.
    @inline(__always)
    func load<T: FixedWidthInteger>(at offset: Int, as type: T.Type) -> T {
        assert(offset >= 0 && offset + MemoryLayout<T>.size <= length, "outside the mapping")
        return base.loadUnaligned(fromByteOffset: offset, as: T.self)
    }

    /// A copy of the `count` bytes at `offset`: what a read of the file would return then,
    /// since the mapping and reads share the page cache (a write racing the copy may tear it,
    /// as it may tear a read).
    func bytes(at offset: Int, count: Int) -> [UInt8] {
        assert(offset >= 0 && count >= 0 && offset + count <= length, "outside the mapping")
        return [UInt8](UnsafeRawBufferPointer(start: base + offset, count: count))
    }

    /// Stores `value` at `offset` (within ``length``, aligned for `T`) in the byte order of
    /// the machine. Only on a writable mapping.
    @inline(__always)
    func store<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        assert(offset >= 0 && offset + MemoryLayout<T>.size <= length, "outside the mapping")
        base.storeBytes(of: value, toByteOffset: offset, as: T.self)
    }

    /// Whether the mapped bytes at `offset` are `bytes`, which must lie within ``length``.
    func holds(_ bytes: [UInt8], at offset: Int) -> Bool {
        assert(offset >= 0 && offset + bytes.count <= length, "outside the mapping")
        return bytes.withUnsafeBytes { memcmp(base + offset, $0.baseAddress!, $0.count) == 0 }
    }
}

extension POSIXFileSystem: SharedMappingFileSystem {
    func mapShared(_ path: String, length: Int) -> SharedMapping? {
        SharedMapping(path: path, length: length)
    }

    func mapSharedWritable(_ path: String, length: Int) -> SharedMapping? {
        SharedMapping(path: path, length: length, writable: true)
    }
}
