import Testing
@testable import FolioStorage

/// Moving a running transaction onto the tip (`WriteTransaction.advanceToTip()`): allowed
/// when no commit since its base changed a tree it touched, and then it reads the newer
/// commits' trees and commits onto them; refused otherwise, leaving it as it was (its
/// commit then conflicts). Timelines are fixed by the order of calls on one thread.
@Suite struct AdvanceToTipTests {
    private func openStore() throws -> Store {
        let store = try Store.open(at: "/stores/s", options: testOptions(try memoryFileSystem()))
        try store.write { transaction in
            try transaction.put(bytes("0"), for: bytes("k"), in: "x")
            try transaction.put(bytes("0"), for: bytes("k"), in: "y")
        }
        return store
    }

    private func text(_ value: [UInt8]?) -> String? {
        value.map { String(decoding: $0, as: UTF8.self) }
    }

    /// T1 writes x; T2 writes y and commits; T1 moves onto T2's commit, reads T2's y, writes
    /// y itself and commits after T2 without a conflict. A commit that then changes x
    /// still conflicts with T1's later commit: T1's read set is kept.
    @Test func aTransactionMovesOntoACommitOfTreesItDidNotTouch() throws {
        let store = try openStore()
        defer { store.close() }
        let first = try store.beginWrite()
        try first.put(bytes("1"), for: bytes("k"), in: "x")
        let second = try store.beginWrite()
        try second.put(bytes("2"), for: bytes("k"), in: "y")
        let secondGeneration = try second.commit().generation
        #expect(first.advanceToTip())
        #expect(first.baseGeneration == secondGeneration)
        #expect(text(try first.get(bytes("k"), in: "y")) == "2")
        try first.put(bytes("1"), for: bytes("j"), in: "y")
        #expect(try first.commit().generation == secondGeneration + 1)
        #expect(text(try store.read().get(bytes("k"), in: "x")) == "1")
        #expect(text(try store.read().get(bytes("j"), in: "y")) == "1")
        #expect(text(try store.read().get(bytes("k"), in: "y")) == "2")
        #expect(store.verify().isClean)
    }

    /// The read set noted before the move still counts: T1 read x, moved onto T2's commit
    /// (of y), then T3 changes x and commits: T1's commit conflicts on x.
    @Test func theReadSetBeforeTheMoveStillConflicts() throws {
        let store = try openStore()
        defer { store.close() }
        let first = try store.beginWrite()
        _ = try first.get(bytes("k"), in: "x")
        let second = try store.beginWrite()
        try second.put(bytes("2"), for: bytes("k"), in: "y")
        try second.commit()
        #expect(first.advanceToTip())
        let third = try store.beginWrite()
        try third.put(bytes("3"), for: bytes("k"), in: "x")
        try third.commit()
        try first.put(bytes("1"), for: bytes("k"), in: "y")
        #expect(throws: StorageError.writeConflict(trees: ["x"])) { try first.commit() }
    }

    /// T1 read y; T2 changes y and commits: T1 may not move (it would read two versions of
    /// y), keeps reading its base, and its commit conflicts as before.
    @Test func aTransactionThatTouchedAChangedTreeStaysOnItsBase() throws {
        let store = try openStore()
        defer { store.close() }
        let first = try store.beginWrite()
        let base = first.baseGeneration
        #expect(text(try first.get(bytes("k"), in: "y")) == "0")
        let second = try store.beginWrite()
        try second.put(bytes("2"), for: bytes("k"), in: "y")
        try second.put(bytes("2"), for: bytes("k"), in: "x")
        try second.commit()
        #expect(!first.advanceToTip())
        #expect(first.baseGeneration == base)
        #expect(text(try first.get(bytes("k"), in: "x")) == "0", "still its base's x")
        try first.put(bytes("1"), for: bytes("k"), in: "x")
        #expect(throws: StorageError.writeConflict(trees: ["x", "y"])) { try first.commit() }
    }
}
