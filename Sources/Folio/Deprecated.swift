import FolioStorage

// Spellings of earlier releases, kept so that apps written against them compile (with a
// warning naming the replacement). Each behaves exactly as it did (most forward to the API
// that replaced them); nothing else in Folio calls them.

/// Progress of ``Datastore/migrateAndReindex(progress:)``, under its earlier name.
@available(*, deprecated, renamed: "MigrationProgress")
public typealias WarmProgress = MigrationProgress

extension Datastore where Access == ReadWrite {
    /// ``migrateAndReindex(progress:)`` under its earlier name, which said neither that it
    /// migrates records nor that it builds indexes.
    @available(*, deprecated, renamed: "migrateAndReindex(progress:)")
    nonisolated(nonsending) public func warm(progress: ((MigrationProgress) -> Void)? = nil) async throws(FolioError) {
        try await migrateAndReindex(progress: progress)
    }

    /// ``deleteWithoutDecoding(_:)`` under its earlier name, which did not say how it
    /// differs from `delete`.
    @available(*, deprecated, renamed: "deleteWithoutDecoding(_:)")
    @discardableResult
    nonisolated(nonsending) public func purge(_ identifier: Identifier) async throws(FolioError) -> Bool {
        try await deleteWithoutDecoding(identifier)
    }
}

extension IndexStorage {
    /// ``covering`` under its earlier name.
    @available(*, deprecated, renamed: "covering")
    public static var direct: IndexStorage { .covering }
}

extension Persistence where Access == ReadWrite {
    /// Makes every commit so far durable, but not the values of ``values`` set outside
    /// transactions and not yet committed: ``makeDurable()`` makes both durable.
    @available(
        *, deprecated,
        message: "use 'try await makeDurable()', which also commits and syncs the values set outside transactions"
    )
    public nonisolated func flush() throws(FolioError) {
        try FolioError.wrap { () throws(StorageError) in try core.store.flush() }
    }
}

extension Datastore {
    /// The first instance (in identifier order) whose value in a one-to-many or many-to-many
    /// index is `value`: what `first(where:)` with an equality on the indexed property
    /// returns (it reads the same index), or the first of `load(value, from: index, limit: 1)`.
    @available(
        *, deprecated,
        message:
            "use first(where: #Predicate { $0.property == value }), which reads the index, or load(_:from:limit: 1)"
    )
    nonisolated(nonsending) public func first<I: MultiValueIndexDeclaration>(
        _ value: I.Value, from index: KeyPath<Format, I>
    ) async throws(FolioError) -> Instance?
    where I.Instance == Instance {
        var iterator = load(value, from: index, limit: 1).makeAsyncIterator()
        return try await iterator.next()
    }
}
