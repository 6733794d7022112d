import Testing
import FolioStorage
import FolioTestSupport

/// The lock-file contract (``LockFile``) on every implementation of the seam: `flock`'s
/// semantics, which the writer lock relies on. Each handle is a holder of its own; a held
/// lock refuses at once; unlock and close release it; `lock(_:)` is the same lock.
@Suite struct LockFileTests {
    @Test(arguments: SeamKind.allCases)
    func twoHandlesOnOneFileExcludeEachOther(_ kind: SeamKind) throws {
        let seam = kind.make()
        defer { seam.remove() }
        let path = seam.child("lock")
        let first = try seam.fileSystem.openLockFile(path)
        #expect(seam.fileSystem.itemKind(at: path) == .file, "opening creates the lock file")
        let second = try seam.fileSystem.openLockFile(path)
        defer {
            first.close()
            second.close()
        }
        #expect(try first.tryLock())
        #expect(try first.tryLock(), "a holder trying again still holds it")
        #expect(try !second.tryLock(), "another open of the same file is another holder")
        first.unlock()
        first.unlock()  // harmless twice
        #expect(try second.tryLock(), "unlock releases")
        #expect(try !first.tryLock())
        second.unlock()
        #expect(try first.tryLock(), "an unlocked handle can lock again")
    }

    @Test(arguments: SeamKind.allCases)
    func closeReleasesAndLaterTriesThrow(_ kind: SeamKind) throws {
        let seam = kind.make()
        defer { seam.remove() }
        let path = seam.child("lock")
        let holder = try seam.fileSystem.openLockFile(path)
        let waiter = try seam.fileSystem.openLockFile(path)
        defer { waiter.close() }
        #expect(try holder.tryLock())
        #expect(try !waiter.tryLock())
        holder.close()
        holder.close()  // harmless twice
        holder.unlock()  // and unlocking a closed handle too
        #expect(try waiter.tryLock(), "close releases")
        #expect(throws: StorageError.self) { try holder.tryLock() }
    }

    @Test(arguments: SeamKind.allCases)
    func droppedHandleReleases(_ kind: SeamKind) throws {
        let seam = kind.make()
        defer { seam.remove() }
        let path = seam.child("lock")
        do {
            let holder = try seam.fileSystem.openLockFile(path)
            #expect(try holder.tryLock())
        }
        let next = try seam.fileSystem.openLockFile(path)
        defer { next.close() }
        #expect(try next.tryLock(), "a handle released when dropped, as a process exit does")
    }

    @Test(arguments: SeamKind.allCases)
    func lockConvenienceIsTheSameLock(_ kind: SeamKind) throws {
        let seam = kind.make()
        defer { seam.remove() }
        let path = seam.child("lock")
        let handle = try seam.fileSystem.openLockFile(path)
        defer { handle.close() }
        #expect(try handle.tryLock())
        #expect(throws: StorageError.lockedByAnotherWriter(path: path)) { _ = try seam.fileSystem.lock(path) }
        handle.unlock()
        let held = try seam.fileSystem.lock(path)
        #expect(try !handle.tryLock(), "lock(_:) holds the lock a lock file tries")
        #expect(throws: StorageError.lockedByAnotherWriter(path: path)) { _ = try seam.fileSystem.lock(path) }
        held.unlock()
        held.unlock()  // harmless twice
        #expect(try handle.tryLock(), "unlocking what lock(_:) returned releases it")
    }

    @Test(arguments: SeamKind.allCases)
    func openingALockFileNeedsItsDirectory(_ kind: SeamKind) throws {
        let seam = kind.make()
        defer { seam.remove() }
        #expect(throws: StorageError.self) { _ = try seam.fileSystem.openLockFile(seam.child("missing/lock")) }
    }

    @Test func aReplacedLockFileIsAnotherLock() throws {
        // flock locks the file, not its name: the in-memory models must not lock by path.
        for kind in [SeamKind.memory, .powerLoss] {
            let seam = kind.make()
            let path = seam.child("lock")
            let old = try seam.fileSystem.openLockFile(path)
            #expect(try old.tryLock())
            try seam.fileSystem.remove(path)
            let new = try seam.fileSystem.openLockFile(path)
            #expect(try new.tryLock(), "\(kind): the new file's lock is free")
            old.close()
            new.close()
        }
    }

    @Test(arguments: CrashMode.allCases)
    func aPowerCutReleasesEveryLock(_ mode: CrashMode) throws {
        let fileSystem = PowerLossFileSystem()
        try fileSystem.createDirectory("/store")
        try fileSystem.syncDirectory("/")
        let holder = try fileSystem.openLockFile("/store/lock")
        defer { holder.close() }
        #expect(try holder.tryLock())
        try fileSystem.syncDirectory("/store")
        let image = fileSystem.crashImage(mode: mode)
        let after = try image.openLockFile("/store/lock")
        #expect(try after.tryLock(), "the crash image holds no lock")
        after.close()
        let restored = PowerLossFileSystem(restoring: image)
        let again = try restored.openLockFile("/store/lock")
        #expect(try again.tryLock(), "a file system restored from the image holds no lock")
        again.close()
        #expect(try !fileSystem.openLockFile("/store/lock").tryLock(), "the live file system still does")
    }
}
