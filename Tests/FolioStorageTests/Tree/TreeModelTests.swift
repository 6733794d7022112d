import Foundation
import Testing
import FolioStorage
import FolioTestSupport

/// The engine against a reference model: random puts, removes, gets and ranges (both
/// directions, random bounds) in random-size transactions, random rollbacks and reopenings,
/// and `verify` (checksums, order, balance, counts, byte totals) after every commit.
///
/// 200 seeds x 1,000 operations (Docs/Durability.md §8, A2); every read and every range is
/// checked. `FOLIO_MODEL_SEEDS` raises the number of seeds for a longer run.
@Suite struct TreeModelTests {
    static let trees = ["alpha", "beta", "gamma"]

    static var seedCount: Int {
        if let text = ProcessInfo.processInfo.environment["FOLIO_MODEL_SEEDS"], let value = Int(text) { return value }
        return 200
    }

    struct Counts { var operations = 0; var commits = 0; var rollbacks = 0; var reopens = 0; var rangesChecked = 0 }

    @Test(arguments: 0..<4)
    func randomOperationsMatchTheModel(shard: Int) throws {
        var counts = Counts()
        for seed in stride(from: shard, to: Self.seedCount, by: 4) {
            try run(seed: UInt64(seed), operations: 1_000, counts: &counts)
        }
        #expect(counts.operations >= Self.seedCount / 4 * 1_000)
        #expect(counts.commits > 0 && counts.rollbacks > 0 && counts.reopens > 0)
    }

    func randomKey(_ rng: inout SplitMix64, keySpace: Int) -> [UInt8] {
        // Shared prefixes and varied lengths exercise separators and ordering; some keys
        // are prefixes of others, and a few contain 0x00 and 0xFF.
        let n = Int.random(in: 0..<keySpace, using: &rng)
        var key = Array("k\(n % 97)/\(n)".utf8)
        if n % 13 == 0 { key.append(0) }
        if n % 17 == 0 { key.append(0xFF) }
        if n % 5 == 0 { key += [UInt8](repeating: UInt8(n % 251), count: n % 40) }
        return key
    }

