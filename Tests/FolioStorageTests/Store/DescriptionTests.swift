import Testing
import FolioStorage
import FolioTestSupport

@Suite struct DescriptionTests {
    /// `describe()` reports the info file's format version and creation time and every
    /// file of the store, and names the current snapshot file, before and after compaction.
    @Test func describesFormatVersionAndFiles() throws {
        let fileSystem = try memoryFileSystem()
        var options = testOptions(fileSystem)
        options.retention = SnapshotRetention(gracePeriod: .seconds(60))
        let store = try Store.open(at: "/stores/s", options: options)
        try store.write { try $0.put([1], for: [1], in: "t") }
        var description = try store.describe()
        // Created as version 2, and still version 2: nothing has needed version 3 yet.
        #expect(description.formatVersion == 2 && description.rootFormatVersion == 2)
        #expect(description.created.hasSuffix("Z") && description.created.count == 20)
        #expect(description.currentSnapshot == "snapshots/0000000000000001.folio")
        #expect(description.files.map(\.name) == ["info", "lock", "root", "snapshots/0000000000000001.folio"])
        #expect(
            description.files.first { $0.name == "root" }?.bytes == 4224,
            "two root slots, 4 KiB apart (format version 2)")
        try store.compact()
        description = try store.describe()
        #expect(description.currentSnapshot == "snapshots/0000000000000002.folio")
        #expect(
            description.files.map(\.name).filter { $0.hasPrefix("snapshots/") }
                == ["snapshots/0000000000000001.folio", "snapshots/0000000000000002.folio"])
        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(fileSystem))
        #expect(try reader.describe() == description)
        store.close()
    }
}
