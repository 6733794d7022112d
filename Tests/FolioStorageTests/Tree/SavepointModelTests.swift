import Foundation
import Testing
import FolioStorage
import FolioTestSupport

/// Savepoints, statements and transaction cursors against a reference model: random puts,
/// removes, drops and ranged removes, with savepoints taken, released and rolled back to at
/// random, statements that fail part-way, and cursors made early and read late. Every read,
/// every held cursor, every commit's change record and `verify` after every commit are
/// checked.
///
/// 40 seeds x 600 operations by default; `FOLIO_MODEL_SEEDS` raises the number of seeds.
@Suite struct SavepointModelTests {
    static let trees = ["alpha", "beta", "gamma"]

    static var seedCount: Int {
        if let text = ProcessInfo.processInfo.environment["FOLIO_MODEL_SEEDS"], let value = Int(text) {
            return value / 5
        }
        return 40
    }

    struct Failure: Error {}

    /// A cursor made at some point and the model's entries at that point.
    struct HeldCursor {
        var cursor: Cursor
        let expected: [(key: [UInt8], value: [UInt8])]
    }

    @Test(arguments: 0..<2)
    func savepointsAndCursorsMatchTheModel(shard: Int) throws {
        var rollbacks = 0, heldChecked = 0, failedStatements = 0
        for seed in stride(from: shard, to: Self.seedCount, by: 2) {
            try run(
                seed: UInt64(seed), operations: 600, rollbacks: &rollbacks, heldChecked: &heldChecked,
                failedStatements: &failedStatements)
        }
        #expect(rollbacks > 0 && heldChecked > 0 && failedStatements > 0)
    }

    func randomKey(_ rng: inout SplitMix64, keySpace: Int) -> [UInt8] {
        let n = Int.random(in: 0..<keySpace, using: &rng)
        var key = Array("k\(n % 89)/\(n)".utf8)
        if n % 5 == 0 { key += [UInt8](repeating: UInt8(n % 251), count: n % 60) }
        return key
    }

