#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FolioStorage
import FolioTestSupport
import Testing

/// `PowerLossFileSystem` as the file system a running store sees.
@Suite struct PowerLossLiveViewTests {
    @Test func openModesFollowTheSeam() throws {
        let fileSystem = PowerLossFileSystem()
        try fileSystem.createDirectory("/d")
        #expect(throws: ioError("open", "/d/f", SystemError.notFound)) {
            _ = try fileSystem.open("/d/f", mode: .readOnly)
        }
        #expect(throws: ioError("open", "/d/f", SystemError.notFound)) {
            _ = try fileSystem.open("/d/f", mode: .readWrite)
        }
        #expect(throws: ioError("open", "/nope/f", SystemError.notFound)) {
            _ = try fileSystem.open("/nope/f", mode: .create)
        }
        #expect(throws: ioError("open", "/d", EISDIR)) { _ = try fileSystem.open("/d/", mode: .create) }

        let file = try fileSystem.open("/d/f", mode: .create)
        try file.write([1, 2, 3], at: 0)
        #expect(try fileSystem.open("/d/f", mode: .create).readAll() == [1, 2, 3])
        #expect(try fileSystem.open("/d/f", mode: .readWrite).readAll() == [1, 2, 3])
        let reader = try fileSystem.open("/d/f", mode: .readOnly)
        #expect(throws: ioError("pwrite", "/d/f", SystemError.badDescriptor)) { try reader.write([0], at: 0) }
        #expect(throws: ioError("ftruncate", "/d/f", SystemError.badDescriptor)) { try reader.truncate(to: 0) }
        try reader.sync()  // allowed on a read-only handle, as with fsync(2)
        _ = try fileSystem.open("/d/f", mode: .truncate)
        #expect(try reader.size() == 0)
        reader.close()
        #expect(throws: ioError("pread", "/d/f", SystemError.badDescriptor)) { _ = try reader.read(at: 0, count: 1) }
        reader.close()  // twice is harmless
    }

    @Test func namesBehaveLikeAFileSystem() throws {
        let fileSystem = PowerLossFileSystem()
        try fileSystem.createDirectory("/d")
        try fileSystem.createDirectory("/d")  // idempotent
        #expect(throws: ioError("mkdir", "/x/y", SystemError.notFound)) { try fileSystem.createDirectory("/x/y") }
        try writeFile(fileSystem, "/d/b", [2])
        try writeFile(fileSystem, "/d/a", [1])
        try fileSystem.createDirectory("/d/sub")
        #expect(throws: ioError("mkdir", "/d/a", SystemError.exists)) { try fileSystem.createDirectory("/d/a") }
        #expect(try fileSystem.contentsOfDirectory("/d") == ["a", "b", "sub"])
        #expect(try fileSystem.contentsOfDirectory("/") == ["d"])
        #expect(fileSystem.itemKind(at: "/d") == .directory)
        #expect(fileSystem.itemKind(at: "/d/a") == .file)
        #expect(fileSystem.itemKind(at: "/d/c") == nil)

        try fileSystem.rename("/d/a", to: "/d/b")  // replaces
        #expect(try fileSystem.contentsOfDirectory("/d") == ["b", "sub"])
        #expect(fileSystem.contents(of: "/d/b") == [1])
        try fileSystem.rename("/d/b", to: "/d/b")  // to itself: nothing happens
        #expect(fileSystem.contents(of: "/d/b") == [1])
        #expect(throws: ioError("rename", "/d/sub", EISDIR)) { try fileSystem.rename("/d/b", to: "/d/sub") }
        #expect(throws: ioError("rename", "/d/a", SystemError.notFound)) { try fileSystem.rename("/d/a", to: "/d/c") }
        #expect(throws: ioError("rename", "/q/c", SystemError.notFound)) { try fileSystem.rename("/d/b", to: "/q/c") }
        #expect(throws: ioError("unlink", "/d/a", SystemError.notFound)) { try fileSystem.remove("/d/a") }
        #expect(throws: ioError("unlink", "/d/sub", EISDIR)) { try fileSystem.remove("/d/sub") }
        #expect(throws: ioError("open directory", "/q", SystemError.notFound)) { try fileSystem.syncDirectory("/q") }
        #expect(throws: ioError("opendir", "/q", SystemError.notFound)) { _ = try fileSystem.contentsOfDirectory("/q") }
    }

    @Test func identityFollowsTheFileNotTheName() throws {
        let fileSystem = PowerLossFileSystem()
        try writeFile(fileSystem, "/a", [1])
        try writeFile(fileSystem, "/b", [2])
        let a = try fileSystem.identity(of: "/a")
        #expect(a != (try fileSystem.identity(of: "/b")))
        try fileSystem.rename("/a", to: "/c")
        #expect(try fileSystem.identity(of: "/c") == a)
        #expect(throws: ioError("stat", "/a", SystemError.notFound)) { _ = try fileSystem.identity(of: "/a") }
    }

    @Test func locksAreExclusiveAndAbsentFromImages() throws {
        let fileSystem = PowerLossFileSystem()
        let lock = try fileSystem.lock("/lock")
        #expect(fileSystem.itemKind(at: "/lock") == .file)
        #expect(throws: StorageError.lockedByAnotherWriter(path: "/lock")) { _ = try fileSystem.lock("/lock") }
        #expect(throws: ioError("open lock file", "/d/lock", SystemError.notFound)) {
            _ = try fileSystem.lock("/d/lock")
        }

        let image = fileSystem.crashImage(mode: .everything)
        let imageLock = try image.lock("/lock")  // no lock is held in an image
        imageLock.unlock()

        lock.unlock()
        lock.unlock()
        let again = try fileSystem.lock("/lock")
        again.unlock()
    }

    @Test func zeroByteWriteChangesNothing() throws {
        let powerLoss = PowerLossFileSystem()
        let file = try powerLoss.open("/f", mode: .create)
        try file.write([], at: 100)
        #expect(try file.size() == 0)
        #expect(powerLoss.pendingDataOperations == 0)

        // The same through MemoryFileSystem: an empty write past the end does not grow the file.
        let memory = MemoryFileSystem()
        let memoryFile = try memory.open("/f", mode: .create)
        try memoryFile.write([], at: 100)
        #expect(try memoryFile.size() == 0)
    }

    @Test func restoringAnImageMakesItAllDurable() throws {
        let original = PowerLossFileSystem()
        try original.createDirectory("/s")
        try original.createDirectory("/s/snapshots")
        try writeFile(original, "/s/snapshots/1", filled(1, 600))
        try writeFile(original, "/s/root", [9])
        let image = original.crashImage(mode: .everything)

        let restored = PowerLossFileSystem(restoring: image)
        #expect(restored.pendingNamespaceOperations == 0 && restored.pendingDataOperations == 0)
        let durable = restored.crashImage(mode: .durableOnly)
        #expect(durable.allPaths() == image.allPaths())
        #expect(durable.contents(of: "/s/snapshots/1") == filled(1, 600))
        #expect(try restored.contentsOfDirectory("/s") == ["root", "snapshots"])
    }
}
