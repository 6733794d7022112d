import Testing
@testable import FolioStorage

/// A transaction that changes more keys of a tree than `changeRecordKeyLimit` drops the
/// tree's change log and records the tree as changed wholesale: its log stays bounded,
/// the commit page says so (read back from disk), and trees under the limit keep their
/// exact entries.
@Suite struct WholesaleChangeTests {
    private func open(_ limit: Int) throws -> (Store, MemoryFileSystem) {
        let fileSystem = MemoryFileSystem()
        try fileSystem.createDirectory("/stores")
        var options = testOptions(fileSystem)
        options.changeRecordKeyLimit = limit
        return (try Store.open(at: "/stores/s", options: options), fileSystem)
    }

    private func key(_ number: Int) -> [UInt8] { bytes("k\(100_000 + number)") }

    @Test func aTreePastTheLimitIsRecordedWholesaleAndItsLogStaysBounded() throws {
        let (store, _) = try open(100)
        defer { store.close() }
        let transaction = try store.beginWrite()
        for number in 0..<5_000 { try transaction.put(bytes("v\(number)"), for: key(number), in: "big") }
        for number in 0..<3 { try transaction.put([1], for: key(number), in: "small") }
        let logged = transaction.guarded.withLock { _ in transaction.contents.trees[Array("big".utf8)]!.changes.count }
        #expect(logged <= 200, "the log of a wholesale tree holds \(logged) entries")
        let notification = try transaction.commit()
        #expect(notification.changes.isChangedWholesale("big"))
        #expect(notification.changes.changes(in: "big").isEmpty)
        #expect(!notification.changes.isChangedWholesale("small"))
        #expect(notification.changes.changes(in: "small").map(\.key) == (0..<3).map(key))
        // The commit page says the same (encoded and decoded).
        let view = try store.read()
        #expect(try view.changes() == notification.changes)
        #expect(try view.get(key(4_999), in: "big") == bytes("v4999"))
    }

    @Test func exactlyTheLimitIsStillListed() throws {
        let (store, _) = try open(100)
        defer { store.close() }
        let transaction = try store.beginWrite()
        for number in 0..<100 { try transaction.put([2], for: key(number), in: "t") }
        let notification = try transaction.commit()
        #expect(!notification.changes.isChangedWholesale("t"))
        #expect(notification.changes.changes(in: "t").count == 100)
    }

    @Test func aRollbackToASavepointKeepsTheTreeWholesale() throws {
        let (store, _) = try open(50)
        defer { store.close() }
        let transaction = try store.beginWrite()
        try transaction.put([0], for: key(0), in: "t")
        let savepoint = try transaction.savepoint()
        for number in 1..<1_000 { try transaction.put([1], for: key(number), in: "t") }
        try transaction.rollback(to: savepoint)
        try transaction.put([3], for: key(1), in: "t")
        let notification = try transaction.commit()
        // "Any key may have changed" still holds of the two that did.
        #expect(notification.changes.isChangedWholesale("t"))
        #expect(try store.read().count(in: "t") == 2)
    }

    @Test func aDroppedTreeChangedWholesaleIsListedAsDroppedOnly() throws {
        let (store, _) = try open(10)
        defer { store.close() }
        try store.write { transaction in try transaction.put([0], for: key(0), in: "t") }
        let transaction = try store.beginWrite()
        for number in 0..<100 { try transaction.put([1], for: key(number), in: "t") }
        _ = try transaction.dropTree("t")
        let notification = try transaction.commit()
        #expect(notification.changes.droppedTrees == ["t"])
        #expect(notification.changes.trees.isEmpty)
    }

    @Test func batchesGoWholesaleToo() throws {
        let (store, _) = try open(100)
        defer { store.close() }
        let transaction = try store.beginWrite()
        _ = try transaction.apply((0..<10_000).map { (key($0), [UInt8(1)]) }, to: "t")
        let logged = transaction.guarded.withLock { _ in transaction.contents.trees[Array("t".utf8)]!.changes.count }
        #expect(logged <= 200)
        #expect(try transaction.commit().changes.isChangedWholesale("t"))
    }
}