    func randomValue(_ rng: inout SplitMix64) -> [UInt8] {
        let roll = Int.random(in: 0..<100, using: &rng)
        let length =
            roll < 2
            ? Int.random(in: 2_049...9_000, using: &rng)  // overflow pages
            : roll < 10 ? Int.random(in: 300...2_048, using: &rng) : Int.random(in: 0...60, using: &rng)
        return (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    func run(seed: UInt64, operations: Int, counts: inout Counts) throws {
        var rng = SplitMix64(seed: seed &* 0x9E37_79B9 &+ 1)
        let fileSystem = MemoryFileSystem()
        try fileSystem.createDirectory("/stores")
        let options = testOptions(fileSystem)
        var store = try Store.open(at: "/stores/s", options: options)
        var committed = TreeModel()
        let keySpace = [40, 300, 2_000][Int(seed % 3)]
        var done = 0
        while done < operations {
            let transaction = try store.beginWrite()
            var working = committed
            let size = Int.random(in: 1...60, using: &rng)
            for _ in 0..<size where done < operations {
                done += 1
                let tree = Self.trees[Int.random(in: 0..<Self.trees.count, using: &rng)]
                let roll = Int.random(in: 0..<100, using: &rng)
                if roll < 45 {
                    let key = randomKey(&rng, keySpace: keySpace), value = randomValue(&rng)
                    let existed = try transaction.put(value, for: key, in: tree)
                    #expect(existed == working.put(value, for: key, in: tree), "seed \(seed)")
                } else if roll < 70 {
                    let key = randomKey(&rng, keySpace: keySpace)
                    #expect(try transaction.remove(key, from: tree) == working.remove(key, from: tree), "seed \(seed)")
                } else if roll < 85 {
                    let key = randomKey(&rng, keySpace: keySpace)
                    #expect(try transaction.get(key, in: tree) == working.get(key, in: tree), "seed \(seed)")
                } else if roll < 97 {
                    try checkRange(&rng, keySpace: keySpace, tree: tree, model: working, counts: &counts) {
                        range, direction in
                        transaction.cursor(in: tree, range: range, direction: direction)
                    }
                } else if roll < 98 {
                    #expect(try transaction.dropTree(tree) == working.drop(tree), "seed \(seed)")
                } else {
                    let lower = randomKey(&rng, keySpace: keySpace), upper = randomKey(&rng, keySpace: keySpace)
                    let range = KeyRange(lower: .included(lower), upper: .excluded(upper))
                    let expected = working.range(
                        in: tree, lower: lower, lowerInclusive: true, upper: upper, upperInclusive: false)
                    for entry in expected { working.remove(entry.key, from: tree) }
                    #expect(try transaction.removeAll(in: range, from: tree) == expected.count, "seed \(seed)")
                }
                counts.operations += 1
            }
            for tree in Self.trees {
                #expect(try transaction.count(in: tree) == UInt64(working.trees[tree]?.count ?? 0), "seed \(seed)")
            }
            if Int.random(in: 0..<8, using: &rng) == 0 {
                transaction.rollback()
                counts.rollbacks += 1
            } else {
                try transaction.commit()
                committed = working
                counts.commits += 1
                let report = store.verify()
                #expect(report.isClean, "seed \(seed): \(report.problems.prefix(3))")
            }
            // The committed state, through a read view.
            let view = try store.read()
            for tree in Self.trees {
                var cursor = try view.cursor(in: tree)
                var entries: [(key: [UInt8], value: [UInt8])] = []
                let expected = committed.trees[tree] ?? []
                // Bounded, so a cursor that repeats keys fails the test instead of hanging it.
                while entries.count <= expected.count, let entry = try cursor.next() {
                    entries.append((entry.key, entry.value))
                }
                #expect(
                    entries.count == expected.count
                        && zip(entries, expected).allSatisfy { $0.key == $1.key && $0.value == $1.value },
                    "seed \(seed), tree \(tree): view differs from the model")
            }
            if Int.random(in: 0..<10, using: &rng) == 0 {
                store.close()
                store = try Store.open(at: "/stores/s", options: options)
                counts.reopens += 1
            }
            if Int.random(in: 0..<25, using: &rng) == 0 {
                try store.compact()
                #expect(store.verify().isClean, "seed \(seed): after compaction")
            }
        }
        store.close()
    }

    func checkRange(
        _ rng: inout SplitMix64, keySpace: Int, tree: String, model: TreeModel, counts: inout Counts,
        cursor makeCursor: (KeyRange, ScanDirection) throws -> Cursor
    ) throws {
        func bound(_ rng: inout SplitMix64) -> (RangeBound<[UInt8]>, [UInt8]?, Bool) {
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: return (.unbounded, nil, true)
            case 1: let key = randomKey(&rng, keySpace: keySpace); return (.included(key), key, true)
            default: let key = randomKey(&rng, keySpace: keySpace); return (.excluded(key), key, false)
            }
        }
        let (lower, lowerKey, lowerInclusive) = bound(&rng)
        let (upper, upperKey, upperInclusive) = bound(&rng)
        let direction: ScanDirection = Bool.random(using: &rng) ? .forward : .reverse
        var expected = model.range(
            in: tree, lower: lowerKey, lowerInclusive: lowerInclusive, upper: upperKey,
            upperInclusive: upperInclusive)
        if direction == .reverse { expected.reverse() }
        let limit = Int.random(in: 1...200, using: &rng)
        var cursor = try makeCursor(KeyRange(lower: lower, upper: upper), direction)
        var found: [(key: [UInt8], value: [UInt8])] = []
        while found.count < limit, let entry = try cursor.next() { found.append((entry.key, entry.value)) }
        let prefix = Array(expected.prefix(limit))
        #expect(
            found.count == prefix.count && zip(found, prefix).allSatisfy { $0.key == $1.key && $0.value == $1.value },
            "range mismatch: got \(found.count) entries, expected \(prefix.count)")
        counts.rangesChecked += 1
    }
}
