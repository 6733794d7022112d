import Foundation
import Testing
import FolioStorage
import FolioTestSupport

/// Statement atomicity one level down, in the tree: a page read that fails in the middle of
/// an edit (a merge reading a sibling, a split's path) must not leave a half-edited tree
/// behind. The transaction then refuses everything but a rollback, and a rollback to a
/// savepoint from before the failure puts it back exactly (an edited child already linked
/// into its parent would make a key vanish while the count and the change log said not).
@Suite struct EditFaultTests {
    @Test func aReadFailingMidEditIsUndoneByTheSavepoint() throws {
        let memory = MemoryFileSystem()
        try memory.createDirectory("/stores")
        var model: [[UInt8]: [UInt8]] = [:]
        do {
            let store = try Store.open(at: "/stores/s", options: testOptions(memory))
            defer { store.close() }
            try store.write { transaction in
                for n in 0..<3_000 {
                    let key = bytes(String(format: "key-%06d", n)),
                        value = [UInt8](repeating: UInt8(n % 251), count: 150)
                    try transaction.put(value, for: key, in: "t")
                    model[key] = value
                }
            }
        }
        let faults = FaultInjectingFileSystem(wrapping: memory, countedKinds: [.read])
        // No page cache to speak of: every descent reads its pages through the faulty seam.
        let store = try Store.open(at: "/stores/s", options: testOptions(faults, cache: 0))
        defer { store.close() }
        var aborted = 0, undone = 0
        for (round, failing) in stride(from: 1, through: 150, by: 2).enumerated() {
            let transaction = try store.beginWrite()
            let savepoint = try transaction.savepoint()
            faults.reset()
            faults.plan = FaultPlan(failingCall: failing)
            var failed = false
            // Removing a run of keys makes leaves underfull, so edits merge and read siblings
            // after they changed a leaf (two reads per leaf, one per merge).
            // Every other round runs them as one statement, whose undo must restore them.
            let asStatement = round % 2 == 0
            func removals() throws(StorageError) {
                for n in (failing * 5)..<3_000 {
                    try transaction.remove(bytes(String(format: "key-%06d", n)), from: "t")
                }
            }
            do throws(StorageError) {
                if asStatement { try transaction.atomically(removals) } else { try removals() }
            } catch {
                failed = true
            }
            faults.plan = nil
            guard failed else { transaction.rollback(); continue }
            // A failure inside an edit (not one reading the catalog before it): whatever the
            // state of the trees, nothing but a rollback is allowed now.
            if case .transactionAborted? = storageError(of: { try transaction.count(in: "t") }) {
                aborted += 1
                #expect(throws: StorageError.self) { try transaction.get(bytes("key-000001"), in: "t") }
                #expect(throws: StorageError.self) { try transaction.put([1], for: [1], in: "t") }
                transaction.rollback(to: savepoint)
            } else if asStatement {
                // The failure came before any edit of a key, or between two: the statement's
                // undo restored everything, with no savepoint needed.
                undone += 1
            } else {
                transaction.rollback(to: savepoint)
            }
            #expect(try transaction.count(in: "t") == UInt64(model.count))
            var cursor = transaction.cursor(in: "t")
            var seen = 0
            while let entry = try cursor.next() {
                #expect(model[entry.key] == entry.value)
                seen += 1
            }
            #expect(seen == model.count, "failing read \(failing): the rollback restored every key")
            // The transaction goes on and commits.
            let extra = bytes(String(format: "extra-%03d", failing))
            try transaction.put([1, 2, 3], for: extra, in: "t")
            model[extra] = [1, 2, 3]
            try transaction.commit()
            #expect(store.verify().isClean)
        }
        #expect(aborted > 0, "some failures happened part-way through an edit")
        #expect(undone > 0, "some statements failed between edits and were undone key by key")
        let view = try store.read()
        #expect(try view.count(in: "t") == UInt64(model.count))
    }
}

/// The error `body` throws, or nil.
func storageError<T>(of body: () throws -> T) -> StorageError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? StorageError
    }
}
