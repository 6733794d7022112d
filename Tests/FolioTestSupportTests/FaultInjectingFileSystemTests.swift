import FolioStorage
import FolioTestSupport
import Testing

@Suite struct FaultInjectingFileSystemTests {
    /// A workload touching every kind of failable call.
    private func workload(_ fileSystem: any FileSystem) throws(StorageError) {
        try fileSystem.createDirectory("/s")
        let lock = try fileSystem.lock("/s/lock")
        defer { lock.unlock() }
        let lockFile = try fileSystem.openLockFile("/s/lock.other")
        defer { lockFile.close() }
        _ = try lockFile.tryLock()
        lockFile.unlock()
        let file = try fileSystem.open("/s/data", mode: .create)
        defer { file.close() }
        _ = try file.identity()
        try fileSystem.open("/s/new", mode: .createNew).close()
        try file.write(filled(1, 100), at: 0)
        _ = try file.read(at: 0, count: 10)
        _ = try file.size()
        try file.truncate(to: 50)
        try file.sync()
        _ = try fileSystem.identity(of: "/s/data")
        _ = try fileSystem.contentsOfDirectory("/s")
        try replaceAtomically(fileSystem, directory: "/s", name: "root", with: filled(2, 10))
        try fileSystem.remove("/s/data")
    }

