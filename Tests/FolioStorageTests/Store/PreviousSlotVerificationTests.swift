import Testing
@testable import FolioStorage
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
        let before = try #require(fileSystem.contents(of: "/stores/s/root"))
        try store.compact()  // both slots: file 2; file 1 kept for the retention period
        let generation = store.generation
        store.close()
        // Slot 1 put back to the root before the compaction, in file 1 (as a version 1
        // store's slot 1 holds it): an older root to fall back to.
        let older = [0, 1].compactMap { try? RootRecord.decodeSlot(before, slot: $0, file: "root") }
            .max { $0.generation < $1.generation }
        var root = try #require(fileSystem.contents(of: "/stores/s/root"))
        root.replaceSubrange(RootRecord.slotStride..<RootRecord.fileSize, with: try #require(older).encodedSlot())
        fileSystem.setContents(root, of: "/stores/s/root")
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
        #expect(
            problem.detail.contains("the newest root slot names generation \(generation) in 0000000000000002.folio"))
        // A sound store opened normally has no such problem.
        let healthy = try Store.open(at: "/stores/h", options: testOptions(fileSystem))
        try healthy.write { try $0.put([1], for: [1], in: "t") }
        try healthy.compact()
        #expect(healthy.verify().isClean)
        healthy.close()
    }
}
