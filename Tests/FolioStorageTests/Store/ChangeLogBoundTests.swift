import Testing
@testable import FolioStorage

/// A transaction's change log follows the distinct keys it changed, not the number of
/// operations: 100,000 puts and removes of ten keys must not keep 100,000 log entries.
@Suite struct ChangeLogBoundTests {
    @Test func rewritingFewKeysManyTimesKeepsTheLogSmall() throws {
        let fileSystem = MemoryFileSystem()
        try fileSystem.createDirectory("/stores")
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        defer { store.close() }
        try store.write { transaction in try transaction.put([0], for: [9], in: "t") }
        let transaction = try store.beginWrite()
        for round in 0..<100_000 {
            let key: [UInt8] = [UInt8(round % 10)]
            if round % 3 == 2 {
                try transaction.remove(key, from: "t")
            } else {
                try transaction.put([UInt8(round % 7)], for: key, in: "t")
            }
        }
        let logged = transaction.guarded.withLock { _ in transaction.contents.trees[Array("t".utf8)]!.changes.count }
        #expect(logged < 8_200, "the log holds \(logged) entries for 10 keys")
        let notification = try transaction.commit()
        let entries = try #require(notification.changes.trees.first { $0.tree == "t" }).entries
        let view = try store.read()
        // Each of the ten keys appears once, with the kind its first and last states say.
        #expect(
            entries.count == (0..<10).filter { key in key == 9 || (try? view.get([UInt8(key)], in: "t")) != nil }.count)
        for entry in entries {
            let existsNow = try view.get(entry.key, in: "t") != nil
            switch entry.kind {
            case .created: #expect(entry.key != [9] && existsNow)
            case .updated: #expect(entry.key == [9] && existsNow)
            case .deleted: #expect(entry.key == [9] && !existsNow)
            }
        }
    }
}
