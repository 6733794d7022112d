import FolioStorage
/// One datastore of a persistence: records of one `Codable` type, found by identifier or
/// through the indexes its format declares.
///
/// Get one with ``Persistence/datastore(for:)``. Reads work on every persistence; writes
/// (``persist(_:)``, ``delete(_:)->Datastore<Format,Access>.Instance``, …) only where `Access == ReadWrite`. Every call is its
/// own transaction, unless it runs inside ``Persistence/perform(_:)-9rdbv`` (one atomic write
/// transaction) or ``Persistence/read(_:)`` (one snapshot).
public struct Datastore<Format: DatastoreFormat, Access: AccessMode>: Sendable {
    /// The persistence the datastore belongs to.
    public let persistence: Persistence<Access>
    let schema: DatastoreSchema<Format>

    init(persistence: Persistence<Access>, schema: DatastoreSchema<Format>) {
        self.persistence = persistence
        self.schema = schema
    }

    /// The datastore's key (its name in the persistence).
    public var key: String { schema.key }

    /// The names of the declared indexes, in declaration order.
    public var indexNames: [String] { schema.indexes.map(\.name) }

    var core: PersistenceCore { persistence.core }

    // MARK: Running reads and writes

    /// Runs a read in the current transaction or snapshot, or in a fresh snapshot.
    nonisolated(nonsending) func withRead<R>(
        _ body: (ReadSource, Set<String>?) throws(FolioError) -> R
    ) async throws(FolioError) -> R {
        let context = TransactionContext.current(for: core)
        if context == nil { core.store.followIfRootFileChanged() }
        let availability = try await prepare(in: context)
        if let context {
            guard case .write(let transaction) = context.source else {
                return try body(context.readSource, try resolve(availability, in: context))
            }
            // Whole statements only: tasks sharing the transaction never see one half-done.
            return try transaction.exclusively { () throws(FolioError) -> R in
                try body(context.readSource, try availability.resolve(context.readSource, self))
            }
        }
        let view = try FolioError.wrap { () throws(StorageError) in try core.store.read() }
        return try body(.view(view), try availability.resolve(.view(view), self))
    }

    /// The read source and index availability a lazily evaluated read (a `Records`
    /// sequence) uses: the current transaction's, or a snapshot pinned now.
    nonisolated(nonsending) func readSource() async throws(FolioError) -> (ReadSource, Set<String>?) {
        let context = TransactionContext.current(for: core)
        if context == nil { core.store.followIfRootFileChanged() }
        let availability = try await prepare(in: context)
        let source: ReadSource
        if let context {
            if case .read = context.source { return (context.readSource, try resolve(availability, in: context)) }
            source = try FolioError.wrap { () throws(StorageError) in try context.readSource.pinned() }
        } else {
            source = .view(try FolioError.wrap { () throws(StorageError) in try core.store.read() })
        }
        return (source, try availability.resolve(source, self))
    }
}

extension Datastore {
    /// `availability` resolved for a read scope's snapshot, looked up once per scope: a
    /// catalog read and a comparison with the registered declaration per call cost a past
    /// generation's point reads a quarter of their time.
    func resolve(_ availability: IndexAvailability, in context: TransactionContext) throws(FolioError) -> Set<String>? {
        guard case .fromCatalog = availability else { return nil }
        if let known = context.usableIndexes.withLock({ $0[key] }) { return known }
        let usable = try usableIndexes(in: context.readSource)
        context.usableIndexes.withLock { $0[key] = usable }
        return usable
    }
}

extension Datastore where Access == ReadWrite {
    /// Runs a write in the current transaction, or in a new one that commits at once.
    nonisolated(nonsending) func withWrite<R>(
        _ body: (WriteTransaction) throws(FolioError) -> R
    ) async throws(FolioError) -> R {
        let nothing = { () throws(FolioError) in }
        return try await withWrite(beforehand: nothing) { (transaction, _) throws(FolioError) -> R in
            try body(transaction)
        }
    }

    /// ``withWrite(_:)`` with work that needs nothing of the store done first, once the
    /// datastore is prepared (so a refused declaration is reported before any of it fails)
    /// and before a new transaction begins: a transaction of its own holds the store's lock,
    /// which writers in other processes wait for, from its beginning to its commit.
    nonisolated(nonsending) func withWrite<Prepared, R>(
        beforehand: () throws(FolioError) -> Prepared,
        _ body: (WriteTransaction, Prepared) throws(FolioError) -> R
    ) async throws(FolioError) -> R {
        if let context = TransactionContext.current(for: core) {
            guard case .write(let transaction) = context.source else { throw .writeInReadOnlySnapshot }
            _ = try await prepare(in: context)
            let prepared = try beforehand()
            // One statement: if it throws, the transaction is exactly as before the call
            // (nothing half-applied), and concurrent child tasks' statements never interleave.
            return try context.statement(transaction) { () throws(FolioError) -> R in try body(transaction, prepared) }
        }
        let catalogChangesSeen = core.catalogChanges.count
        _ = try await prepare(in: nil)
        let prepared = try beforehand()
        let schema = self.schema, core = self.core, key = self.key
        return try await persistence.inNewTransaction { (transaction) throws(FolioError) -> R in
            // The transaction's turn caught up on other writers after the preparation above,
            // and may have adopted another declaration's preparation of the catalog: this
            // one is compared with it again, in this transaction, before anything is written
            // (an older declaration is refused rather than writing over a newer one).
            if core.catalogChanges.count != catalogChangesSeen {
                _ = try Preparation.step(transaction, schema: schema, core: core, budget: nil, checkStale: true)
                TransactionContext.current(for: core)?.prepared.withLock { _ = $0.insert(key) }
            }
            return try body(transaction, prepared)
        }
    }
}

/// Which indexes a read may use.
enum IndexAvailability {
    /// All declared indexes are built (a prepared read-write datastore).
    case all
    /// Decided by the catalog in the snapshot being read (read-only persistences and
    /// snapshots taken before preparation).
    case fromCatalog

    func resolve<Format, Access>(
        _ source: ReadSource, _ datastore: Datastore<Format, Access>
    ) throws(FolioError) -> Set<String>? {
        switch self {
        case .all: return nil
        case .fromCatalog: return try datastore.usableIndexes(in: source)
        }
    }
}
