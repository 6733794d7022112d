import Testing
import FolioStorage
import FolioTestSupport

@Suite struct ReadOnlyAndErrorTests {
    /// Read-only opening, reading, refreshing and verifying perform no mutating file
    /// operation at all, so they work on a read-only file system: every mutating call there
    /// fails, and none is made.
    @Test func readOnlyOpeningWritesNothing() throws {
        let fileSystem = try memoryFileSystem()
        let writer = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        try write(sampleModel(count: 500, seed: 4), to: writer)
        let readOnly = FaultInjectingFileSystem(
            wrapping: fileSystem,
            plan: FaultPlan(failingCall: 1, kind: .io, persistence: .persistent),
            countedKinds: Set(FileOperation.Kind.allCases.filter(\.isMutating)))
        let recording = RecordingFileSystem(wrapping: readOnly)
        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(recording))
        _ = try contents(of: reader.read())
        try writer.write { try $0.put([1], for: [1], in: "more") }
        #expect(try reader.refresh())
        #expect(try reader.read().get([1], in: "more") == [1])
        #expect(reader.verify().isClean)
        #expect(throws: StorageError.readOnly(path: "/stores/s")) { _ = try reader.beginWrite() }
        #expect(recording.operations.allSatisfy { !$0.isMutating }, "\(recording.operations.filter(\.isMutating))")
        #expect(readOnly.injectedFaults == 0)
        writer.close()
    }

    @Test func missingAndForeignStoresGiveClearErrors() throws {
        let fileSystem = try memoryFileSystem()
        #expect(throws: StorageError.storeNotFound(path: "/stores/none")) {
            _ = try Store.openReadOnly(at: "/stores/none", options: testOptions(fileSystem))
        }
        var options = testOptions(fileSystem)
        options.createIfMissing = false
        #expect(throws: StorageError.storeNotFound(path: "/stores/none")) {
            _ = try Store.open(at: "/stores/none", options: options)
        }
        try fileSystem.createDirectory("/stores/photos")
        fileSystem.setContents([1, 2, 3], of: "/stores/photos/holiday.jpg")
        for open in [
            { try Store.open(at: "/stores/photos", options: testOptions(fileSystem)) },
            { try Store.openReadOnly(at: "/stores/photos", options: testOptions(fileSystem)) },
        ] {
            #expect { _ = try open() } throws: { error in
                if case StorageError.notAStore = error { return true }
                return false
            }
        }
        fileSystem.setContents([1], of: "/stores/file")
        #expect { _ = try Store.open(at: "/stores/file", options: testOptions(fileSystem)) } throws: { error in
            if case StorageError.notAStore = error { return true }
            return false
        }
        // Nothing was written into the foreign directory.
        #expect(try fileSystem.contentsOfDirectory("/stores/photos") == ["holiday.jpg"])
    }

    /// Disk full while appending a commit: the commit fails with the I/O error, the store
    /// stays at its previous generation, and the next commit works.
    @Test func diskFullDuringCommitLeavesThePreviousRoot() throws {
        let faults = FaultInjectingFileSystem(wrapping: try memoryFileSystem())
        let store = try Store.open(at: "/stores/s", options: testOptions(faults))
        let model = sampleModel(count: 300, seed: 9)
        try write(model, to: store)
        let generation = store.generation
        faults.plan = FaultPlan(failingCall: faults.callCount + 1, kind: .noSpace, persistence: .transient)
        #expect {
            try store.write { try $0.put(Array(repeating: 7, count: 100_000), for: [1], in: "big") }
        } throws: { error in
            if case StorageError.io(_, _, let code) = error { return code == SystemError.noSpace }
            return false
        }
        #expect(store.generation == generation)
        #expect(try contents(of: store.read()) == model)
        try store.write { try $0.put([2], for: [2], in: "after") }
        #expect(store.generation == generation + 1)
        #expect(store.verify().isClean)
        store.close()
    }

    /// Keys and values beyond the limits, and bad tree names, are refused before anything
    /// is written.
    @Test func limitsAreEnforced() throws {
        let store = try Store.open(at: "/stores/s", options: testOptions(try memoryFileSystem()))
        let transaction = try store.beginWrite()
        #expect(throws: StorageError.keyTooLarge(length: 1025, maximum: 1024)) {
            try transaction.put([1], for: Array(repeating: 0, count: 1025), in: "t")
        }
        #expect(throws: StorageError.invalidTreeName(name: "")) { try transaction.put([1], for: [1], in: "") }
        transaction.rollback()
        #expect(throws: StorageError.transactionFinished) { try transaction.put([1], for: [1], in: "t") }
        store.close()
    }
}
