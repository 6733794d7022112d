#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The three ways a floor makes its writes durable, as the engine does them on each
/// platform.
///
/// On Apple platforms plain `fsync` does not flush the drive's cache, so file syncs use
/// `fcntl(F_FULLFSYNC)` (as `POSIXFileSystem.sync()` does), falling back to `fsync` where
/// the file system refuses it; Darwin has no separate data-only sync, so a data sync is
/// the same full flush there.
enum DiskSync {
    /// A file's data and metadata (size, block map): `fsync`, `F_FULLFSYNC` on Apple.
    /// Returns false (errno set) on failure.
    static func file(_ fd: Int32) -> Bool {
        #if canImport(Darwin)
        return fullFlush(fd)
        #else
        return fsync(fd) == 0
        #endif
    }

    /// A file's data and only the metadata needed to read it back (not its times):
    /// `fdatasync`, `F_FULLFSYNC` on Apple. When the writes overwrote allocated blocks and
    /// did not change the size, Linux writes no metadata for this. Returns false on failure.
    static func data(_ fd: Int32) -> Bool {
        #if canImport(Darwin)
        return fullFlush(fd)
        #else
        return fdatasync(fd) == 0
        #endif
    }

    /// A directory's entries (after a create or rename): plain `fsync` on every platform,
    /// as the engine does today. Returns false on failure.
    static func directory(_ fd: Int32) -> Bool {
        fsync(fd) == 0
    }

    #if canImport(Darwin)
    private static func fullFlush(_ fd: Int32) -> Bool {
        if fcntl(fd, F_FULLFSYNC) == 0 { return true }
        guard errno == ENOTSUP || errno == EINVAL else { return false }
        return fsync(fd) == 0
    }
    #endif
}

extension DiskSync {
    /// What "fsync" and "fdatasync" mean in the rows of this build.
    static var platformNote: String {
        #if canImport(Darwin)
        return
            "Apple platform: every file fsync and fdatasync above is fcntl(F_FULLFSYNC) (fsync where refused); the directory gets a plain fsync"
        #else
        return "Linux: fsync(2) and fdatasync(2) as named"
        #endif
    }
}
