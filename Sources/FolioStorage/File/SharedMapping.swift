#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A file system whose files can be mapped shared and read-only (``SharedMapping``).
protocol SharedMappingFileSystem {
    /// The first `length` bytes of the file at `path`, mapped; nil if the file is shorter,
    /// cannot be opened, or cannot be mapped.
    func mapShared(_ path: String, length: Int) -> SharedMapping?
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
// @unchecked Sendable: the mapping is immutable from this process's side and lives until
// deinit; reads of it race only with other processes' writes, which a look tolerates.
final class SharedMapping: @unchecked Sendable {
    private let base: UnsafeRawPointer
    /// The mapped length in bytes.
    let length: Int

    /// Maps `length` bytes of the file at `path`; nil as ``SharedMappingFileSystem/mapShared(_:length:)``.
    init?(path: String, length: Int) {
        guard length > 0 else { return nil }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        // The descriptor is not needed once mapped: the mapping keeps the file.
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, Int(status.st_size) >= length, Self.isLocal(fd) else { return nil }
        guard let mapped = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            return nil
        }
        base = UnsafeRawPointer(mapped)
        self.length = length
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: base), length)
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
}
