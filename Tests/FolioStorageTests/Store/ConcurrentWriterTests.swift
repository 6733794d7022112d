import Testing
@testable import FolioStorage

/// Several write transactions at once (Docs/Architecture.md invariant 7): each commits onto
/// the newest commit unless a commit since it began changed a tree it read or wrote, in
/// which case it fails with a retryable `writeConflict` and keeps nothing. Timelines here
/// are fixed by the order of calls on one thread, never by the clock.
@Suite struct ConcurrentWriterTests {
    private func openStore(spillBytes: Int? = nil) throws -> Store {
        var options = testOptions(try memoryFileSystem())
        options.transactionSpillBytes = spillBytes
        let store = try Store.open(at: "/stores/s", options: options)
        try store.write { try $0.put(bytes("0"), for: bytes("k"), in: "x") }
        return store
    }

    /// T1 begins, T2 begins and commits while T1 is open, T1 commits: both are kept, T1 as
    /// the later generation, on top of T2's commit.
    @Test func disjointTransactionsOverlap() throws {
        let store = try openStore()
        defer { store.close() }
        let start = store.generation
        let first = try store.beginWrite()
        try first.put(bytes("a"), for: bytes("k"), in: "a")
        let second = try store.beginWrite()
        try second.put(bytes("b"), for: bytes("k"), in: "b")
        #expect(try second.commit().generation == start + 1)
        try first.put(bytes("a2"), for: bytes("k2"), in: "a")
        let committed = try first.commit()
        #expect(committed.generation == start + 2)
        #expect(committed.before?.generation == start + 1)
        let view = try store.read()
        #expect(try view.get(bytes("k"), in: "a") == bytes("a"))
        #expect(try view.get(bytes("k2"), in: "a") == bytes("a2"))
        #expect(try view.get(bytes("k"), in: "b") == bytes("b"))
        #expect(try view.get(bytes("k"), in: "x") == bytes("0"))
        #expect(store.verify().isClean)
    }

    /// Two transactions writing the same tree: the second to commit conflicts, names the
    /// tree, and keeps nothing; the same work retried in a new transaction commits.
    @Test func writesToOneTreeConflict() throws {
        let store = try openStore()
        defer { store.close() }
        let first = try store.beginWrite()
        try first.put(bytes("1"), for: bytes("one"), in: "x")
        let second = try store.beginWrite()
        try second.put(bytes("2"), for: bytes("two"), in: "x")
        try second.commit()
        let generation = store.generation
        #expect(throws: StorageError.writeConflict(trees: ["x"])) { try first.commit() }
        #expect(throws: StorageError.transactionFinished) { try first.put([1], for: [1], in: "x") }
        #expect(store.generation == generation)
        #expect(try store.read().get(bytes("one"), in: "x") == nil)
        try store.write { try $0.put(bytes("1"), for: bytes("one"), in: "x") }
        #expect(try store.read().get(bytes("one"), in: "x") == bytes("1"))
        #expect(try store.read().get(bytes("two"), in: "x") == bytes("2"))
    }

    /// Reads count: a transaction that read x and writes y conflicts with a commit to x
    /// since it began (write skew), whether it read x by key, by cursor, by count, or found
    /// a tree absent that was created meanwhile.
    @Test(arguments: ["get", "cursor", "count", "absent"]) func readsConflict(read: String) throws {
        let store = try openStore()
        defer { store.close() }
        let tree = read == "absent" ? "new" : "x"
        let reader = try store.beginWrite()
        switch read {
        case "get": _ = try reader.get(bytes("k"), in: tree)
        case "cursor":
            var cursor = reader.cursor(in: tree)
            while try cursor.next() != nil {}
        case "count": _ = try reader.snapshot().count(in: tree)
        default: #expect(try reader.get(bytes("k"), in: tree) == nil)
        }
        try reader.put(bytes("seen"), for: bytes("k"), in: "y")
        try store.write { try $0.put(bytes("1"), for: bytes("k"), in: tree) }
        #expect(throws: StorageError.writeConflict(trees: [tree])) { try reader.commit() }
        #expect(try store.read().get(bytes("k"), in: "y") == nil)
    }

