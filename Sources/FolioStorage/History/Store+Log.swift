// The commits along the chain, newest first, as `folio log` lists them.

/// One commit as ``Store/log(limit:)`` lists it.
package struct LoggedCommit: Sendable {
    /// The generation the commit created.
    package var generation: UInt64
    /// When it was committed, in microseconds since 1970.
    package var timestamp: UInt64
    /// Why the generation exists: a transaction, the store's creation, a compaction.
    package var kind: CommitKind
    /// What it changed.
    package var changes: ChangeRecord
}

extension Store {
    /// The newest `limit` commits along the chain, newest first, ending early where the chain
    /// ends (the store's first commit, or a file retention removed).
    package func log(limit: Int) throws(StorageError) -> [LoggedCommit] {
        let newest = try read().root
        var history = HistoryReader(store: self, newest: newest, generation: 0, held: nil)
        var result: [LoggedCommit] = []
        var commit = try newest.pages.commit(at: newest.record.commitPage)
        while result.count < limit {
            result.append(
                LoggedCommit(
                    generation: commit.generation, timestamp: commit.timestamp, kind: commit.kind,
                    changes: commit.changes))
            guard let previous = commit.previous else { break }
            let older: CommitRecord
            do throws(StorageError) {
                older = try history.root(at: previous).commit
            } catch .historyUnavailable {
                break
            }
            guard older.generation + 1 == commit.generation else { break }
            commit = older
        }
        return result
    }
}
