import FolioStorage
import FolioTestSupport
import Testing

@Suite struct RecordingFileSystemTests {
    /// A miniature commit: append to the snapshot, sync it, then replace the root durably.
    private func commit(_ fileSystem: any FileSystem) throws(StorageError) {
        let snapshot = try fileSystem.open("/store/snapshot", mode: .create)
        try snapshot.write(filled(1, 8192), at: 4096)
        try snapshot.sync()
        snapshot.close()
        try replaceAtomically(fileSystem, directory: "/store", name: "root", with: filled(2, 64))
    }

    @Test func logsTheExactSequenceOfADurableCommit() throws {
        let memory = MemoryFileSystem()
        let recording = RecordingFileSystem(wrapping: memory)
        try recording.createDirectory("/store")
        recording.reset()

        try commit(recording)

        #expect(
            recording.summaries(relativeTo: "/store") == [
                "write snapshot", "sync snapshot", "write root.tmp", "sync root.tmp", "rename root.tmp→root",
                "syncdir .",
            ])
        #expect(
            recording.operations == [
                .open(path: "/store/snapshot", mode: .create),
                .write(path: "/store/snapshot", offset: 4096, count: 8192),
                .sync(path: "/store/snapshot"),
                .close(path: "/store/snapshot"),
                .open(path: "/store/root.tmp", mode: .truncate),
                .write(path: "/store/root.tmp", offset: 0, count: 64),
                .sync(path: "/store/root.tmp"),
                .close(path: "/store/root.tmp"),
                .rename(from: "/store/root.tmp", to: "/store/root"),
                .syncDirectory(path: "/store"),
            ])
        #expect(recording.descriptions(relativeTo: "/store")[1] == "write snapshot @4096 +8192")
        // Calls really were forwarded.
        #expect(memory.contents(of: "/store/root") == filled(2, 64))
        #expect(memory.contents(of: "/store/snapshot")?.count == 4096 + 8192)
    }

    @Test func logsEveryKindOfCallIncludingFailuresAndUnlock() throws {
        let recording = RecordingFileSystem(wrapping: MemoryFileSystem())
        try recording.createDirectory("/d")
        let file = try recording.open("/d/f", mode: .create)
        try file.write([1, 2, 3], at: 0)
        _ = try file.read(at: 0, count: 10)
        try file.truncate(to: 2)
        _ = try file.size()
        _ = try recording.identity(of: "/d/f")
        _ = try recording.contentsOfDirectory("/d")
        _ = recording.itemKind(at: "/d/f")
        let lock = try recording.lock("/d/lock")
        lock.unlock()
        #expect(throws: StorageError.self) { try recording.remove("/d/missing") }
        try recording.remove("/d/f")
        file.close()

        #expect(
            recording.descriptions(relativeTo: "/d") == [
                "mkdir .", "open f (create)", "write f @0 +3", "read f @0 +10", "truncate f to 2", "size f",
                "identity f", "list .", "kind f", "lock lock", "unlock lock", "remove missing", "remove f", "close f",
            ])
    }

    @Test func logsLockFilesIdentitiesAndExclusiveCreation() throws {
        let recording = RecordingFileSystem(wrapping: MemoryFileSystem())
        try recording.createDirectory("/d")
        let lockFile = try recording.openLockFile("/d/lock")
        #expect(try lockFile.tryLock())
        lockFile.unlock()
        lockFile.close()
        let file = try recording.open("/d/f", mode: .createNew)
        _ = try file.identity()
        file.close()

        #expect(
            recording.descriptions(relativeTo: "/d") == [
                "mkdir .", "openLockFile lock", "tryLock lock", "unlock lock", "close lock", "open f (createNew)",
                "fileIdentity f", "close f",
            ])
        #expect(recording.operations[5].isMutating, "an exclusive creation changes what is stored")
    }

    @Test func countsTheWorkAndResets() throws {
        let recording = RecordingFileSystem(wrapping: MemoryFileSystem())
        let file = try recording.open("/f", mode: .create)
        try file.write(filled(7, 100), at: 0)
        try file.write(filled(7, 50), at: 100)
        try file.sync()
        let before = recording.statistics
        #expect(before == OperationCounts(writes: 2, bytesWritten: 150, syncs: 1, opens: 1))

        _ = try file.read(at: 0, count: 10)
        _ = try file.read(at: 140, count: 100)  // only 10 bytes remain
        try recording.syncDirectory("/")
        let delta = recording.statistics - before
        #expect(delta == OperationCounts(reads: 2, bytesRead: 20, directorySyncs: 1))

        recording.reset()
        #expect(recording.operations.isEmpty)
        #expect(recording.statistics == OperationCounts())
    }
}
