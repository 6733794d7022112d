// Spellings of earlier releases, kept so that apps written against them compile (with a
// warning naming the replacement). Each forwards to the API that replaced it and behaves
// exactly as it; nothing else in Folio calls them.

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
}
