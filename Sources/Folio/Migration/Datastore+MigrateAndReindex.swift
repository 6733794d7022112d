import FolioStorage
// `migrateAndReindex`: bringing a whole datastore up to its declaration in committed
// batches, with progress: the preparation of Preparation.swift, then the record conversion of
// Migration/Datastore+Conversion.swift.

/// Progress of ``Datastore/migrateAndReindex(progress:)``.
public enum MigrationProgress: Sendable, Equatable {
    /// Comparing the store with the declaration and counting the work. Always reported.
    case evaluating
    /// Building indexes or rewriting records: `current` of `total` done. Reported only when
    /// there is work.
    case working(current: Int, total: Int)
    /// Done; `total` records were processed. Always reported.
    case complete(total: Int)
}

extension Datastore where Access == ReadWrite {
    /// Brings the whole datastore up to its declaration, with progress: builds new or
    /// changed indexes, drops removed ones, and rewrites every record stored in an older
    /// version in the current one.
    ///
    /// Neither is needed for correctness: old records read correctly without it (they are
    /// converted as they are read), and a changed index is built before the first read or
    /// write that needs it. `migrateAndReindex` does that work once, at a time you choose,
    /// and is the place to show progress to a user. It works in committed batches, so it is
    /// resumable: interrupted (the process killed, or the task cancelled, which throws
    /// ``FolioError/cancelled``), the next call continues where it stopped, and the data is
    /// correct at every moment. On a datastore that is already up to date it commits
    /// nothing.
    ///
    /// ```swift
    /// try await books.migrateAndReindex { progress in
    ///     if case .working(let current, let total) = progress { print("\(current)/\(total)") }
    /// }
    /// ```
    nonisolated(nonsending) public func migrateAndReindex(
        progress: ((MigrationProgress) -> Void)? = nil
    ) async throws(FolioError) {
        progress?(.evaluating)
        if let problem = schema.declarationProblem { throw .incompatibleDeclaration(datastore: key, reason: problem) }
        if let context = TransactionContext.current(for: core) {
            // Inside a transaction, the work joins it (batches would wait for the writer
            // this task already holds).
            guard case .write(let transaction) = context.source else { throw .writeInReadOnlySnapshot }
            _ = try await prepare(in: context)
            let (converted, _) = try migrateBatch(in: transaction, from: .unbounded, limit: .max)
            progress?(.complete(total: converted))
            return
        }
        let catalogChangesSeen = core.catalogChanges.count
        var ready = try core.register(schema.signature, key: key) != nil
        // Other processes' commits first (their old records are part of the work).
        let view = try FolioError.wrap { () throws(StorageError) in try core.store.readNewest() }
        // A store whose catalog already matches the declaration needs no preparation
        // transaction: committing one would append an empty generation (an fsync, and a
        // wake-up of every observer and follower) on each launch of an app that calls this.
        // The sample of stale indexes is read once, here, and handed to the first step.
        var sampled: IndexSampleVerdict? = nil
        if !ready {
            let current: Bool
            (current, sampled) = try Preparation.isCurrent(in: .view(view), schema: schema, core: core)
            if current && core.catalogChanges.includesChanges(upTo: view.generation) {
                core.markReady([key], asOf: catalogChangesSeen)
                ready = true
            }
        }
        let recordCount = Int(try FolioError.wrap { () throws(StorageError) in try view.count(in: schema.recordsTree) })
        let indexWork = ready ? 0 : try unbuiltIndexWork(in: view, recordCount: recordCount, sampled: &sampled)
        let migrationWork = try countOldRecords(in: view)
        let total = indexWork + migrationWork
        var done = 0
        if !ready {
            var first = true
            while true {
                // Nil: a transaction preparing it held it, and has ended (it may have prepared it).
                guard let (finished, processed) = try await preparationBatch(checkStale: first, sampled: sampled) else {
                    if core.isReady(key) { break }
                    continue
                }
                first = false
                done += processed
                if total > 0 && processed > 0 { progress?(.working(current: min(done, total), total: total)) }
                if finished { break }
                if Task.isCancelled { throw .cancelled }
            }
            core.markReady([key], asOf: catalogChangesSeen)
        }
        var after: [UInt8]? = nil
        while migrationWork > 0 {
            // Only open a batch when it has a record to convert: old records that no longer
            // decode are left as stored, and a batch of only those would commit nothing but
            // an empty generation (on every launch, for an app that calls this at start-up).
            let view = try FolioError.wrap { () throws(StorageError) in try core.store.readNewest() }
            guard let start = try firstConvertible(in: view, after: after) else { break }
            let (converted, last) = try await persistence.inNewTransaction { (transaction) throws(FolioError) in
                try migrateBatch(in: transaction, from: .included(start), limit: Preparation.batchSize)
            }
            done += converted
            if converted > 0 { progress?(.working(current: min(done, total), total: total)) }
            guard let last else { break }
            after = last
            if Task.isCancelled { throw .cancelled }
        }
        progress?(.complete(total: total))
    }

    /// Records still to process for indexes the catalog does not have built as declared, or
    /// that a sample finds stale: `sampled`, read from `view` if it was not yet.
    private func unbuiltIndexWork(
        in view: ReadView, recordCount: Int,
        sampled: inout IndexSampleVerdict?
    ) throws(FolioError) -> Int {
        guard recordCount > 0 else { return 0 }
        let stored = try FolioError.wrap { () throws(StorageError) in
            try view.get(Array(key.utf8), in: DatastoreLayout.catalogTree)
        }
        guard let stored else { return 0 }
        let entry = try CatalogEntry.decode(stored, datastore: key)
        let needsBuild = schema.indexes.contains { index in
            guard let state = entry.indexes[index.name] else { return true }
            return !state.built || state.fingerprint != index.definition.fingerprint
        }
        if needsBuild { return recordCount }
        if sampled == nil {
            sampled = try Preparation.sampleIndexes(
                in: .view(view), entry: entry, catalog: stored, schema: schema, core: core)
        }
        return sampled?.stale.isEmpty == false ? recordCount : 0
    }
}
