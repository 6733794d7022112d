import FolioStorage

// Declaring how much history the store keeps, and checkpoints: written into the store
// (the tree `folio/retention`, Docs/Format.md §17.1), where every writer process's removal
// of replaced files reads them.
extension Persistence where Access == ReadWrite {
    /// Declares how much of its past the store keeps from now on (a count of generations, a
    /// duration, a byte budget), for every process that writes it: the declaration is
    /// committed into the store.
    ///
    /// ```swift
    /// try await persistence.setHistoryRetention(.generations(10_000))
    /// ```
    ///
    /// A longer retention keeps what is still there when it is committed; what an earlier,
    /// shorter one let go does not come back. A shorter one lets replaced files go at the
    /// next check (after the next commit of this process, or of another process within its
    /// retention grace period). Writers of Folio builds that predate retention remove
    /// replaced files by their own rules.
    ///
    /// - Throws: ``FolioError/invalidArgument(name:reason:)`` for a rule that is not positive.
    public nonisolated(nonsending) func setHistoryRetention(_ retention: HistoryRetention) async throws {
        let policy = RetentionLayout.encodePolicy(try retention.stored())
        try await perform {
            try retentionStatement { (transaction) throws(StorageError) in
                if retention == .compactionOnly {
                    _ = try transaction.remove(RetentionLayout.policy, from: RetentionLayout.tree)
                } else {
                    _ = try transaction.put(policy, for: RetentionLayout.policy, in: RetentionLayout.tree)
                }
            }
        }
    }

    /// Keeps the store as it is now under `name` until ``releaseCheckpoint(_:)``, whatever
    /// the ``HistoryRetention``, and returns it: ``Persistence/read(at:_:)`` reads it with
    /// its token. A checkpoint of the same name is replaced.
    ///
    /// ```swift
    /// let checkpoint = try await persistence.checkpoint("before import")
    /// ```
    ///
    /// Values set outside transactions and not committed yet are committed first, so the
    /// checkpoint holds them. Refused inside a write transaction
    /// (`StorageError.writeTransactionInProgress`): what it keeps must be committed.
    ///
    /// - Throws: ``FolioError/invalidArgument(name:reason:)`` for an empty name or one longer
    ///   than 255 bytes of UTF-8.
    @discardableResult
    public nonisolated(nonsending) func checkpoint(_ name: String) async throws -> HistoryCheckpoint {
        try Self.checkCheckpointName(name)
        if let context = TransactionContext.current(for: core), case .write = context.source {
            throw FolioError.storage(.writeTransactionInProgress)
        }
        core.store.followIfRootFileChanged()
        try await values.flush()
        let store = core.store
        while true {
            let marked = try await perform { () async throws -> StoredCheckpoint? in
                try retentionStatement { (transaction) throws(StorageError) -> StoredCheckpoint in
                    let base = transaction.baseView
                    let checkpoint = StoredCheckpoint(
                        name: name, generation: base.generation, timestamp: base.commitTimestamp,
                        location: base.commitLocation)
                    _ = try transaction.put(
                        RetentionLayout.encodeCheckpoint(checkpoint), for: RetentionLayout.checkpointKey(name),
                        in: RetentionLayout.tree)
                    return checkpoint
                }
            }
            guard let marked else { throw FolioError.storage(.writeTransactionInProgress) }
            // The marked generation must be in the file the checkpoint's commit went into:
            // that file is current, so any removal of it comes after a compaction, whose
            // check reads a declaration that holds the checkpoint. A compaction may have
            // replaced the marked generation's file between the transaction's start and its
            // commit, and another process's removal, which read the declaration before this
            // commit, may take that file: then mark again, from the newer file.
            do throws(StorageError) {
                _ = try store.read(at: marked.generation)
                guard try store.read().commitLocation.fileNumber == marked.location.fileNumber else { continue }
                return HistoryCheckpoint(marked)
            } catch .generationUnavailable {
                continue
            } catch {
                throw FolioError.storage(error)
            }
        }
    }

    /// Releases the checkpoint named `name`: its generation is kept from then on only if the
    /// ``HistoryRetention`` keeps it. Returns false if there was none of that name.
    ///
    /// ```swift
    /// try await persistence.releaseCheckpoint("before import")
    /// ```
    @discardableResult
    public nonisolated(nonsending) func releaseCheckpoint(_ name: String) async throws -> Bool {
        try Self.checkCheckpointName(name)
        return try await perform {
            try retentionStatement { (transaction) throws(StorageError) -> Bool in
                try transaction.remove(RetentionLayout.checkpointKey(name), from: RetentionLayout.tree)
            } ?? false
        }
    }

    /// Runs `body` as a statement of the current write transaction (nil outside one).
    private nonisolated func retentionStatement<Result>(
        _ body: (WriteTransaction) throws(StorageError) -> Result
    ) throws(FolioError) -> Result? {
        guard let context = TransactionContext.current(for: core), case .write(let transaction) = context.source
        else { return nil }
        return try context.statement(transaction) { () throws(FolioError) -> Result in
            try FolioError.wrap { () throws(StorageError) -> Result in try body(transaction) }
        }
    }

    private static func checkCheckpointName(_ name: String) throws(FolioError) {
        guard !name.isEmpty, name.utf8.count <= 255 else {
            throw .invalidArgument(name: "name", reason: "a checkpoint's name is 1 to 255 bytes of UTF-8")
        }
    }
}

extension Persistence {
    /// The history the store declares it keeps (``setHistoryRetention(_:)``), as of the
    /// newest generation this persistence sees.
    public nonisolated func historyRetention() throws(FolioError) -> HistoryRetention {
        HistoryRetention(try declaredHistory())
    }

    /// The store's checkpoints, oldest generation first: those whose commit the store holds
    /// (a backup copies the checkpoints of its source, but not their history).
    ///
    /// ```swift
    /// for checkpoint in try persistence.checkpoints() { print(checkpoint.name, checkpoint.token) }
    /// ```
    public nonisolated func checkpoints() throws(FolioError) -> [HistoryCheckpoint] {
        let held = try FolioError.wrap { () throws(StorageError) -> [StoredCheckpoint] in
            try core.store.heldCheckpoints(in: try core.store.readNewest())
        }
        return held.map(HistoryCheckpoint.init).sorted {
            ($0.token, $0.name) < ($1.token, $1.name)
        }
    }

    private nonisolated func declaredHistory() throws(FolioError) -> RetainedHistory {
        try FolioError.wrap { () throws(StorageError) -> RetainedHistory in
            try RetentionLayout.read(in: try core.store.readNewest())
        }
    }
}
