import Foundation
import Synchronization
import Testing
@testable import FolioStorage
import FolioTestSupport

/// The model test of concurrent writers: random transactions over trees of their own and
/// trees they share, run at once, each committed, conflicted or rolled back. Whatever the
/// interleaving, the committed ones must be serializable in commit order: replaying them
/// one at a time in generation order, every read each made must find what the replay holds
/// at that point, and the store must end equal to the replay. Each commit's change record
/// must list exactly what it changed in that replay: a blind writer's commit replayed onto
/// a newer tree (`putBlind`) included.
@Suite struct ConcurrentWriterModelTests {
    /// One operation of a transaction, as it ran.
    enum Operation: Sendable {
        case get(tree: String, key: String, found: String?)
        case scan(tree: String, found: [String: String])
        case put(tree: String, key: String, value: String)
        case remove(tree: String, key: String)
        case putBlind(tree: String, key: String, value: String)
        case removeBlind(tree: String, key: String)
    }

    /// A committed transaction: its generation and what it did.
    struct Committed: Sendable {
        let generation: UInt64
        let operations: [Operation]
        let changes: ChangeRecord
    }

    static let keys = (0..<6).map { "k\($0)" }
    /// Longer runs under `FOLIO_STRESS_TESTS=1`.
    let stress = ProcessInfo.processInfo.environment["FOLIO_STRESS_TESTS"] == "1"

    /// One random transaction step by step: `step` runs one operation; `finish` commits
    /// (or rolls back) and returns what was committed, nil for a conflict or a rollback.
    final class RandomTransaction {
        let transaction: WriteTransaction
        let trees: [String]
        let label: String
        var operations: [Operation] = []
        var remaining: Int

        init(_ transaction: WriteTransaction, trees: [String], label: String, rng: inout SplitMix64) {
            self.transaction = transaction
            self.trees = trees
            self.label = label
            remaining = 1 + rng.index(5)
        }

        func step(_ rng: inout SplitMix64) throws {
            remaining -= 1
            let tree = trees[rng.index(trees.count)]
            let key = ConcurrentWriterModelTests.keys[rng.index(ConcurrentWriterModelTests.keys.count)]
            // The blind tree is mostly written blind (its transactions then never conflict
            // over it), sometimes read (then they must, as any read-write).
            if tree == ConcurrentWriterModelTests.blindTree, rng.index(8) != 0 {
                if rng.index(4) == 0 {
                    try transaction.removeBlind(Array(key.utf8), from: tree)
                    operations.append(.removeBlind(tree: tree, key: key))
                } else {
                    let value = "\(label).\(operations.count)"
                    try transaction.putBlind(Array(value.utf8), for: Array(key.utf8), in: tree)
                    operations.append(.putBlind(tree: tree, key: key, value: value))
                }
                return
            }
            switch rng.index(10) {
            case 0..<3:
                let found = try transaction.get(Array(key.utf8), in: tree).map { String(decoding: $0, as: UTF8.self) }
                operations.append(.get(tree: tree, key: key, found: found))
            case 3:
                var cursor = transaction.cursor(in: tree)
                var found: [String: String] = [:]
                while let entry = try cursor.next() {
                    found[String(decoding: entry.key, as: UTF8.self)] = String(decoding: entry.value, as: UTF8.self)
                }
                operations.append(.scan(tree: tree, found: found))
            case 4:
                _ = try transaction.remove(Array(key.utf8), from: tree)
                operations.append(.remove(tree: tree, key: key))
            default:
                let value = "\(label).\(operations.count)"
                try transaction.put(Array(value.utf8), for: Array(key.utf8), in: tree)
                operations.append(.put(tree: tree, key: key, value: value))
            }
        }

        func finish(_ rng: inout SplitMix64) throws -> Committed? {
            if rng.index(10) == 0 {
                transaction.rollback()
                return nil
            }
            let trees: [String]
            do throws(StorageError) {
                let notification = try transaction.commit()
                return Committed(
                    generation: notification.generation, operations: operations, changes: notification.changes)
            } catch {
                guard case .writeConflict(let conflicting) = error else { throw error }
                trees = conflicting
            }
            // Only trees it read can conflict (a write other than blind reads): a tree it
            // only wrote blind is replayed instead.
            let read = Set(operations.filter { !$0.isBlind }.map(\.tree))
            #expect(!trees.isEmpty && Set(trees).isSubset(of: read), "\(trees) \(read)")
            return nil
        }
    }

    /// The tree shared by all that is mostly written blind.
    static let blindTree = "blind"

    /// The trees a worker uses: one of its own, two shared by all, and the blind one.
    static func trees(of worker: Int) -> [String] { ["own\(worker)", "shared0", "shared1", blindTree] }

