import Testing
@testable import FolioStorage
import FolioTestSupport

/// Large transactions in bounded memory (WriteTransaction+Spill.swift):
/// past `transactionSpillBytes` of changed keys and values, a transaction writes its
/// changed pages past the committed end before it commits. (`testOptions` sets a 32 KiB
/// budget, so every engine test with a larger transaction spills too.)
@Suite struct SpillTests {
    static func value(_ i: Int) -> [UInt8] { Array("value \(i) ".utf8) + [UInt8](repeating: UInt8(i % 251), count: 90) }

    /// 5,000 puts of about 100 bytes: the transaction writes pages before its commit (the
    /// spill), nothing any root names yet; the commit then holds exactly the data, the
    /// descriptors count exactly the reachable pages (verify), and a reopen reads the same.
    @Test func aLargeTransactionSpillsAndCommitsExactly() throws {
        let memory = try memoryFileSystem()
        let recording = RecordingFileSystem(wrapping: memory)
        let store = try Store.open(at: "/stores/s", options: testOptions(recording))
        try store.write { try $0.put([1], for: [1], in: "small") }
        let before = store.generation
        recording.reset()
        let transaction = try store.beginWrite()
        var model = TreeModel()
        model.put([1], for: [1], in: "small")
        for i in 0..<5_000 {
            let key = Array("key-\(i * 7919 % 5_000)".utf8)
            try transaction.put(Self.value(i), for: key, in: "big")
            model.put(Self.value(i), for: key, in: "big")
        }
        let spilled = transaction.contents.spill
        #expect(spilled.count >= 5, "spills: \(spilled.count)")
        #expect(
            recording.operations.contains {
                if case .write = $0 { return true }; return false
            },
            "pages were written before the commit")
        #expect(store.generation == before, "nothing is committed by a spill")
        #expect(try contents(of: store.read()) != model)
        try transaction.commit()
        #expect(try contents(of: store.read()) == model)
        #expect(store.verify().isClean, "\(store.verify().problems.prefix(2))")
        store.close()
        let reopened = try Store.open(at: "/stores/s", options: testOptions(memory))
        #expect(try contents(of: reopened.read()) == model)
        #expect(reopened.verify().isClean)
        reopened.close()
    }

    /// A spilled transaction rolled back leaves the store exactly as it was; the next
    /// commit writes its run over the spilled bytes, and a reopen does not take them for a
    /// commit.
    @Test func aRolledBackSpillLeavesNothing() throws {
        let memory = try memoryFileSystem()
        let store = try Store.open(at: "/stores/s", options: testOptions(memory))
        try write(sampleModel(count: 100, seed: 4), to: store)
        let expected = try contents(of: store.read())
        let generation = store.generation
        let transaction = try store.beginWrite()
        for i in 0..<3_000 { try transaction.put(Self.value(i), for: Array("k\(i)".utf8), in: "big") }
        #expect(transaction.contents.spill.count > 0)
        transaction.rollback()
        #expect(store.generation == generation)
        #expect(try contents(of: store.read()) == expected)
        store.close()
        let reopened = try Store.open(at: "/stores/s", options: testOptions(memory))
        #expect(reopened.generation == generation, "spilled pages are no complete run")
        try reopened.write { try $0.put([9], for: [9], in: "after") }
        #expect(reopened.verify().isClean)
        reopened.close()
    }

    /// A savepoint taken before a spill and rolled back to after it: the spilled pages are
    /// dead, the tree is the savepoint's, and the commit counts exactly what it reaches.
    /// And a statement that fails after a spill wrote its values: undone exactly.
    @Test func savepointsAndStatementsAcrossASpill() throws {
        let memory = try memoryFileSystem()
        let store = try Store.open(at: "/stores/s", options: testOptions(memory))
        let transaction = try store.beginWrite()
        var model = TreeModel()
        for i in 0..<200 {
            try transaction.put(Self.value(i), for: Array("a\(i)".utf8), in: "t")
            model.put(Self.value(i), for: Array("a\(i)".utf8), in: "t")
        }
        let savepoint = try transaction.savepoint()
        for i in 0..<2_000 { try transaction.put(Self.value(i) + Self.value(i), for: Array("b\(i)".utf8), in: "t") }
        #expect(transaction.contents.spill.count > 0)
        #expect(transaction.rollback(to: savepoint))
        struct Failure: Error {}
        let spillsBefore = transaction.contents.spill.count
        #expect(throws: Failure.self) {
            try transaction.atomically {
                for i in 0..<400 {
                    try transaction.put(
                        [UInt8](repeating: UInt8(i % 200), count: 3_000), for: Array("a\(i % 200)".utf8), in: "t")
                }
                throw Failure()
            }
        }
        #expect(transaction.contents.spill.count > spillsBefore, "the failed statement spilled")
        try transaction.commit()
        #expect(try contents(of: store.read()) == model)
        #expect(store.verify().isClean, "\(store.verify().problems.prefix(2))")
        store.close()
    }

    /// A power cut after a spill and before the commit: the store opens at the generation
    /// before, whatever of the spilled pages reached the disk.
    @Test func aPowerCutAfterASpillLosesOnlyTheTransaction() throws {
        let power = try powerLossFileSystem()
        let store = try Store.open(at: "/stores/s", options: testOptions(power))
        try write(sampleModel(count: 100, seed: 6), to: store)
        let expected = try contents(of: store.read())
        let generation = store.generation
        let transaction = try store.beginWrite()
        for i in 0..<3_000 { try transaction.put(Self.value(i), for: Array("k\(i)".utf8), in: "big") }
        #expect(transaction.contents.spill.count > 0)
        for (mode, seed) in [
            (CrashMode.durableOnly, UInt64(0)), (.everything, 0), (.random, 1), (.random, 2), (.random, 3),
        ] {
            let image = power.crashImage(mode: mode, seed: seed, tearingSectors: true)
            let reopened = try Store.open(at: "/stores/s", options: testOptions(image))
            #expect(reopened.generation == generation, "\(mode) \(seed)")
            #expect(try contents(of: reopened.read()) == expected)
            #expect(reopened.verify().isClean)
            reopened.close()
        }
        transaction.rollback()
        store.close()
    }
}

extension SpillTests {
    /// A rolled-back transaction spilled pages and read them back (so the shared page cache
    /// decoded them); the next transaction writes its own pages at the same places (its run
    /// starts at the same committed end). Reads must see the new pages, never a decoded
    /// page of the rolled-back transaction.
    @Test func pagesOfARolledBackSpillAreNeverReadForTheirSuccessors() throws {
        let memory = try memoryFileSystem()
        let store = try Store.open(at: "/stores/s", options: testOptions(memory))
        try store.write { try $0.put([0], for: [0], in: "t") }
        let keys = (0..<1_500).map { Array("key-\($0)".utf8) }
        func fill(_ byte: UInt8, commit: Bool) throws {
            let transaction = try store.beginWrite()
            for key in keys { try transaction.put([UInt8](repeating: byte, count: 100), for: key, in: "t") }
            #expect(transaction.contents.spill.count > 0)
            // Read back through the spilled pages: the cache now holds decoded copies.
            for key in keys.prefix(200) {
                #expect(try transaction.get(key, in: "t") == [UInt8](repeating: byte, count: 100))
            }
            if commit { try transaction.commit() } else { transaction.rollback() }
        }
        try fill(0xAA, commit: false)
        try fill(0xBB, commit: true)
        let view = try store.read()
        for key in keys { #expect(try view.get(key, in: "t") == [UInt8](repeating: 0xBB, count: 100)) }
        #expect(store.verify().isClean)
        store.close()
    }
}
