import Testing
import FolioStorage
import FolioTestSupport

@Suite struct CompactionTests {
    /// Compaction keeps the contents, shrinks the files, reports progress, and a read view
    /// taken before it stays valid, even after the old file is removed.
    @Test func compactionKeepsContentsShrinksFilesAndKeepsOldViews() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let store = try Store.open(at: path, options: testOptions())
        var model = sampleModel(count: 3_000, seed: 7)
        try write(model, to: store)
        // Rewrite a third of the keys many times: dead pages pile up.
        var rng = SplitMix64(seed: 8)
        for round in 0..<40 {
            try store.write { txn in
                for _ in 0..<50 {
                    let tree = rng.pick(["first", "second"])
                    guard let entries = model.trees[tree], !entries.isEmpty else { continue }
                    let key = entries[rng.index(entries.count)].key
                    let value = Array("round \(round)".utf8)
                    try txn.put(value, for: key, in: tree)
                    model.put(value, for: key, in: tree)
                }
            }
        }
        let before = try store.statistics()
        #expect(before.deadBytes > before.liveBytes)
        let oldView = try store.read()
        var reports: [CompactionProgress] = []
        let report = try store.compact { reports.append($0) }
        let after = try store.statistics()
        #expect(after.deadBytes == 0)
        #expect(after.currentFileBytes < before.currentFileBytes / 2)
        #expect(report.bytesAfter == after.currentFileBytes)
        #expect(reports.last.map { if case .complete = $0 { return true } else { return false } } == true)
        #expect(reports.contains(.switching))
        #expect(after.fileCount == 1, "with no grace period the old file is removed at once")
        // Same contents, through a new view and the view taken before compaction.
        #expect(try contents(of: store.read()) == model)
        #expect(try contents(of: oldView) == model)
        #expect(oldView.generation == report.generation - 1)
        #expect(store.verify().isClean)
        // The store keeps working and reopens.
        try store.write { try $0.put([7], for: [7], in: "first") }
        store.close()
        let reopened = try Store.open(at: path, options: testOptions())
        model.put([7], for: [7], in: "first")
        #expect(try contents(of: reopened.read()) == model)
        reopened.close()
    }

    /// Compaction refuses to run beside an open write transaction, and a read-only store
    /// cannot compact.
    @Test func compactionNeedsTheWriterSlot() throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        let transaction = try store.beginWrite()
        #expect(throws: StorageError.writeTransactionInProgress) { try store.compact() }
        transaction.rollback()
        try store.compact()
        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(fileSystem))
        #expect(throws: StorageError.readOnly(path: "/stores/s")) { try reader.compact() }
        store.close()
    }
}
