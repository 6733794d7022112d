import Foundation
import Testing
import FolioStorage
import FolioTestSupport

/// `Cursor.value(at:)`, the records side of a query's merge join, against a model: keys
/// asked in ascending order (present, absent, before the first and after the last, some
/// values on overflow pages) through a read view and through a write transaction with
/// uncommitted changes; unordered keys still answer right; `next()` continues after the
/// key looked up; and a run of ascending lookups over neighbouring keys descends the tree
/// no more often than a walk of the same keys (one descent per leaf).
@Suite struct CursorOrderedLookupTests {
    static let tree = "records"

    static func key(_ n: Int) -> [UInt8] { Array(String(format: "k%06d", n).utf8) }

    static func value(_ n: Int, _ rng: inout SplitMix64) -> [UInt8] {
        // Now and then a value long enough for an overflow page.
        let length = rng.next() % 40 == 0 ? 3_000 : 20 + Int(rng.next() % 60)
        return [UInt8](repeating: UInt8(n % 251), count: length)
    }

    /// A store holding every third key of 0..<6,000 (so absent keys lie between present ones).
    static func makeStore(_ rng: inout SplitMix64) throws -> (Store, [Int: [UInt8]]) {
        let fileSystem = MemoryFileSystem()
        try fileSystem.createDirectory("/stores")
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        var model: [Int: [UInt8]] = [:]
        let transaction = try store.beginWrite()
        for n in stride(from: 0, to: 6_000, by: 3) {
            let value = value(n, &rng)
            _ = try transaction.put(value, for: key(n), in: tree)
            model[n] = value
        }
        try transaction.commit()
        return (store, model)
    }

    /// Looks up `numbers` in order through `cursor`, expecting the model's values.
    static func expectLookups(
        _ numbers: [Int], in cursor: inout Cursor, model: [Int: [UInt8]], context: String
    ) throws {
        for n in numbers {
            let got = try cursor.value(at: key(n)).map { Array($0) }
            #expect(got == model[n], "\(context): key \(n)")
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func ascendingLookupsMatchTheModel(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let (store, model) = try Self.makeStore(&rng)
        defer { store.close() }
        // A random ascending subset, duplicates included, with keys past both ends.
        var numbers = (0..<800).map { _ in Int(rng.next() % 6_200) } + [0, 5_999, 6_100]
        numbers.sort()
        var cursor = try store.read().cursor(in: Self.tree)
        try Self.expectLookups(numbers, in: &cursor, model: model, context: "view, seed \(seed)")
        // Any order still answers right (each out-of-order key descends again).
        var shuffled = try store.read().cursor(in: Self.tree)
        try Self.expectLookups(numbers.shuffled(using: &rng), in: &shuffled, model: model, context: "shuffled")

        // A write transaction's cursor sees its uncommitted changes.
        let transaction = try store.beginWrite()
        defer { transaction.rollback() }
        var working = model
        for _ in 0..<400 {
            let n = Int(rng.next() % 6_000)
            if rng.next() % 2 == 0 {
                _ = try transaction.remove(Self.key(n), from: Self.tree)
                working[n] = nil
            } else {
                let value = Self.value(n, &rng)
                _ = try transaction.put(value, for: Self.key(n), in: Self.tree)
                working[n] = value
            }
        }
        var written = transaction.cursor(in: Self.tree)
        try Self.expectLookups(numbers, in: &written, model: working, context: "transaction, seed \(seed)")
    }

    @Test func lookupsOutsideTheRangeFindNothingAndNextContinuesAfterTheKey() throws {
        var rng = SplitMix64(seed: 9)
        let (store, model) = try Self.makeStore(&rng)
        defer { store.close() }
        let view = try store.read()
        var bounded = try view.cursor(
            in: Self.tree, range: KeyRange(lower: .included(Self.key(300)), upper: .excluded(Self.key(600))))
        #expect(try bounded.value(at: Self.key(0)).map { Array($0) } == nil)
        #expect(try bounded.value(at: Self.key(600)).map { Array($0) } == nil)
        #expect(try bounded.value(at: Self.key(303)).map { Array($0) } == model[303])

        var forward = try view.cursor(in: Self.tree)
        #expect(try forward.value(at: Self.key(300)).map { Array($0) } == model[300])
        #expect(try forward.next()?.key == Self.key(303))
        #expect(try forward.value(at: Self.key(301)).map { Array($0) } == nil)
        #expect(try forward.next()?.key == Self.key(303))
        #expect(try forward.value(at: Self.key(5_999)).map { Array($0) } == nil)
        #expect(try forward.next() == nil)

        var reverse = try view.cursor(in: Self.tree, direction: .reverse)
        #expect(try reverse.value(at: Self.key(300)).map { Array($0) } == model[300])
        #expect(try reverse.next()?.key == Self.key(297))
        #expect(try reverse.value(at: Self.key(1)).map { Array($0) } == nil)
        #expect(try reverse.next()?.key == Self.key(0))
        #expect(try reverse.next() == nil)
    }

    @Test func neighbouringKeysCostOneDescentPerLeaf() throws {
        var rng = SplitMix64(seed: 4)
        let (store, model) = try Self.makeStore(&rng)
        defer { store.close() }
        let view = try store.read()
        var walk = try view.cursor(in: Self.tree)
        var walked = 0
        while try walk.nextKey() != nil { walked += 1 }
        #expect(walked == model.count)
        let leaves = walk.descents
        #expect(leaves > 10, "the tree should span many leaves: \(leaves)")

        var lookups = try view.cursor(in: Self.tree)
        try Self.expectLookups(model.keys.sorted(), in: &lookups, model: model, context: "every key")
        #expect(lookups.descents <= leaves, "\(lookups.descents) descents for \(leaves) leaves")
    }
}
