import FolioStorage

// What changed in a datastore between two commits: its records as they were at one and as
// they are at the other, one change per identifier.
extension Datastore {
    /// The instances that differ between the commits `start` and `end` (the newest commit if
    /// nil), in identifier order: one change per identifier, with its value at `start`
    /// (`oldValue`) and at `end` (`newValue`), whatever happened to it in between. Each
    /// change's token is `end`'s.
    ///
    /// ```swift
    /// let since = persistence.currentToken
    /// try await books.persist(revised)
    /// for try await change in books.changes(from: since) {
    ///     print(change.kind, change.identifier, change.oldValue?.title ?? "-", change.newValue?.title ?? "-")
    /// }
    /// ```
    ///
    /// `start` may be the later of the two: the changes then lead back to it (what was
    /// created between the two is `deleted`). An instance written and then restored to the
    /// same stored value in between, or created and deleted in between, is no change; so is
    /// a record an index build or removal rewrote (its index keys) with the same JSON.
    ///
    /// The commits between the two name what they changed, and only those identifiers are
    /// read, at both commits; where they do not name every change (a commit that changed
    /// the datastore wholesale, or history the store no longer holds between the two), both
    /// commits' records are read side by side. Both commits must be in the store's history
    /// (``Persistence/oldestReadableToken()``); otherwise the first `next()` throws
    /// `FolioError.storage(.generationUnavailable(requested:oldest:newest:))`. Instances
    /// decode through the format's versions, as reads do; one that does not decode throws
    /// from `next()` and ends the sequence.
    public func changes(
        from start: ObservationToken, to end: ObservationToken? = nil
    ) -> Records<Change<Instance, Identifier>> {
        let schema = self.schema, core = self.core
        return Records(limit: nil) { () async throws(FolioError) -> RecordStream<Change<Instance, Identifier>> in
            core.store.followIfRootFileChanged()
            let (to, differences) = try FolioError.wrap {
                () throws(StorageError) -> (ReadView, TreeDifferences) in
                let from = try core.store.read(at: start.generation)
                let to: ReadView
                if let end { to = try core.store.read(at: end.generation) } else { to = try core.store.read() }
                return (to, try core.store.differences(in: schema.recordsTree, from: from, to: to))
            }
            let token = ObservationToken(generation: to.generation)
            // The views stay open with the differences, which read both as they go.
            let position = DifferencesPosition(differences)
            return RecordStream { () throws(FolioError) -> Change<Instance, Identifier>? in
                var next: KeyDifference?
                repeat {
                    next = try FolioError.wrap { () throws(StorageError) in try position.differences.next() }
                } while next.map { StoredRecord.sameStoredInstance($0.before, $0.after) } == true
                guard let difference = next else { return nil }
                guard let identifier = schema.identifier(from: difference.key) else {
                    throw .corruptRecord(
                        datastore: schema.key, detail: "a record's key is not an identifier of the format")
                }
                let old = try difference.before.map { (bytes) throws(FolioError) in
                    try schema.decode(bytes[...], identifier: difference.key, core: core)
                }
                let new = try difference.after.map { (bytes) throws(FolioError) in
                    try schema.decode(bytes[...], identifier: difference.key, core: core)
                }
                let kind: Change<Instance, Identifier>.Kind = old == nil ? .created : new == nil ? .deleted : .updated
                return Change(kind: kind, identifier: identifier, oldValue: old, newValue: new, token: token)
            }
        }
    }
}

/// The differences a stream's closure advances (they are a value; the closure needs one place).
final class DifferencesPosition {
    var differences: TreeDifferences
    init(_ differences: TreeDifferences) { self.differences = differences }
}
