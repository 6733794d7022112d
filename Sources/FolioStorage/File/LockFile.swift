import Synchronization

/// An open lock file: an exclusive advisory lock that can be taken and released many times
/// without reopening the file.
///
/// The model is BSD `flock`: the lock belongs to this open (not to the process or the
/// thread), so two ``LockFile`` handles on the same file exclude each other even in one
/// process; it is released by ``unlock()``, by ``close()``, or when the process exits or is
/// killed; and it locks the file, not its name (a handle on a file that was replaced holds
/// no lock on the new one). No call ever waits for another holder.
public protocol LockFile: AnyObject, Sendable {
    /// The path the lock file was opened at.
    var path: String { get }
    /// Takes the exclusive lock if no other holder has it: true if this handle holds it now
    /// (also when it held it already), false at once if another holder does. Throws on a
    /// closed handle or a system error, never because of another holder.
    func tryLock() throws(StorageError) -> Bool
    /// Releases the lock if this handle holds it; harmless otherwise, and twice.
    func unlock()
    /// Releases the lock and closes the file; later ``tryLock()`` calls throw. Closing twice
    /// is harmless.
    func close()
}

extension FileSystem {
    /// Opens the lock file and tries it once: the lock, or
    /// `StorageError.lockedByAnotherWriter(path:)` at once if another holder has it. The
    /// returned lock's ``FileLock/unlock()`` closes the lock file.
    public func lock(_ path: String) throws(StorageError) -> any FileLock {
        let file = try openLockFile(path)
        let locked: Bool
        do { locked = try file.tryLock() } catch {
            file.close()
            throw error
        }
        guard locked else {
            file.close()
            throw .lockedByAnotherWriter(path: path)
        }
        return HeldLockFile(file)
    }
}

/// The lock ``FileSystem/lock(_:)`` returns: a locked ``LockFile`` that unlocking closes,
/// so a lock taken for an open store does not keep a descriptor after its release.
final class HeldLockFile: FileLock {
    private let file: any LockFile

    init(_ file: any LockFile) { self.file = file }

    deinit { file.close() }

    func unlock() { file.close() }
}

/// Who holds which file's lock, for the file systems that simulate `flock` in memory.
///
/// Files are named by a number that identifies the file, not its path (an inode), and
/// holders by the identity of their handle, which is the unit `flock` locks for.
package final class SimulatedLocks: Sendable {
    private let holders = Mutex<[UInt64: ObjectIdentifier]>([:])

    /// No file is locked.
    package init() {}

    /// Locks `file` for `holder` unless another holder has it; true if `holder` has it now.
    package func tryLock(_ file: UInt64, for holder: ObjectIdentifier) -> Bool {
        holders.withLock { holders in
            if let current = holders[file], current != holder { return false }
            holders[file] = holder
            return true
        }
    }

    /// Releases `file` if `holder` has it.
    package func unlock(_ file: UInt64, for holder: ObjectIdentifier) {
        holders.withLock { holders in
            if holders[file] == holder { holders[file] = nil }
        }
    }
}

/// A ``LockFile`` of a file system that simulates `flock` in memory (``MemoryFileSystem``,
/// the test file systems): the lock is on `file`, held in `locks`, and released by
/// ``unlock()``, ``close()`` or deinit, as a process exit releases a real one.
package final class SimulatedLockFile: LockFile {
    /// The path the lock file was opened at.
    package let path: String
    private let file: UInt64
    private let locks: SimulatedLocks
    private let closed = Mutex(false)

    /// A handle on `file` (its identity number), opened at `path`, whose lock lives in `locks`.
    package init(path: String, file: UInt64, locks: SimulatedLocks) {
        self.path = path
        self.file = file
        self.locks = locks
    }

    deinit { close() }

    /// Takes the lock unless another handle has it; throws `EBADF` once closed.
    package func tryLock() throws(StorageError) -> Bool {
        try closed.withLock { (closed) throws(StorageError) -> Bool in
            if closed { throw .io(operation: "flock", path: path, code: SystemError.badDescriptor) }
            return locks.tryLock(file, for: ObjectIdentifier(self))
        }
    }

    /// Releases the lock if this handle has it.
    package func unlock() { locks.unlock(file, for: ObjectIdentifier(self)) }

    /// Releases the lock; later ``tryLock()`` calls throw.
    package func close() {
        closed.withLock { closed in
            closed = true
            locks.unlock(file, for: ObjectIdentifier(self))
        }
    }
}
