import Synchronization
import FolioStorage

/// The transaction a task is inside: a write transaction (`perform`) or a pinned read
/// snapshot (`read`). Carried in a task-local, so that datastore calls inside the closure
/// join it, nested `perform`s join the outer one, and child tasks inherit it.
final class TransactionContext: Sendable {
    enum Source: Sendable {
        case write(WriteTransaction)
        case read(ReadView)
    }

    let core: PersistenceCore
    let source: Source
    /// Datastores whose catalog this transaction brought up to date; they count as prepared
    /// once it commits (not before: a rollback undoes the preparation).
    let prepared = Mutex<Set<String>>([])
    /// The datastores whose preparation hold this transaction has (``PreparationHolds``),
    /// and whether it has ended and given them back (it takes none after that).
    let heldPreparations = Mutex(HeldPreparations())
    /// Whether the transaction runs in the exclusive writer turn (nothing else runs).
    let isExclusive: Bool
    /// The count of other writers' catalog changes when the transaction began, after its
    /// turn's catch-up: what it prepares is prepared as of this count, whenever it commits
    /// (a change noted between its commit and its marking is not taken as prepared).
    let catalogChangesAtBegin: Int
    /// The nested `perform`s running, each with whether a task outside it has written since
    /// it began (its rollback would undo that task's writes too: see ``noteWrite()``).
    let nested = Mutex<[Savepoint: Bool]>([:])
    /// The key-value store's keys this transaction wrote (a nested `perform` that rolls
    /// back takes its own back out): sets of them made outside meanwhile lose to it at its
    /// commit (`KeyValueMemory.transactionCommitting`).
    let writtenValues = Mutex<Set<HashedKey>>([])
    /// For a `read { }` scope: this process's key-value writes not yet published, taken
    /// with the snapshot (nil if there were none): the scope reads them as set.
    let pendingValues: KeyValueMemory.Pending?
    /// For `read(at:)`: the snapshot is of a past generation, whose catalog (indexes built,
    /// datastores present) may differ from what this process prepared.
    let readsThePast: Bool
    /// For a read scope, each datastore's indexes usable in its snapshot, once looked up: its
    /// catalog cannot change within the scope (IndexAvailability.fromCatalog).
    let usableIndexes = Mutex<[String: Set<String>]>([:])

    /// Set when the `read { }` that made this context returns. A task created inside it
    /// with `Task { }` inherits the task-local, and may run after `read` returned: such a
    /// task is not inside the snapshot any more, so its calls run as if outside any scope
    /// (a write is its own transaction) instead of failing with `writeInReadOnlySnapshot`.
    /// (A write context is not released: a write after `perform` returned must fail with
    /// `transactionFinished`, never commit on its own; see `perform`.)
    let ended = Atomic<Bool>(false)

    struct HeldPreparations {
        var keys: Set<String> = []
        var released = false
    }

    init(
        core: PersistenceCore, source: Source, pendingValues: KeyValueMemory.Pending? = nil,
        isExclusive: Bool = false, readsThePast: Bool = false
    ) {
        self.core = core
        self.source = source
        self.pendingValues = pendingValues
        self.readsThePast = readsThePast
        self.isExclusive = isExclusive
        catalogChangesAtBegin = core.catalogChanges.count
    }

    var readSource: ReadSource {
        switch source {
        case .write(let transaction): return .transaction(transaction)
        case .read(let view): return .view(view)
        }
    }

    /// Runs one datastore write as a statement of the transaction, after noting it for the
    /// nested `perform`s the current task is not inside.
    func statement<R>(_ transaction: WriteTransaction, _ body: () throws(FolioError) -> R) throws(FolioError) -> R {
        // The engine call returns nothing: a result of generic type crossing the module
        // boundary costs a generic-metadata lookup per call (measured: a few % of a persist).
        var result: R?
        try transaction.atomically { () throws(FolioError) in
            // Noted inside the statement, under the lock a nested `perform` takes its
            // savepoint and rolls back under: a write is either before the savepoint, or
            // marks it overtaken before the rollback can run (Persistence+Perform.swift).
            noteWrite()
            result = try body()
        }
        return result!
    }

    /// Marks every running nested `perform` that the current task is not inside as
    /// overtaken: rolling one of them back would also undo this write.
    func noteWrite() {
        let inside = NestedPerform.chain
        nested.withLock { nested in
            guard !nested.isEmpty else { return }
            for savepoint in nested.keys where !inside.contains(savepoint) { nested[savepoint] = true }
        }
    }

    /// The context of `core` the current task is in, if any.
    static func current(for core: PersistenceCore) -> TransactionContext? {
        guard let context = TransactionScope.current, context.core === core,
            !context.ended.load(ordering: .acquiring)
        else { return nil }
        return context
    }
}

enum TransactionScope {
    @TaskLocal static var current: TransactionContext?
}

/// The nested `perform`s the current task runs inside, innermost last (child tasks inherit it).
enum NestedPerform {
    @TaskLocal static var chain: [Savepoint] = []
}

/// Where reads come from: a pinned view, the write transaction (which sees its own
/// writes), or a snapshot of the write transaction (a range read inside `perform`
/// iterates the state as of its start, however the loop's body writes).
enum ReadSource {
    case view(ReadView)
    case transaction(WriteTransaction)
    case snapshot(TransactionSnapshot)

    /// A source that later writes of the transaction do not change: for lazily evaluated
    /// reads (a `Records` stream), pinned when the read starts.
    func pinned() throws(StorageError) -> ReadSource {
        guard case .transaction(let transaction) = self else { return self }
        return .snapshot(try transaction.exclusively { () throws(StorageError) in try transaction.snapshot() })
    }

    func get(_ key: [UInt8], in tree: String) throws(StorageError) -> [UInt8]? {
        switch self {
        case .view(let view): return try view.get(key, in: tree)
        case .transaction(let transaction): return try transaction.get(key, in: tree)
        case .snapshot(let snapshot): return try snapshot.get(key, in: tree)
        }
    }

    /// The value under `key` in `tree` as a slice of the bytes that hold it (read in place).
    func getInPlace(_ key: [UInt8], in tree: String) throws(StorageError) -> ArraySlice<UInt8>? {
        switch self {
        case .view(let view): return try view.getInPlace(key, in: tree)
        case .transaction(let transaction): return try transaction.getInPlace(key, in: tree)
        case .snapshot(let snapshot): return try snapshot.getInPlace(key, in: tree)
        }
    }

    func cursor(in tree: String, range: KeyRange, direction: ScanDirection) throws(StorageError) -> Cursor {
        switch self {
        case .view(let view): return try view.cursor(in: tree, range: range, direction: direction)
        case .transaction(let transaction): return transaction.cursor(in: tree, range: range, direction: direction)
        case .snapshot(let snapshot): return try snapshot.cursor(in: tree, range: range, direction: direction)
        }
    }

    func count(in tree: String) throws(StorageError) -> UInt64 {
        switch self {
        case .view(let view): return try view.count(in: tree)
        case .transaction(let transaction): return try transaction.count(in: tree)
        case .snapshot(let snapshot): return try snapshot.count(in: tree)
        }
    }
}
