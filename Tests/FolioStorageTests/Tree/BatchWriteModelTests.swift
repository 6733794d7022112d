import Foundation
import Testing
@testable import FolioStorage
import FolioTestSupport

/// `WriteTransaction.apply(_:to:resolvingPrevious:)`, the one-pass batch write, against a
/// dictionary model and against the same changes made key by key in a second store: random
/// sorted batches of puts and removes (scattered, a range removed whole, a region filled,
/// everything removed) on trees of three and four levels, after earlier uncommitted changes
/// of the same transaction, with spills (a 32 KiB budget), savepoints, and failing
/// statements that must leave the transaction as it was. After every batch the debug
/// invariants (order, separators, page fill, depth, count) must hold; after every commit
/// the change records of both stores must be equal and `verify` clean.
@Suite struct BatchWriteModelTests {
    static let tree = "t"

    struct Stop: Error {}

    struct Tally { var batches = 0; var deepest = 0; var undone = 0; var emptied = 0 }

    @Test(arguments: 0..<4)
    func randomBatchesMatchTheModelAndTheKeyByKeyPath(shard: Int) throws {
        var tally = Tally()
        for seed in stride(from: shard, to: 16, by: 4) { try run(seed: UInt64(seed), tally: &tally) }
        #expect(tally.batches > 20)
        #expect(tally.deepest >= 3, "the trees must have several levels, so that merges and splits happen")
        #expect(tally.undone > 0 && tally.emptied > 0)
    }

    /// A key of the key space: long keys for half the seeds (about nine to a branch page, so the
    /// trees have three levels and more).
    static func key(_ n: Int, long: Bool) -> [UInt8] {
        var key = Array("k\(n % 89)/\(n)".utf8)
        if n % 13 == 0 { key.append(0) }
        if long { key += [UInt8](repeating: UInt8(n % 251), count: 300 + n % 200) }
        return key
    }

