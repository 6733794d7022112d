// The commits along the chain, newest first, as `folio log` lists them and undo looks for
// the action to revert.

/// One commit as ``Store/forEachCommit(_:)`` finds it.
package struct LoggedCommit: Sendable {
    /// The generation the commit created.
    package var generation: UInt64
    /// When it was committed, in microseconds since 1970.
    package var timestamp: UInt64
    /// Why the generation exists: a transaction, the store's creation, a compaction.
    package var kind: CommitKind
    /// What it changed.
    package var changes: ChangeRecord
    /// Where its commit page is.
    package var location: CommitLocation
    /// Its commit page's chain value (stored checksum), when the walk read the page; nil
    /// for the commit the walk began at.
    package var chain: UInt32?

    /// Whether the commit changed `key` of `tree`.
    package func changed(_ key: [UInt8], in tree: String) -> Bool {
        changes.trees.contains { $0.tree == tree && ($0.isChangedWholesale || $0.entries.contains { $0.key == key }) }
    }
}

extension Store {
    /// Calls `body` with the commits along the chain from `view`'s generation (the newest
    /// published if nil), newest first, until it returns false or the chain ends (the
    /// store's first commit, or a file retention removed).
    package func forEachCommit(
        from view: ReadView? = nil, _ body: (LoggedCommit) throws(StorageError) -> Bool
    ) throws(StorageError) {
        try forEachCommit(from: view, holding: nil, body)
    }

    /// ``forEachCommit(from:_:)``, reading `held`, a snapshot file the caller has open,
    /// through that descriptor (it survives its removal by retention).
    func forEachCommit(
        from view: ReadView?, holding held: SnapshotFile?, _ body: (LoggedCommit) throws(StorageError) -> Bool
    ) throws(StorageError) {
        let newest: CommittedRoot
        if let view { newest = view.root } else { newest = try read().root }
        var history = HistoryReader(store: self, newest: newest, generation: 0, held: held)
        var commit = try newest.pages.commit(at: newest.record.commitPage)
        var (location, chain): (CommitLocation, UInt32?) = (newest.record.location, nil)
        while true {
            let logged = LoggedCommit(
                generation: commit.generation, timestamp: commit.timestamp, kind: commit.kind, changes: commit.changes,
                location: location, chain: chain)
            guard try body(logged), let previous = commit.previous else { return }
            let older: (commit: CommitRecord, chain: UInt32)
            do throws(StorageError) {
                older = try history.commitPage(at: previous)
            } catch .historyUnavailable {
                return
            }
            guard older.commit.generation + 1 == commit.generation else { return }
            (commit, location, chain) = (older.commit, previous, older.chain)
        }
    }

    /// The newest `limit` commits along the chain, newest first, ending early where the chain
    /// ends.
    package func log(limit: Int) throws(StorageError) -> [LoggedCommit] {
        var result: [LoggedCommit] = []
        guard limit > 0 else { return result }
        try forEachCommit { commit in
            result.append(commit)
            return result.count < limit
        }
        return result
    }
}
