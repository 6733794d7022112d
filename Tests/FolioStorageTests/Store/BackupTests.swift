import Testing
import FolioStorage
import FolioTestSupport

@Suite struct BackupTests {
    /// A backup holds exactly the pinned generation, only its live pages; restore gives it
    /// back; neither overwrites a non-empty destination.
    @Test func backupAndRestore() throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        var model = sampleModel(count: 2_000, seed: 21)
        try write(model, to: store)
        for round in 0..<10 { try store.write { try $0.put(Array("r\(round)".utf8), for: [1], in: "first") } }
        model.put(Array("r9".utf8), for: [1], in: "first")
        let report = try store.backup(to: "/stores/backup")
        #expect(report.generation == store.generation)
        #expect(report.bytes < (try store.statistics()).currentFileBytes)
        // The writer goes on; the backup does not see it.
        try store.write { try $0.put([9], for: [9], in: "later") }
        let backup = try Store.openReadOnly(at: "/stores/backup", options: testOptions(fileSystem))
        #expect(try contents(of: backup.read()) == model)
        #expect(backup.verify().isClean)
        #expect(throws: StorageError.destinationNotEmpty(path: "/stores/s")) { try backup.backup(to: "/stores/s") }
        try Store.restore(from: "/stores/backup", to: "/stores/restored", options: testOptions(fileSystem))
        let restored = try Store.open(at: "/stores/restored", options: testOptions(fileSystem))
        #expect(try contents(of: restored.read()) == model)
        try restored.write { try $0.put([1], for: [1], in: "new") }
        #expect(restored.verify().isClean)
        restored.close()
        store.close()
    }
}