/// The commit page's encoding of a tree changed wholesale: an entry count of 2^32 - 1 and
/// no entries (Docs/Format.md §7), decoded back as such, beside listed trees.
@Suite struct WholesaleEncodingTests {
    @Test func roundTrip() throws {
        let changes = ChangeRecord(
            trees: [
                .init(tree: "a", entries: [.init(key: [1], kind: .created)]), .wholesale("b"),
                .init(tree: "c", entries: [.init(key: [2], kind: .deleted)]),
            ],
            droppedTrees: ["d"])
        let record = CommitRecord(
            generation: 5, timestamp: 1, kind: .transaction, catalogRoot: PageAddress(offset: 0, length: 0),
            liveBytes: 0, previous: nil,
            changes: changes)
        var writer = ByteWriter()
        let (address, _, _) = CommitRecord.encode(record, liveBytesBeforePage: 0, into: &writer, at: 4_096)
        let page = Array(writer.bytes)
        // name "b": u16 1, "b", then the marker.
        let marker = page.indices.dropLast(6).first { page[$0] == 1 && page[$0 + 1] == 0 && page[$0 + 2] == 98 }
        let at = try #require(marker) + 3
        #expect(Array(page[at..<at + 4]) == [0xFF, 0xFF, 0xFF, 0xFF])
        let decoded = try CommitRecord.decode(page, address: address, file: "f")
        #expect(decoded.changes == changes)
        #expect(decoded.changes.isChangedWholesale("b"))
        #expect(!decoded.changes.isChangedWholesale("a"))
    }
}

/// The spill budget counts what a transaction holds in memory, not the raw bytes of its
/// keys and values: many small keys (each costs its node entry, arrays and log entry), and
/// scattered updates (each copies a whole page into memory) spill although their keys and
/// values add up to far less than the budget.
@Suite struct SpillBudgetTests {
    private func open(budget: Int) throws -> Store {
        let fileSystem = MemoryFileSystem()
        try fileSystem.createDirectory("/stores")
        var options = testOptions(fileSystem)
        options.transactionSpillBytes = budget
        return try Store.open(at: "/stores/s", options: options)
    }

    @Test func manySmallKeysSpill() throws {
        let store = try open(budget: 1 << 20)
        defer { store.close() }
        let transaction = try store.beginWrite()
        // 20,000 keys of 7 bytes and 1-byte values: 160 KB of keys and values.
        for number in 0..<20_000 { try transaction.put([1], for: bytes("k\(100_000 + number)"), in: "t") }
        let spills = transaction.guarded.withLock { _ in transaction.contents.spill.count }
        #expect(spills >= 2, "spills: \(spills)")
        try transaction.commit()
        #expect(try store.read().count(in: "t") == 20_000)
    }

    @Test func scatteredUpdatesCountThePagesTheyCopy() throws {
        let store = try open(budget: 2 << 20)
        defer { store.close() }
        let value = [UInt8](repeating: 5, count: 100)
        for batch in 0..<10 {
            try store.write { transaction in
                for number in batch * 5_000..<(batch + 1) * 5_000 {
                    try transaction.put(value, for: bytes("k\(100_000 + number)"), in: "t")
                }
            }
        }
        let transaction = try store.beginWrite()
        // One key in every 30: about one per leaf, 1,667 keys and 1-byte values (about
        // 300 KB with their overhead), but each copies its leaf.
        for number in stride(from: 0, to: 50_000, by: 30) {
            try transaction.put([6], for: bytes("k\(100_000 + number)"), in: "t")
        }
        let spills = transaction.guarded.withLock { _ in transaction.contents.spill.count }
        #expect(spills >= 1, "spills: \(spills)")
        try transaction.commit()
        #expect(try store.read().get(bytes("k\(100_000 + 29_970)"), in: "t") == [6])
    }
}
