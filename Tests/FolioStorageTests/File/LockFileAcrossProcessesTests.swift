import Foundation
import Testing
import FolioStorage
import FolioTestSupport

/// ``POSIXFileSystem``'s lock files against another process (`folio-torture try-lock` and
/// `hold-lock-file`): the lock is exclusive across processes, refused at once, released by
/// unlock, close and the holder's death, and it is the lock the store's writer lock takes.
@Suite struct LockFileAcrossProcessesTests {
    @Test func anotherProcessSeesTheLockUntilItIsReleased() throws {
        let tool = try ProjectExecutable.path("folio-torture")
        let directory = TemporaryDirectory("folio-lockfile")
        defer { directory.remove() }
        let path = directory.child("lock")
        let handle = try POSIXFileSystem().openLockFile(path)
        defer { handle.close() }
        #expect(try tryLockInChild(tool, path) == "locked", "free before anyone locks it")
        #expect(try handle.tryLock())
        #expect(try tryLockInChild(tool, path) == "busy")
        handle.unlock()
        #expect(try tryLockInChild(tool, path) == "locked", "unlock releases it, the file still open")
        #expect(try handle.tryLock())
        #expect(try tryLockInChild(tool, path) == "busy")
        handle.close()
        #expect(try tryLockInChild(tool, path) == "locked", "close releases it")
    }

    @Test func aKilledHoldersLockIsFreeAtOnce() throws {
        let tool = try ProjectExecutable.path("folio-torture")
        let directory = TemporaryDirectory("folio-lockfile")
        defer { directory.remove() }
        let path = directory.child("lock")
        let holder = try ChildProcess(tool, ["hold-lock-file", path])
        try holder.waitForLine { $0 == "held" || $0 == "busy" }
        #expect(holder.output == ["held"])
        let handle = try POSIXFileSystem().openLockFile(path)
        defer { handle.close() }
        #expect(try !handle.tryLock(), "refused at once, not waited for")
        #expect(throws: StorageError.lockedByAnotherWriter(path: path)) { _ = try POSIXFileSystem().lock(path) }
        holder.kill()
        #expect(try holder.wait() == -SIGKILL)
        #expect(try handle.tryLock(), "the kernel frees a dead holder's lock")
        let contender = try ChildProcess(tool, ["hold-lock-file", path])
        try contender.waitForLine { $0 == "held" || $0 == "busy" }
        #expect(contender.output == ["busy"], "and this process holds it now")
        #expect(try contender.wait() == 0)
    }

    @Test func aHolderThatUnlocksAndExitsLeavesItFree() throws {
        let tool = try ProjectExecutable.path("folio-torture")
        let directory = TemporaryDirectory("folio-lockfile")
        defer { directory.remove() }
        let path = directory.child("lock")
        let holder = try ChildProcess(tool, ["hold-lock-file", path])
        try holder.waitForLine { $0 == "held" || $0 == "busy" }
        let handle = try POSIXFileSystem().openLockFile(path)
        defer { handle.close() }
        #expect(try !handle.tryLock())
        holder.closeInput()
        try holder.waitForLine { $0 == "released" }
        #expect(try holder.wait() == 0)
        #expect(try handle.tryLock())
    }

    @Test func theStoresWriterLockIsTheLockFilesLock() throws {
        // An open writer (through lock(_:)) and a lock file exclude each other across
        // processes, so a build that locks per open and one that locks per use share a store.
        let tool = try ProjectExecutable.path("folio-torture")
        let directory = TemporaryDirectory("folio-lockfile")
        defer { directory.remove() }
        let path = directory.child("store")
        try Store.open(at: path, options: testOptions()).close()
        let writer = try ChildProcess(tool, ["hold-writer", path])
        try writer.waitForLine { $0 == "ready" }
        let handle = try POSIXFileSystem().openLockFile("\(path)/lock")
        defer { handle.close() }
        #expect(try !handle.tryLock())
        writer.closeInput()
        #expect(try writer.wait() == 0)
        #expect(try handle.tryLock())
        let contender = try ChildProcess(tool, ["try-writer", path])
        let line = try contender.waitForLine { $0.hasPrefix("locked") || $0 == "opened" }
        #expect(line.hasPrefix("locked"), "a writer cannot open while a lock file holds the lock")
        #expect(try contender.wait() == 0)
    }

    /// What `folio-torture try-lock path` printed: "locked" or "busy".
    private func tryLockInChild(_ tool: String, _ path: String) throws -> String {
        let child = try ChildProcess(tool, ["try-lock", path])
        let line = try child.waitForLine { $0 == "locked" || $0 == "busy" }
        #expect(try child.wait() == 0)
        return line
    }
}
