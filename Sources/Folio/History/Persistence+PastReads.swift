import FolioStorage

// Reading the store as it was: `read(at:)` pins a past generation instead of the newest.
extension Persistence {
    /// Runs `body` with every read inside it seeing the store exactly as it was at `token`,
    /// the generation of a past commit: every datastore read, query, index and value of
    /// today's API, at the cost of a current read once the generation is found.
    ///
    /// ```swift
    /// let before = persistence.currentToken
    /// try await books.persist(revised)
    /// let old = try await persistence.read(at: before) {
    ///     try await books.load(revised.id)  // the book as it was before
    /// }
    /// ```
    ///
    /// A token comes from ``currentToken``, from an observation event, or from history.
    /// The store holds every generation since its last compaction, and older ones while the
    /// file that compaction replaced is kept (Docs/Format.md §17); ``oldestReadableToken()``
    /// says how far back it reaches now. The first read of a generation walks back along
    /// the commit chain from the newest commit, and later reads find it at once.
    ///
    /// Writes are refused inside it (``FolioError/writeInReadOnlySnapshot``), as in
    /// ``read(_:)``. Inside `perform` or `read`, it reads the past for the time of `body`
    /// and then returns to the enclosing transaction. Indexes are used where that
    /// generation had them built; records of older versions decode through the format's
    /// versions, as they would today. Works on read-only persistences (helper processes) too.
    ///
    /// - Throws: `FolioError.storage(.generationUnavailable(requested:oldest:newest:))` when
    ///   the store does not hold that generation any more (or not yet).
    @discardableResult
    public nonisolated(nonsending) func read<Result>(
        at token: ObservationToken, _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        core.store.followIfRootFileChanged()
        let view = try FolioError.wrap { () throws(StorageError) in try core.store.read(at: token.generation) }
        let context = TransactionContext(core: core, source: .read(view), readsThePast: true)
        defer { context.ended.store(true, ordering: .releasing) }
        return try await TransactionScope.$current.withValue(context) { try await body() }
    }

    /// The oldest commit ``read(at:_:)`` can read now along the chain of commits; a
    /// ``HistoryCheckpoint`` may keep an older one readable apart from it. Walks the store's
    /// commit chain the first time it is asked; later calls answer from what that walk found.
    public nonisolated func oldestReadableToken() throws(FolioError) -> ObservationToken {
        ObservationToken(
            generation: try FolioError.wrap { () throws(StorageError) in try core.store.oldestReadableGeneration() })
    }
}

extension Persistence where Access == ReadOnly {
    /// A read-only `perform` at a past generation: the same as ``read(at:_:)``.
    @discardableResult
    public nonisolated(nonsending) func perform<Result>(
        at token: ObservationToken, _ body: nonisolated(nonsending) () async throws -> Result
    ) async throws -> Result {
        try await read(at: token, body)
    }
}
