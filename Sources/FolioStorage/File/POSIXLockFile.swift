#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// A lock file opened by ``POSIXFileSystem``, locked with `flock(LOCK_EX | LOCK_NB)`.
///
/// The `flock` semantics this relies on, the same on Linux and Apple platforms for local
/// file systems:
/// - The lock belongs to the open file description, not to the process: a second `open` of
///   the same file in the same process is a separate holder, and its `flock` conflicts with
///   ours (unlike `fcntl` record locks, which one process holds once, and which a close of
///   any descriptor on the file would drop). So two handles exclude each other everywhere.
/// - It is released by `LOCK_UN`, at the last close of the description, or when the process
///   exits or is killed: a crashed holder never leaves the lock behind.
/// - The descriptor is close-on-exec, so a child process started with `exec` never shares it.
/// - It locks the inode: a lock file replaced under its name is a different lock.
/// - `LOCK_NB` makes a held lock fail with `EWOULDBLOCK` at once; nothing here ever blocks.
final class POSIXLockFile: LockFile {
    let path: String
    /// The descriptor, -1 once closed. Held while calling `flock`, which never blocks here,
    /// so a close cannot release the number to another file in the middle of a call.
    private let descriptor: Mutex<Int32>

    init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = Mutex(descriptor)
    }

    deinit { close() }

    func tryLock() throws(StorageError) -> Bool {
        try descriptor.withLock { (fd) throws(StorageError) -> Bool in
            if fd < 0 { throw .io(operation: "flock", path: path, code: EBADF) }
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EWOULDBLOCK || code == EAGAIN { return false }
                throw .io(operation: "flock", path: path, code: code)
            }
            return true
        }
    }

    func unlock() {
        descriptor.withLock { fd in
            // Unlocking a descriptor that holds no lock succeeds; on a closed one there is
            // nothing to release.
            if fd >= 0 { _ = flock(fd, LOCK_UN) }
        }
    }

    func close() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            // Closing releases the lock too; unlocking first does so even if the description
            // were shared (it never is: close-on-exec, not duplicated).
            _ = flock(fd, LOCK_UN)
            _ = Glibc_close(fd)
            fd = -1
        }
    }
}