    static func value(_ rng: inout SplitMix64) -> [UInt8] {
        let roll = Int.random(in: 0..<100, using: &rng)
        let length =
            roll < 2
            ? Int.random(in: 2_049...6_000, using: &rng)  // overflow pages
            : roll < 30 ? Int.random(in: 200...900, using: &rng) : Int.random(in: 0...80, using: &rng)
        return (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// A sorted batch over `space`, of one of several shapes.
    static func batch(
        _ rng: inout SplitMix64, space: Int, long: Bool, model: [[UInt8]: [UInt8]]
    ) -> [(key: [UInt8], value: [UInt8]?)] {
        var changes: [[UInt8]: [UInt8]?] = [:]
        switch Int.random(in: 0..<10, using: &rng) {
        case 0:
            // Everything removed, and a few absent keys.
            for key in model.keys { changes[key] = .some(nil) }
            for _ in 0..<3 { changes[key(Int.random(in: 0..<space, using: &rng), long: long)] = .some(nil) }
        case 1, 2:
            // A range of the key order removed whole (whole leaves and subtrees), a few puts.
            let sorted = model.keys.sorted { KeyBytes.compare($0, $1) < 0 }
            if !sorted.isEmpty {
                let from = Int.random(in: 0..<sorted.count, using: &rng)
                let to = min(sorted.count, from + Int.random(in: 1...max(1, sorted.count / 2), using: &rng))
                for key in sorted[from..<to] { changes[key] = .some(nil) }
            }
            for _ in 0..<Int.random(in: 0...5, using: &rng) {
                changes[key(Int.random(in: 0..<space, using: &rng), long: long)] = .some(value(&rng))
            }
        case 3:
            // A region filled with new keys (oversized leaves split many ways).
            let start = Int.random(in: 0..<space, using: &rng)
            for n in start..<(start + Int.random(in: 50...600, using: &rng)) {
                changes[key(n, long: long)] = .some(value(&rng))
            }
        default:
            // Scattered puts and removes, dense or sparse.
            let count = Int.random(in: 1...[10, 200, 2_000][Int.random(in: 0..<3, using: &rng)], using: &rng)
            for _ in 0..<count {
                let key = key(Int.random(in: 0..<space, using: &rng), long: long)
                changes[key] = Bool.random(using: &rng) ? .some(value(&rng)) : .some(nil)
            }
        }
        return changes.map { ($0.key, $0.value) }.sorted { KeyBytes.compare($0.key, $1.key) < 0 }
    }

    static func contents(_ transaction: WriteTransaction) throws -> [(key: [UInt8], value: [UInt8])] {
        var cursor = transaction.cursor(in: tree)
        var entries: [(key: [UInt8], value: [UInt8])] = []
        while let entry = try cursor.next() { entries.append((entry.key, entry.value)) }
        return entries
    }

    static func matches(_ entries: [(key: [UInt8], value: [UInt8])], _ model: [[UInt8]: [UInt8]]) -> Bool {
        let expected = model.sorted { KeyBytes.compare($0.key, $1.key) < 0 }
        return entries.count == expected.count
            && zip(entries, expected).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    /// Every rule the transaction's in-memory trees break (TreeState+Invariants.swift).
    static func violations(_ transaction: WriteTransaction) -> [String] {
        transaction.guarded.withLock { _ in
            transaction.contents.trees.values.flatMap { tree in tree.invariantViolations().map { "\(tree.name): \($0)" }
            }
        }
    }

    static func depth(_ transaction: WriteTransaction) throws -> Int {
        let root = transaction.guarded.withLock { _ in transaction.contents.trees[Array(tree.utf8)]?.root }
        return try transaction.base.reader.depth(root: root)
    }

    func run(seed: UInt64, tally: inout Tally) throws {
        var rng = SplitMix64(seed: seed &* 0x5851_F42D &+ 7)
        // Every shard (seeds `shard`, `shard + 4`...) gets both kinds of keys.
        let long = (seed / 4) % 2 == 1
        let space = long ? 3_000 : 6_000
        let batchFiles = MemoryFileSystem(), keyFiles = MemoryFileSystem()
        try batchFiles.createDirectory("/s")
        try keyFiles.createDirectory("/s")
        let batchStore = try Store.open(at: "/s/batch", options: testOptions(batchFiles))
        let keyStore = try Store.open(at: "/s/keys", options: testOptions(keyFiles))
        defer {
            batchStore.close()
            keyStore.close()
        }
        var model: [[UInt8]: [UInt8]] = [:]
        // A committed tree of several levels, written key by key in both stores.
        do {
            let inBatch = try batchStore.beginWrite(), inKeys = try keyStore.beginWrite()
            for _ in 0..<(space / 2) {
                let key = Self.key(Int.random(in: 0..<space, using: &rng), long: long), value = Self.value(&rng)
                try inBatch.put(value, for: key, in: Self.tree)
                try inKeys.put(value, for: key, in: Self.tree)
                model[key] = value
            }
            try inBatch.commit()
            try inKeys.commit()
        }
        for round in 0..<6 {
            let inBatch = try batchStore.beginWrite(), inKeys = try keyStore.beginWrite()
            var working = model
            // Earlier uncommitted changes of the same transaction.
            for _ in 0..<Int.random(in: 0...40, using: &rng) {
                let key = Self.key(Int.random(in: 0..<space, using: &rng), long: long)
                if Bool.random(using: &rng) {
                    let value = Self.value(&rng)
                    try inBatch.put(value, for: key, in: Self.tree)
                    try inKeys.put(value, for: key, in: Self.tree)
                    working[key] = value
                } else {
                    try inBatch.remove(key, from: Self.tree)
                    try inKeys.remove(key, from: Self.tree)
                    working[key] = nil
                }
            }
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let changes = Self.batch(&rng, space: space, long: long, model: working)
                tally.deepest = max(tally.deepest, try Self.depth(inBatch))
                switch Int.random(in: 0..<6, using: &rng) {
                case 0:
                    // A failing statement leaves the transaction as it was.
                    #expect(throws: Stop.self) {
                        try inBatch.atomically { () throws in
                            _ = try inBatch.apply(changes, to: Self.tree)
                            throw Stop()
                        }
                    }
                    tally.undone += 1
                case 1:
                    // So does a rollback to a savepoint taken before the batch.
                    let savepoint = try inBatch.savepoint()
                    _ = try inBatch.apply(changes, to: Self.tree)
                    #expect(inBatch.rollback(to: savepoint))
                    tally.undone += 1
                default:
                    let outcome = try inBatch.atomically { () throws(StorageError) in
                        try inBatch.apply(changes, to: Self.tree, resolvingPrevious: true)
                    }
                    var existed: [Bool] = [], previous: [[UInt8]?] = []
                    for (key, value) in changes {
                        previous.append(working[key])
                        if let value {
                            existed.append(try inKeys.put(value, for: key, in: Self.tree))
                        } else {
                            existed.append(try inKeys.remove(key, from: Self.tree))
                        }
                        working[key] = value
                    }
                    #expect(outcome.existed == existed, "seed \(seed) round \(round): existed")
                    #expect(outcome.existed == previous.map { $0 != nil }, "seed \(seed) round \(round): the model")
                    #expect(outcome.previous == previous, "seed \(seed) round \(round): previous values")
                    if working.isEmpty { tally.emptied += 1 }
                    tally.batches += 1
                }
                let broken = Self.violations(inBatch)
                #expect(broken.isEmpty, "seed \(seed) round \(round): \(broken.prefix(5))")
                #expect(try inBatch.count(in: Self.tree) == UInt64(working.count), "seed \(seed) round \(round)")
                if Int.random(in: 0..<3, using: &rng) == 0 {
                    #expect(Self.matches(try Self.contents(inBatch), working), "seed \(seed) round \(round)")
                }
            }
            if Int.random(in: 0..<6, using: &rng) == 0 {
                inBatch.rollback()
                inKeys.rollback()
                continue
            }
            let byBatch = try inBatch.commit(), byKey = try inKeys.commit()
            model = working
            #expect(byBatch.changes == byKey.changes, "seed \(seed) round \(round): the change records differ")
            let report = batchStore.verify()
            #expect(report.isClean, "seed \(seed) round \(round): \(report.problems.prefix(3))")
            let view = try batchStore.read()
            var cursor = try view.cursor(in: Self.tree)
            var entries: [(key: [UInt8], value: [UInt8])] = []
            while entries.count <= model.count, let entry = try cursor.next() {
                entries.append((entry.key, entry.value))
            }
            #expect(Self.matches(entries, model), "seed \(seed) round \(round): committed state")
        }
    }

    @Test func aBatchRefusesUnsortedOrRepeatedKeysAndChangesNothing() throws {
        let files = MemoryFileSystem()
        try files.createDirectory("/s")
        let store = try Store.open(at: "/s/a", options: testOptions(files))
        defer { store.close() }
        let transaction = try store.beginWrite()
        try transaction.put(bytes("v"), for: bytes("b"), in: Self.tree)
        for changes in [
            [(bytes("b"), nil), (bytes("a"), [UInt8]?.some(bytes("x")))], [(bytes("b"), nil), (bytes("b"), nil)],
        ] {
            #expect(throws: StorageError.self) { try transaction.apply(changes, to: Self.tree) }
        }
        #expect(try transaction.get(bytes("b"), in: Self.tree) == bytes("v"))
        #expect(try transaction.count(in: Self.tree) == 1)
        transaction.rollback()
    }
}
