import FolioStorage
/// Bringing a store up to a datastore's declaration: the catalog entry, dropped and rebuilt
/// indexes (Docs/Guide.md, "Index evolution").
extension Datastore {
    /// Makes the datastore usable for the caller's reads and writes.
    ///
    /// Read-write persistence, outside any transaction: on first use in this process, the
    /// catalog entry is compared with the declaration; removed or changed indexes are
    /// dropped, new or changed ones are built (in batches of committed transactions, so an
    /// interrupted build resumes), and only then does the caller proceed: a read through an
    /// index never sees it half-built. Inside a `perform`, the same work joins the
    /// transaction. Read-only persistences and snapshots cannot build: they use the indexes
    /// the catalog of their snapshot says are built, and refuse the others.
    nonisolated(nonsending) func prepare(in context: TransactionContext?) async throws(FolioError) -> IndexAvailability
    {
        if let context, context.readsThePast {
            // A past generation's catalog decides what it holds: preparing applies to the newest.
            if let problem = schema.declarationProblem {
                throw .incompatibleDeclaration(datastore: key, reason: problem)
            }
            return .fromCatalog
        }
        if schema.isKnownReady(in: core) { return .all }
        if let problem = schema.declarationProblem { throw .incompatibleDeclaration(datastore: key, reason: problem) }
        // Taken before the catalog is read; the view compared must also include every
        // change counted by then (CatalogChanges), or nothing is marked ready from it.
        let catalogChangesSeen = core.catalogChanges.count
        let readyAt = try core.register(schema.signature, key: key)
        if core.isReadOnly { return .fromCatalog }
        if let readyAt {
            schema.knownReadyAt.store(readyAt, ordering: .releasing)
            return .all
        }
        if let context {
            guard case .write(let transaction) = context.source else { return .fromCatalog }
            return try await prepare(in: context, transaction: transaction)
        }
        // Usually the store's catalog already matches the declaration (every opening after
        // the one that built it): then there is nothing to write, and no transaction may be
        // committed for it (a commit would append a page and fsync on a pure read).
        let schema = self.schema, core = self.core
        let view = try FolioError.wrap { () throws(StorageError) in try core.store.readNewest() }
        let (current, sampled) = try Preparation.isCurrent(in: .view(view), schema: schema, core: core)
        if current && core.catalogChanges.includesChanges(upTo: view.generation) {
            core.markReady([key], asOf: catalogChangesSeen)
            return .all
        }
        // One preparation per datastore at a time: a concurrent first use waits for its turn
        // behind the one running, then finds the datastore ready. A caller cancelled while it
        // waits (for its turn or, preparing, for the writer slot) throws `cancelled`, and the
        // next in line goes on from the batches committed so far.
        let turn = core.preparationTurn(for: key)
        do {
            try await turn.acquire()
        } catch {
            throw .cancelled
        }
        defer { turn.release() }
        if core.isReady(key) { return .all }
        var first = true
        while !core.isReady(key) {
            guard
                let finished = try await preparationBatch(checkStale: first, sampled: sampled)?.finished
            else { continue }
            first = false
            if finished { break }
        }
        core.markReady([key], asOf: catalogChangesSeen)
        return .all
    }

    /// Prepares the datastore inside `context`'s transaction (a first use inside `perform`),
    /// holding its preparation hold until the transaction ends (``PreparationHolds``), so
    /// that a concurrent first use waits for this one instead of preparing it too.
    ///
    /// A transaction that waited finds the datastore prepared by the one it waited for, if
    /// that one committed: it moves onto the newest commit (`advanceToTip()`), which is
    /// invisible to it (nothing it touched changed) and lets it read the preparation instead
    /// of repeating it. If it cannot move (it touched a tree a commit since its base
    /// changed: its commit will conflict and its body run again alone), or if the holder
    /// rolled back, or if it may not wait (it holds another datastore's hold, or runs in the
    /// exclusive turn), it prepares the datastore in its own transaction, as before.
    nonisolated(nonsending) private func prepare(
        in context: TransactionContext, transaction: WriteTransaction
    ) async throws(FolioError) -> IndexAvailability {
        if context.prepared.withLock({ $0.contains(key) }) { return .all }
        let outcome = await core.preparationHolds.take(key, for: context, mayWait: !context.isExclusive)
        if outcome == .waited {
            // Moved onto the newest commit even if the holder rolled back: a preparation
            // outside any transaction commits batches, and this one goes on from them.
            let advanced = transaction.advanceToTip()
            if advanced && core.isReady(key) { return .all }
            // Holding it now, unless a third transaction took it first (it goes on without).
            _ = core.preparationHolds.tryTake(key, for: context)
        } else if outcome == .taken && core.isReady(key) && transaction.advanceToTip() {
            // Another transaction prepared it and ended between the first look and the hold.
            return .all
        }
        // One statement: atomic (a failing index build leaves nothing behind) and never
        // interleaved with a sibling task's statements.
        try context.statement(transaction) { () throws(FolioError) in
            // A sibling task sharing the transaction may have prepared it meanwhile.
            guard !context.prepared.withLock({ $0.contains(key) }) else { return }
            _ = try Preparation.step(
                transaction, schema: self.schema, core: self.core, budget: nil, checkStale: true)
            context.prepared.withLock { _ = $0.insert(key) }
        }
        return .all
    }