    func randomValue(_ rng: inout SplitMix64) -> [UInt8] {
        let roll = Int.random(in: 0..<100, using: &rng)
        let length = roll < 2 ? Int.random(in: 2_049...6_000, using: &rng) : Int.random(in: 0...400, using: &rng)
        return (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    func run(
        seed: UInt64, operations: Int, rollbacks: inout Int, heldChecked: inout Int, failedStatements: inout Int
    ) throws {
        var rng = SplitMix64(seed: seed &* 0x2545_F491 &+ 7)
        let fileSystem = MemoryFileSystem()
        try fileSystem.createDirectory("/stores")
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        defer { store.close() }
        var committed = TreeModel()
        let keySpace = [60, 600, 3_000][Int(seed % 3)]
        var done = 0
        while done < operations {
            let transaction = try store.beginWrite()
            var working = committed
            var savepoints: [(Savepoint, TreeModel)] = []
            var held: [HeldCursor] = []
            var dropped = Set<String>()
            let size = Int.random(in: 1...120, using: &rng)
            for _ in 0..<size where done < operations {
                done += 1
                let tree = Self.trees[Int.random(in: 0..<Self.trees.count, using: &rng)]
                let roll = Int.random(in: 0..<100, using: &rng)
                switch roll {
                case 0..<40:
                    let key = randomKey(&rng, keySpace: keySpace), value = randomValue(&rng)
                    #expect(
                        try transaction.put(value, for: key, in: tree) == working.put(value, for: key, in: tree),
                        "seed \(seed)")
                case 40..<55:
                    let key = randomKey(&rng, keySpace: keySpace)
                    #expect(try transaction.remove(key, from: tree) == working.remove(key, from: tree), "seed \(seed)")
                case 55..<63:
                    let key = randomKey(&rng, keySpace: keySpace)
                    #expect(try transaction.get(key, in: tree) == working.get(key, in: tree), "seed \(seed)")
                case 63..<70:
                    savepoints.append((try transaction.savepoint(), working))
                case 70..<75 where !savepoints.isEmpty:
                    let position = Int.random(in: 0..<savepoints.count, using: &rng)
                    transaction.rollback(to: savepoints[position].0)
                    working = savepoints[position].1
                    savepoints.removeSubrange(position...)
                    rollbacks += 1
                case 75..<78 where !savepoints.isEmpty:
                    transaction.release(savepoints.remove(at: Int.random(in: 0..<savepoints.count, using: &rng)).0)
                case 78..<84:
                    // A statement of several writes that fails at its end: none of it stays.
                    let writes = Int.random(in: 1...20, using: &rng)
                    #expect(throws: Failure.self) {
                        try transaction.atomically { () throws(any Error) in
                            for _ in 0..<writes {
                                let key = randomKey(&rng, keySpace: keySpace)
                                if Bool.random(using: &rng) {
                                    try transaction.put(randomValue(&rng), for: key, in: tree)
                                } else {
                                    try transaction.remove(key, from: tree)
                                }
                            }
                            throw Failure()
                        }
                    }
                    failedStatements += 1
                case 84..<88:
                    // A statement that succeeds keeps all of it.
                    let key = randomKey(&rng, keySpace: keySpace), value = randomValue(&rng)
                    try transaction.atomically { () throws(StorageError) in
                        try transaction.put(value, for: key, in: tree)
                        try transaction.remove(key, from: tree)
                        try transaction.put(value, for: key, in: tree)
                    }
                    _ = working.put(value, for: key, in: tree)
                case 88..<92:
                    held.append(HeldCursor(cursor: transaction.cursor(in: tree), expected: working.trees[tree] ?? []))
                case 92..<96 where !held.isEmpty:
                    var entry = held.removeLast()
                    var found: [(key: [UInt8], value: [UInt8])] = []
                    while found.count <= entry.expected.count, let next = try entry.cursor.next() {
                        found.append((next.key, next.value))
                    }
                    #expect(
                        found.count == entry.expected.count
                            && zip(found, entry.expected).allSatisfy { $0.key == $1.key && $0.value == $1.value },
                        "seed \(seed): a held cursor saw later writes")
                    heldChecked += 1
                case 96..<97:
                    if try transaction.dropTree(tree) { dropped.insert(tree) }
                    _ = working.drop(tree)
                default:
                    let lower = randomKey(&rng, keySpace: keySpace), upper = randomKey(&rng, keySpace: keySpace)
                    let expected = working.range(
                        in: tree, lower: lower, lowerInclusive: true, upper: upper, upperInclusive: false)
                    for entry in expected { working.remove(entry.key, from: tree) }
                    #expect(
                        try transaction.removeAll(
                            in: KeyRange(lower: .included(lower), upper: .excluded(upper)), from: tree)
                            == expected.count, "seed \(seed)")
                }
            }
            for tree in Self.trees {
                #expect(try transaction.count(in: tree) == UInt64(working.trees[tree]?.count ?? 0), "seed \(seed)")
            }
            let notification = try transaction.commit()
            try expectChanges(notification.changes, from: committed, to: working, dropped: dropped, seed: seed)
            committed = working
            let report = store.verify()
            #expect(report.isClean, "seed \(seed): \(report.problems.prefix(3))")
            let view = try store.read()
            for tree in Self.trees {
                var cursor = try view.cursor(in: tree)
                let expected = committed.trees[tree] ?? []
                var entries: [(key: [UInt8], value: [UInt8])] = []
                while entries.count <= expected.count, let entry = try cursor.next() {
                    entries.append((entry.key, entry.value))
                }
                #expect(
                    entries.count == expected.count
                        && zip(entries, expected).allSatisfy { $0.key == $1.key && $0.value == $1.value },
                    "seed \(seed), tree \(tree): committed state differs from the model")
            }
        }
    }

    /// Every key whose existence or value changed is in the commit's change record with the
    /// right kind, and no entry contradicts the two states (rolled-back writes leave none).
    func expectChanges(
        _ changes: ChangeRecord, from before: TreeModel, to after: TreeModel, dropped: Set<String>,
        seed: UInt64
    ) throws {
        for tree in Self.trees where !dropped.contains(tree) {
            let entries = changes.trees.first { $0.tree == tree }?.entries ?? []
            var recorded: [[UInt8]: ChangeRecord.Kind] = [:]
            for entry in entries { recorded[entry.key] = entry.kind }
            for entry in entries {
                let old = before.get(entry.key, in: tree), new = after.get(entry.key, in: tree)
                switch entry.kind {
                case .created:
                    #expect(old == nil && new != nil, "seed \(seed): a created entry for a key that existed or is gone")
                case .updated:
                    #expect(old != nil && new != nil, "seed \(seed): an updated entry for a key missing on one side")
                case .deleted:
                    #expect(old != nil && new == nil, "seed \(seed): a deleted entry for a key that is still there")
                }
            }
            for (key, value) in after.trees[tree] ?? [] where before.get(key, in: tree) != value {
                #expect(recorded[key] != nil, "seed \(seed): a changed key is missing from the change record")
            }
            for (key, _) in before.trees[tree] ?? [] where after.get(key, in: tree) == nil {
                #expect(recorded[key] == .deleted, "seed \(seed): a deleted key is missing from the change record")
            }
        }
    }
}
