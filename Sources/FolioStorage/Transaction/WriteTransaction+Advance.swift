/// Moving a running transaction onto a newer commit, when nothing it saw changed: what lets
/// a transaction that waited for another one (a datastore's preparation, in Folio) read what
/// that one committed, instead of running on a base that cannot commit any more.
extension WriteTransaction {
    /// Makes the newest appended commit (the tip) this transaction's base, if no commit
    /// since its base changed a tree it read or wrote (blind writes included) or the list of
    /// trees it read; returns whether its base is the tip now. Trees it has not touched are
    /// read from the tip from here on.
    ///
    /// Why nothing the transaction observes changes (Docs/Architecture.md invariant 7): its
    /// view is its base's trees overlaid with its own writes. Every tree it touched has, at
    /// the tip, the catalog entry it had in the base (the same check as a commit's rebase,
    /// ``TreeReads/changes(base:tip:)``), so its state of those trees, its writes included,
    /// is the same over either commit; every tree it has not touched it has never seen. So
    /// the transaction's view after the move is a consistent one (the tip's, with its own
    /// writes), as it would have been had it begun on the tip, and its commit is checked
    /// against the read set as before (entries noted before the move equal the tip's).
    /// Refused (false) when it spilled (its run follows the base it spilled over), when the
    /// store switched files (compaction), or when it is finished, broken or conflicted.
    package func advanceToTip() -> Bool {
        guarded.withLock { _ -> Bool in
            guard !contents.finished, contents.broken == nil, !contents.conflicted, contents.spill.end == nil else {
                return false
            }
            let tip = store.tipRoot
            let base = contents.base
            if tip.record.generation == base.record.generation { return true }
            guard tip.file === base.file,
                let changes = try? reads.changes(base: base, tip: tip),
                changes.conflicting.isEmpty, changes.writtenBlind.isEmpty
            else { return false }
            contents.base = tip
            return true
        }
    }
}

extension Store {
    /// The newest appended commit, which the next commit follows.
    var tipRoot: CommittedRoot {
        state.withLock { $0.tip }
    }
}