    /// One batch of a preparation outside any transaction, in a transaction of its own that
    /// holds the datastore's preparation hold. Returns nil, having waited for it, if another
    /// transaction held it: that one may have prepared the datastore (the caller looks).
    /// The wait comes before the batch asks for its writer turn; inside the turn the hold is
    /// only tried, never waited for (PreparationHolds says why). If a transaction took it in
    /// between, the batch runs without it, as any concurrent preparation does: one of the two
    /// then conflicts on the catalog and runs again.
    nonisolated(nonsending) func preparationBatch(
        checkStale: Bool, sampled: IndexSampleVerdict?
    ) async throws(FolioError) -> (finished: Bool, processed: Int)? {
        let schema = self.schema, core = self.core, key = self.key
        if core.preparationHolds.isHeld(key) {
            await core.preparationHolds.wait(for: key)
            return nil
        }
        return try await persistence.inNewTransaction { (transaction) throws(FolioError) in
            if let context = TransactionContext.current(for: core) {
                _ = core.preparationHolds.tryTake(key, for: context)
            }
            return try Preparation.step(
                transaction, schema: schema, core: core, budget: Preparation.batchSize,
                checkStale: checkStale, sampled: sampled)
        }
    }

    /// The declared indexes the catalog in `source` says are built with the declared
    /// fingerprint (read-only persistences and snapshots).
    func usableIndexes(in source: ReadSource) throws(FolioError) -> Set<String> {
        let bytes = try FolioError.wrap { () throws(StorageError) in
            try source.get(Array(key.utf8), in: DatastoreLayout.catalogTree)
        }
        if let cached = core.registry.withLock({ registry -> Set<String>? in
            guard let registration = registry[key], registration.catalogBytes == bytes, bytes != nil else { return nil }
            return registration.usableIndexes
        }) {
            return cached
        }
        // A datastore the snapshot does not hold has no records: every index of it is
        // complete (empty), and a read through one finds nothing rather than failing.
        guard let bytes else { return Set(schema.indexes.map(\.name)) }
        let entry = try CatalogEntry.decode(bytes, datastore: key)
        if entry.identifierType != schema.signature.identifierType {
            throw .incompatibleDeclaration(
                datastore: key,
                reason:
                    "the store's identifiers are \(entry.identifierType), the format's \(schema.signature.identifierType)"
            )
        }
        var usable = Set<String>()
        for index in schema.indexes {
            if let state = entry.indexes[index.name], state.built, state.fingerprint == index.definition.fingerprint {
                usable.insert(index.name)
            }
        }
        // An index a sample finds stale is as good as unbuilt here: this persistence cannot
        // rebuild it (the writer does, on its first use), so it refuses to read it.
        usable.subtract(
            try Preparation.sampleIndexes(in: source, entry: entry, catalog: bytes, schema: schema, core: core).stale
                .keys)
        core.registry.withLock { registry in
            registry[key]?.catalogBytes = bytes
            registry[key]?.usableIndexes = usable
        }
        return usable
    }

    /// Throws unless `index` may be read.
    func require(_ index: SchemaIndex<Format.Instance>, in usable: Set<String>?) throws(FolioError) {
        if let usable, !usable.contains(index.name) { throw .indexNotBuilt(datastore: key, index: index.name) }
    }
}