    @Test func failsExactlyTheChosenCallAndDoesNothingForIt() throws {
        // Learn the sequence: a recorder under the fault layer sees what was forwarded.
        let probeRecording = RecordingFileSystem(wrapping: MemoryFileSystem())
        let probe = FaultInjectingFileSystem(wrapping: probeRecording)
        try workload(probe)
        let counted = probeRecording.operations.filter(\.kind.canFail)
        #expect(probe.callCount == counted.count)
        #expect(probe.injectedFaults == 0)
        #expect(counted.count == 20)  // every call but close and unlock

        for n in 1...probe.callCount {
            let recording = RecordingFileSystem(wrapping: MemoryFileSystem())
            let faulty = FaultInjectingFileSystem(wrapping: recording, plan: FaultPlan(failingCall: n))
            let target = counted[n - 1]
            #expect(throws: ioError(target.kind.systemCallName, target.path, SystemError.io)) {
                try workload(faulty)
            }
            #expect(faulty.callCount == n, "call \(n)")
            #expect(faulty.failedOperations == [target], "call \(n)")
            // Everything before call n was forwarded; call n itself was not.
            #expect(Array(recording.operations.filter(\.kind.canFail)) == Array(counted[..<(n - 1)]), "call \(n)")
        }
    }

    @Test func transientFaultFailsOnlyThatCall() throws {
        let memory = MemoryFileSystem()
        let faulty = FaultInjectingFileSystem(wrapping: memory)
        let file = try faulty.open("/f", mode: .create)  // call 1
        faulty.plan = FaultPlan(failingCall: 2, kind: .noSpace)
        #expect(throws: ioError("pwrite", "/f", SystemError.noSpace)) { try file.write([1, 1], at: 0) }
        try file.write([2, 2], at: 2)  // call 3 succeeds
        try file.sync()
        try faulty.rename("/f", to: "/g")
        #expect(memory.contents(of: "/g") == [0, 0, 2, 2])
        #expect(faulty.injectedFaults == 1)
    }

    @Test func persistentFaultFailsLaterMutatingCallsButNotReads() throws {
        let memory = MemoryFileSystem()
        try writeFile(memory, "/f", [1, 2, 3])
        let faulty = FaultInjectingFileSystem(
            wrapping: memory, plan: FaultPlan(failingCall: 2, persistence: .persistent))
        let file = try faulty.open("/f", mode: .readWrite)
        #expect(throws: ioError("fsync", "/f", SystemError.io)) { try file.sync() }

        #expect(throws: ioError("pwrite", "/f", SystemError.io)) { try file.write([9], at: 0) }
        #expect(throws: ioError("ftruncate", "/f", SystemError.io)) { try file.truncate(to: 0) }
        #expect(throws: ioError("fsync", "/f", SystemError.io)) { try file.sync() }
        #expect(throws: ioError("rename", "/f", SystemError.io)) { try faulty.rename("/f", to: "/g") }
        #expect(throws: ioError("unlink", "/f", SystemError.io)) { try faulty.remove("/f") }
        #expect(throws: ioError("fsync directory", "/", SystemError.io)) { try faulty.syncDirectory("/") }
        #expect(throws: ioError("mkdir", "/d", SystemError.io)) { try faulty.createDirectory("/d") }
        #expect(throws: ioError("open", "/new", SystemError.io)) { _ = try faulty.open("/new", mode: .create) }
        #expect(throws: ioError("open", "/f", SystemError.io)) { _ = try faulty.open("/f", mode: .truncate) }
        #expect(throws: ioError("flock", "/lock", SystemError.io)) { _ = try faulty.lock("/lock") }

        #expect(try file.read(at: 0, count: 3) == [1, 2, 3])
        #expect(try file.size() == 3)
        #expect(try faulty.open("/f", mode: .readOnly).readAll() == [1, 2, 3])
        _ = try faulty.open("/f", mode: .readWrite)
        #expect(try faulty.contentsOfDirectory("/") == ["f"])
        _ = try faulty.identity(of: "/f")
        #expect(faulty.itemKind(at: "/f") == .file)

        #expect(memory.contents(of: "/f") == [1, 2, 3])
        #expect(memory.itemKind(at: "/d") == nil && memory.itemKind(at: "/new") == nil)
        #expect(faulty.injectedFaults == 11)

        // A new plan clears the fired fault.
        faulty.plan = nil
        try file.write([9], at: 0)
        #expect(memory.contents(of: "/f") == [9, 2, 3])
    }

    @Test func shortWriteLeavesExactlyThePrefix() throws {
        let memory = MemoryFileSystem()
        let faulty = FaultInjectingFileSystem(wrapping: memory, plan: FaultPlan(failingCall: 2, kind: .shortWrite))
        let file = try faulty.open("/f", mode: .create)
        let bytes = (0..<1001).map { UInt8(truncatingIfNeeded: $0) }
        #expect(throws: ioError("pwrite", "/f", SystemError.noSpace)) { try file.write(bytes, at: 10) }
        #expect(memory.contents(of: "/f") == filled(0, 10) + bytes[..<500])

        // A one-byte write keeps nothing: the file does not even grow.
        faulty.plan = FaultPlan(failingCall: faulty.callCount + 1, kind: .shortWrite)
        #expect(throws: ioError("pwrite", "/f", SystemError.noSpace)) { try file.write([7], at: 5000) }
        #expect(memory.contents(of: "/f")?.count == 510)
    }

    @Test func persistentShortWriteThenRefusesWrites() throws {
        let memory = MemoryFileSystem()
        let faulty = FaultInjectingFileSystem(
            wrapping: memory,
            plan: FaultPlan(failingCall: 2, kind: .shortWrite, persistence: .persistent))
        let file = try faulty.open("/f", mode: .create)
        #expect(throws: ioError("pwrite", "/f", SystemError.noSpace)) { try file.write(filled(1, 8), at: 0) }
        #expect(throws: ioError("pwrite", "/f", SystemError.noSpace)) { try file.write(filled(2, 8), at: 0) }
        #expect(throws: ioError("fsync", "/f", SystemError.noSpace)) { try file.sync() }
        #expect(memory.contents(of: "/f") == filled(1, 4))
    }

    @Test func shortWriteOnAnotherCallIsAnIOError() throws {
        let faulty = FaultInjectingFileSystem(
            wrapping: MemoryFileSystem(), plan: FaultPlan(failingCall: 2, kind: .shortWrite))
        let file = try faulty.open("/f", mode: .create)
        #expect(throws: ioError("fsync", "/f", SystemError.io)) { try file.sync() }
    }

    @Test func failedSyncDoesNotPoisonTheHandle() throws {
        let memory = MemoryFileSystem()
        let faulty = FaultInjectingFileSystem(wrapping: memory, plan: FaultPlan(failingCall: 2))
        let file = try faulty.open("/f", mode: .create)
        #expect(throws: StorageError.self) { try file.sync() }
        try file.write([5], at: 0)
        try file.sync()
        #expect(memory.contents(of: "/f") == [5])
    }

    @Test func countsOnlyTheChosenKinds() throws {
        let faulty = FaultInjectingFileSystem(
            wrapping: MemoryFileSystem(), plan: FaultPlan(failingCall: 3),
            countedKinds: [.write, .sync, .close])
        #expect(faulty.countedKinds == [.write, .sync])
        let file = try faulty.open("/f", mode: .create)
        try file.write([1], at: 0)  // 1
        _ = try file.read(at: 0, count: 1)  // not counted
        try file.sync()  // 2
        file.close()  // never counted
        let again = try faulty.open("/f", mode: .readWrite)
        #expect(throws: ioError("pwrite", "/f", SystemError.io)) { try again.write([2], at: 0) }  // 3
        #expect(faulty.callCount == 3)
        faulty.reset()
        #expect(faulty.callCount == 0 && faulty.injectedFaults == 0)
    }
}