    /// Several threads, each running transactions one after another on the same store.
    @Test func threadsRunningRandomTransactionsAreSerializable() throws {
        let workers = 4
        let perWorker = stress ? 2_000 : 80
        let store = try Store.open(at: "/stores/s", options: testOptions(try memoryFileSystem()))
        defer { store.close() }
        let committed = Mutex<[Committed]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var rng = SplitMix64(seed: UInt64(worker) * 7_919 + 3)
            do {
                for n in 0..<perWorker {
                    let transaction = RandomTransaction(
                        try store.beginWrite(), trees: Self.trees(of: worker), label: "w\(worker).\(n)", rng: &rng)
                    while transaction.remaining > 0 { try transaction.step(&rng) }
                    if let done = try transaction.finish(&rng) { committed.withLock { $0.append(done) } }
                }
            } catch {
                failures.withLock { $0.append("worker \(worker): \(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        try checkSerializable(committed.withLock { $0 }, store: store, workers: workers)
    }

    /// One thread keeping up to four transactions open at once and stepping them in a
    /// random order: every interleaving of begins, operations and commits, reproducibly.
    @Test(arguments: [1 as UInt64, 2, 3]) func interleavedRandomTransactionsAreSerializable(seed: UInt64) throws {
        let workers = 4
        let store = try Store.open(at: "/stores/s", options: testOptions(try memoryFileSystem()))
        defer { store.close() }
        var rng = SplitMix64(seed: seed)
        var open: [RandomTransaction?] = Array(repeating: nil, count: workers)
        var committed: [Committed] = []
        var conflicts = 0
        var begun = 0
        for _ in 0..<(stress ? 30_000 : 1_500) {
            let worker = rng.index(workers)
            guard let transaction = open[worker] else {
                begun += 1
                open[worker] = RandomTransaction(
                    try store.beginWrite(), trees: Self.trees(of: worker), label: "w\(worker).\(begun)", rng: &rng)
                continue
            }
            if transaction.remaining > 0 {
                try transaction.step(&rng)
            } else {
                if let done = try transaction.finish(&rng) {
                    committed.append(done)
                } else {
                    conflicts += 1
                }
                open[worker] = nil
            }
        }
        for transaction in open { transaction?.transaction.rollback() }
        // Interleaved on purpose: some conflict, and some commit past others (rebased).
        #expect(conflicts > 0)
        #expect(committed.count > workers)
        try checkSerializable(committed, store: store, workers: workers)
    }

    /// Replays `committed` in generation order: each read must find what the replay holds,
    /// the generations must be distinct, and the store must end equal to the replay.
    private func checkSerializable(_ committed: [Committed], store: Store, workers: Int) throws {
        var model: [String: [String: String]] = [:]
        let ordered = committed.sorted { $0.generation < $1.generation }
        #expect(Set(ordered.map(\.generation)).count == ordered.count, "two commits took one generation")
        for transaction in ordered {
            let before = model
            for operation in transaction.operations {
                switch operation {
                case .get(let tree, let key, let found):
                    #expect(
                        model[tree]?[key] == found,
                        "generation \(transaction.generation) read \(tree)/\(key) = \(found ?? "nil"), serial order has \(model[tree]?[key] ?? "nil")"
                    )
                case .scan(let tree, let found):
                    #expect((model[tree] ?? [:]) == found, "generation \(transaction.generation) scanned \(tree)")
                case .put(let tree, let key, let value), .putBlind(let tree, let key, let value):
                    model[tree, default: [:]][key] = value
                case .remove(let tree, let key), .removeBlind(let tree, let key): model[tree]?[key] = nil
                }
            }
            checkChanges(transaction, before: before, after: model)
        }
        let view = try store.read()
        let trees = Set((0..<workers).flatMap(Self.trees(of:)))
        for tree in trees {
            var stored: [String: String] = [:]
            var cursor = try view.cursor(in: tree)
            while let entry = try cursor.next() {
                stored[String(decoding: entry.key, as: UTF8.self)] = String(decoding: entry.value, as: UTF8.self)
            }
            #expect(stored == (model[tree] ?? [:]), "tree \(tree) differs from the serial replay")
        }
        #expect(store.verify().isClean)
    }

    /// The commit's change record lists exactly the keys whose values differ between the
    /// serial replay before and after it (every value written is distinct, so a key
    /// written and changed is a key whose value differs).
    private func checkChanges(
        _ transaction: Committed, before: [String: [String: String]], after: [String: [String: String]]
    ) {
        var expected: [String: [String: ChangeRecord.Kind]] = [:]
        for tree in Set(before.keys).union(after.keys) {
            let old = before[tree] ?? [:], new = after[tree] ?? [:]
            for key in Set(old.keys).union(new.keys) where old[key] != new[key] {
                expected[tree, default: [:]][key] = old[key] == nil ? .created : new[key] == nil ? .deleted : .updated
            }
        }
        var listed: [String: [String: ChangeRecord.Kind]] = [:]
        for changes in transaction.changes.trees {
            #expect(!changes.isChangedWholesale)
            for entry in changes.entries {
                listed[changes.tree, default: [:]][String(decoding: entry.key, as: UTF8.self)] = entry.kind
            }
        }
        #expect(listed == expected.filter { !$0.value.isEmpty }, "generation \(transaction.generation)'s change record")
    }
}

extension ConcurrentWriterModelTests.Operation {
    var isBlind: Bool {
        switch self {
        case .putBlind, .removeBlind: return true
        default: return false
        }
    }

    var tree: String {
        switch self {
        case .get(let tree, _, _), .scan(let tree, _), .put(let tree, _, _), .remove(let tree, _),
            .putBlind(let tree, _, _), .removeBlind(let tree, _):
            return tree
        }
    }
}
