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
        if schema.knownReady.load(ordering: .acquiring) { return .all }
        if let problem = schema.declarationProblem { throw .incompatibleDeclaration(datastore: key, reason: problem) }
        let ready = try core.register(schema.signature, key: key)
        if core.isReadOnly { return .fromCatalog }
        if ready {
            schema.knownReady.store(true, ordering: .releasing)
            return .all
        }
        if let context {
            guard case .write(let transaction) = context.source else { return .fromCatalog }
            if context.prepared.withLock({ $0.contains(key) }) { return .all }
            // One statement: atomic (a failing index build leaves nothing behind) and never
            // interleaved with a sibling task's statements.
            try context.statement(transaction) { () throws(FolioError) in
                _ = try Preparation.step(
                    transaction, schema: self.schema, core: self.core, budget: nil, checkStale: true)
                context.prepared.withLock { _ = $0.insert(key) }
            }
            return .all
        }
        // Usually the store's catalog already matches the declaration (every opening after
        // the one that built it): then there is nothing to write, and no transaction may be
        // committed for it (a commit would append a page and fsync on a pure read).
        let schema = self.schema, core = self.core, persistence = self.persistence
        let view = try FolioError.wrap { () throws(StorageError) in try core.store.read() }
        let (current, sampled) = try Preparation.isCurrent(in: .view(view), schema: schema, core: core)
        if current {
            core.markReady([key])
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
        while true {
            let checkStale = first
            let finished = try await persistence.inNewTransaction { (transaction) throws(FolioError) in
                try Preparation.step(
                    transaction, schema: schema, core: core, budget: Preparation.batchSize,
                    checkStale: checkStale, sampled: sampled
                ).finished
            }
            first = false
            if finished { break }
        }
        core.markReady([key])
        return .all
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
        guard let bytes else { return [] }
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
