import Testing
import FolioStorage
import FolioTestSupport

@Suite struct PreviousSlotVerificationTests {
    /// A store whose current root names a snapshot file that cannot be used opens at the
    /// previous root (and logs it); verify must not call that store clean: the newest
    /// commit is out of reach. (Found by `folio verify`: it said "no problems".)
    @Test func verifyReportsAnUnreadableCurrentGeneration() throws {
        let fileSystem = try memoryFileSystem()
        var options = testOptions(fileSystem)
        options.retention = SnapshotRetention(gracePeriod: .seconds(60))
        let store = try Store.open(at: "/stores/s", options: options)
        try store.write { try $0.put([1], for: [1], in: "t") }
        try store.compact()  // slot 0: file 2; slot 1: the generation before, in file 1 (kept)
        let generation = store.generation
        store.close()
        // Damage the current file's header: the generation slot 0 names cannot be read.
        let current = "/stores/s/snapshots/0000000000000002.folio"
        var bytes = try #require(fileSystem.contents(of: current))
        bytes[0] ^= 0xFF
        fileSystem.setContents(bytes, of: current)
        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(fileSystem))
        #expect(reader.generation == generation - 1)
        let report = reader.verify()
        #expect(report.problems.count == 1)
        let problem = try #require(report.problems.first)
        #expect(problem.file == "/stores/s/root" && problem.offset == 0)
        #expect(problem.detail.contains("the newest root slot names generation \(generation) in 0000000000000002.folio"))
        // A sound store opened normally has no such problem.
        let healthy = try Store.open(at: "/stores/h", options: testOptions(fileSystem))
        try healthy.write { try $0.put([1], for: [1], in: "t") }
        try healthy.compact()
        #expect(healthy.verify().isClean)
        healthy.close()
    }
}