    /// Listing the trees reads which exist: a tree created meanwhile conflicts, a change
    /// to an existing tree's contents does not.
    @Test func treeListConflictsWithCreationOnly() throws {
        let store = try openStore()
        defer { store.close() }
        let listing = try store.beginWrite()
        #expect(try listing.treeNames() == ["x"])
        try listing.put([1], for: [1], in: "y")
        try store.write { try $0.put([2], for: [2], in: "z") }
        #expect(throws: StorageError.writeConflict(trees: ["z"])) { try listing.commit() }

        let again = try store.beginWrite()
        _ = try again.treeNames()
        try again.put([1], for: [1], in: "y")
        let other = try store.beginWrite()
        try other.put([3], for: [3], in: "w")
        other.rollback()
        try store.write { try $0.put([2], for: [3], in: "z") }
        try again.commit()
        #expect(try store.read().get([1], in: "y") == [1])
    }

    /// A drop is a write: a transaction that read a tree another dropped conflicts.
    @Test func dropConflicts() throws {
        let store = try openStore()
        defer { store.close() }
        let reader = try store.beginWrite()
        #expect(try reader.get(bytes("k"), in: "x") == bytes("0"))
        try reader.put([1], for: [1], in: "y")
        try store.write { try $0.dropTree("x") }
        #expect(throws: StorageError.writeConflict(trees: ["x"])) { try reader.commit() }
    }

    /// A transaction that spilled holds the end of the file: another's commit or spill
    /// there would overwrite its pages, so it conflicts (retryable, names no tree) until
    /// the spiller ends; after that it commits. The store verifies clean throughout.
    @Test func spillingTransactionHoldsTheTail() throws {
        let store = try openStore(spillBytes: 4 << 10)
        defer { store.close() }
        let other = try store.beginWrite()
        try other.put(bytes("o"), for: bytes("k"), in: "other")
        let big = try store.beginWrite()
        for i in 0..<200 { try big.put(Array(repeating: UInt8(i % 251), count: 100), for: bytes("b\(i)"), in: "big") }
        #expect(throws: StorageError.writeConflict(trees: [])) { try other.commit() }
        let third = try store.beginWrite()
        #expect(throws: StorageError.writeConflict(trees: [])) {
            for i in 0..<200 { try third.put(Array(repeating: 7, count: 100), for: bytes("t\(i)"), in: "third") }
        }
        #expect(throws: StorageError.writeConflict(trees: [])) { try third.commit() }
        try big.commit()
        #expect(store.verify().isClean)
        try store.write { try $0.put(bytes("o"), for: bytes("k"), in: "other") }
        let view = try store.read()
        #expect(try view.count(in: "big") == 200)
        #expect(try view.get(bytes("k"), in: "other") == bytes("o"))
        #expect(store.verify().isClean)
    }

    /// A transaction that spills after others committed since its base spills at the tip's
    /// end, and commits onto the tip.
    @Test func spillAfterOtherCommitsFollowsTheTip() throws {
        let store = try openStore(spillBytes: 4 << 10)
        defer { store.close() }
        let big = try store.beginWrite()
        try big.put([1], for: [1], in: "big")
        try store.write { try $0.put(bytes("meanwhile"), for: bytes("k"), in: "other") }
        for i in 0..<200 { try big.put(Array(repeating: UInt8(i % 251), count: 100), for: bytes("b\(i)"), in: "big") }
        try big.commit()
        let view = try store.read()
        #expect(try view.count(in: "big") == 201)
        #expect(try view.get(bytes("k"), in: "other") == bytes("meanwhile"))
        #expect(store.verify().isClean)
        store.close()
        let reopened = try Store.open(at: "/stores/s", options: store.openOptions)
        defer { reopened.close() }
        #expect(try reopened.read().count(in: "big") == 201)
    }

    /// Compaction is refused while a transaction is active when it is called (its caller
    /// may hold it); once that transaction ends it runs, and transactions begin after it.
    /// (Transactions that commit during its copy: CompactionAlongsideWritersTests.)
    @Test func compactionIsRefusedWhileATransactionIsActive() throws {
        let store = try openStore()
        defer { store.close() }
        let open = try store.beginWrite()
        #expect(throws: StorageError.writeTransactionInProgress) { try store.compact() }
        open.rollback()
        try store.compact()
        try store.write { try $0.put([1], for: [1], in: "after") }
        #expect(try store.read().get([1], in: "after") == [1])
    }
}
