import Testing
@testable import FolioStorage

/// Blind writes (`WriteTransaction.putBlind`, `removeBlind`): a transaction that writes a
/// tree without reading it does not conflict with a commit that changed the tree since it
/// began; its writes are replayed onto the newer tree, and win (Docs/Architecture.md
/// invariant 7). A read of the tree through the transaction makes it a read-write again.
/// Timelines are fixed by the order of calls on one thread.
@Suite struct BlindWriteTests {
    private func openStore() throws -> Store {
        let store = try Store.open(at: "/stores/s", options: testOptions(try memoryFileSystem()))
        try store.write { try $0.put(bytes("0"), for: bytes("k"), in: "v") }
        return store
    }

    private func value(_ key: String, in store: Store) throws -> String? {
        try store.read().get(bytes(key), in: "v").map { String(decoding: $0, as: UTF8.self) }
    }

    /// T1 writes blind while T2 changes the same tree and commits: T1 commits after it,
    /// its writes replayed onto T2's tree. A key both wrote has T1's value (the later
    /// commit); T2's other keys stay; T1's change record lists what it changed in T2's tree.
    @Test func blindWritesAreReplayedOntoANewerTree() throws {
        let store = try openStore()
        defer { store.close() }
        let first = try store.beginWrite()
        try first.putBlind(bytes("one"), for: bytes("k"), in: "v")
        try first.putBlind(bytes("one"), for: bytes("a"), in: "v")
        let second = try store.beginWrite()
        try second.put(bytes("two"), for: bytes("k"), in: "v")
        try second.put(bytes("two"), for: bytes("b"), in: "v")
        try second.put(bytes("two"), for: bytes("a"), in: "v")
        let secondGeneration = try second.commit().generation
        let committed = try first.commit()
        #expect(committed.generation == secondGeneration + 1)
        #expect(try value("k", in: store) == "one")
        #expect(try value("a", in: store) == "one")
        #expect(try value("b", in: store) == "two")
        #expect(try store.read().count(in: "v") == 3)
        #expect(
            committed.changes.trees == [
                ChangeRecord.TreeChanges(
                    tree: "v",
                    entries: [.init(key: bytes("a"), kind: .updated), .init(key: bytes("k"), kind: .updated)])
            ])
        #expect(store.verify().isClean)
    }

    /// A blind removal replayed onto a tree where another commit created the key removes it.
    @Test func aBlindRemovalRemovesAKeyCreatedMeanwhile() throws {
        let store = try openStore()
        defer { store.close() }
        let first = try store.beginWrite()
        try first.removeBlind(bytes("new"), from: "v")
        try first.putBlind(bytes("one"), for: bytes("k"), in: "v")
        try store.write { try $0.put(bytes("two"), for: bytes("new"), in: "v") }
        let committed = try first.commit()
        #expect(try value("new", in: store) == nil)
        #expect(try value("k", in: store) == "one")
        #expect(try store.read().count(in: "v") == 1)
        #expect(
            committed.changes.trees == [
                ChangeRecord.TreeChanges(
                    tree: "v",
                    entries: [.init(key: bytes("k"), kind: .updated), .init(key: bytes("new"), kind: .deleted)])
            ])
        #expect(store.verify().isClean)
    }

    /// A read of the tree through the transaction, before or after its blind writes, makes
    /// them read-writes: a commit that changed the tree since is a conflict.
    @Test(arguments: [true, false]) func aReadMakesBlindWritesConflict(readFirst: Bool) throws {
        let store = try openStore()
        defer { store.close() }
        let first = try store.beginWrite()
        if readFirst { _ = try first.get(bytes("k"), in: "v") }
        try first.putBlind(bytes("one"), for: bytes("a"), in: "v")
        if !readFirst { _ = try first.count(in: "v") }
        try store.write { try $0.put(bytes("two"), for: bytes("k"), in: "v") }
        #expect(throws: StorageError.writeConflict(trees: ["v"])) { try first.commit() }
        #expect(try value("a", in: store) == nil)
    }

    /// A read through a snapshot (a cursor) of a tree written blind is a read too.
    @Test func aCursorOverATreeWrittenBlindIsARead() throws {
        let store = try openStore()
        defer { store.close() }
        let first = try store.beginWrite()
        try first.putBlind(bytes("one"), for: bytes("a"), in: "v")
        var cursor = first.cursor(in: "v")
        _ = try cursor.next()
        try store.write { try $0.put(bytes("two"), for: bytes("k"), in: "v") }
        #expect(throws: StorageError.writeConflict(trees: ["v"])) { try first.commit() }
    }

    /// A blind write undone by a rollback to a savepoint is not replayed: the key keeps
    /// what the other commit gave it (replaying it would write back the base's value).
    @Test func aBlindWriteRolledBackIsNotReplayed() throws {
        let store = try openStore()
        defer { store.close() }
        let first = try store.beginWrite()
        try first.putBlind(bytes("one"), for: bytes("a"), in: "v")
        let savepoint = try first.savepoint()
        try first.putBlind(bytes("one"), for: bytes("k"), in: "v")
        try first.removeBlind(bytes("b"), from: "v")
        #expect(first.rollback(to: savepoint))
        try store.write {
            try $0.put(bytes("two"), for: bytes("k"), in: "v")
            try $0.put(bytes("two"), for: bytes("b"), in: "v")
        }
        try first.commit()
        #expect(try value("a", in: store) == "one")
        #expect(try value("k", in: store) == "two")
        #expect(try value("b", in: store) == "two")
        #expect(store.verify().isClean)
    }

    /// A failed statement's blind write is not replayed either.
    @Test func aFailedStatementsBlindWriteIsNotReplayed() throws {
        let store = try openStore()
        defer { store.close() }
        let first = try store.beginWrite()
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try first.atomically { () throws(any Error) in
                try first.putBlind(bytes("one"), for: bytes("k"), in: "v")
                throw Refused()
            }
        }
        try first.putBlind(bytes("one"), for: bytes("a"), in: "v")
        try store.write { try $0.put(bytes("two"), for: bytes("k"), in: "v") }
        try first.commit()
        #expect(try value("k", in: store) == "two")
        #expect(try value("a", in: store) == "one")
    }

    /// A value too large to be inline (an overflow page) is replayed as a new page of the
    /// commit; the store verifies clean (live bytes included).
    @Test func aLargeValueIsReplayed() throws {
        let store = try openStore()
        defer { store.close() }
        let large = [UInt8](repeating: 7, count: StorageLimits.inlineValueLimit + 100)
        try store.write { try $0.put(large, for: bytes("k"), in: "v") }
        let first = try store.beginWrite()
        try first.putBlind(large + [1], for: bytes("big"), in: "v")
        try first.putBlind(bytes("small"), for: bytes("k"), in: "v")
        try store.write { try $0.put(large + [2], for: bytes("k"), in: "v") }
        try first.commit()
        #expect(try store.read().get(bytes("big"), in: "v") == large + [1])
        #expect(try value("k", in: store) == "small")
        #expect(store.verify().isClean)
    }

    /// Blind writes to a tree that did not exist when the transaction began, created by
    /// another commit meanwhile: replayed into the tree that commit created.
    @Test func aTreeCreatedMeanwhileTakesTheBlindWrites() throws {
        let store = try openStore()
        defer { store.close() }
        let first = try store.beginWrite()
        try first.putBlind(bytes("one"), for: bytes("a"), in: "fresh")
        try store.write { try $0.put(bytes("two"), for: bytes("b"), in: "fresh") }
        try first.commit()
        #expect(try store.read().get(bytes("a"), in: "fresh") == bytes("one"))
        #expect(try store.read().get(bytes("b"), in: "fresh") == bytes("two"))
        #expect(try store.read().count(in: "fresh") == 2)
        #expect(store.verify().isClean)
    }
}
