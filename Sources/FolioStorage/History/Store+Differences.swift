// What changed between two generations of a tree: the keys the change records of the
// commits between them name, or both generations read side by side.

extension Store {
    /// The keys of `tree` whose values differ between the generations `from` and `to` see,
    /// in key order, each with its value in both. Either view may be the older one.
    ///
    /// ```swift
    /// var differences = try store.differences(in: "books", from: try store.read(at: token), to: try store.read())
    /// while let difference = try differences.next() { print(difference.key, difference.after == nil) }
    /// ```
    ///
    /// The commits between the two generations name the keys they changed (their change
    /// records, Docs/Format.md §7): those keys are looked up in both generations, a few
    /// page reads each. Where they do not name every key (a commit changed the tree
    /// wholesale or dropped it, the chain between the two left the store's files, or the
    /// commits in between are more than the tree has keys), both generations of the tree are
    /// read side by side instead. Either way a key that has the same value in both is not a
    /// difference.
    public func differences(in tree: String, from: ReadView, to: ReadView) throws(StorageError) -> TreeDifferences {
        try TreeDifferences(tree: tree, from: from, to: to, named: try keysNamed(for: tree, between: from, and: to))
    }

    /// Every key of `tree` that the change records of the commits after the older view's
    /// generation, up to the newer view's, name, in key order; nil when they may not name
    /// every key that differs.
    func keysNamed(for tree: String, between a: ReadView, and b: ReadView) throws(StorageError) -> [[UInt8]]? {
        do throws(StorageError) {
            return try changeRecordKeys(for: tree, between: a, and: b)
        } catch .corruption {
            // A damaged commit page costs its change record only (Docs/Format.md §14): both
            // generations are still readable, side by side.
            return nil
        }
    }

    private func changeRecordKeys(
        for tree: String, between a: ReadView, and b: ReadView
    ) throws(StorageError)
        -> [[UInt8]]?
    {
        let (older, newer) = a.generation <= b.generation ? (a.root, b.root) : (b.root, a.root)
        // Walking more commits than the tree has keys costs more than reading it whole.
        let budget = max(64, Int(min(max(try a.count(in: tree), try b.count(in: tree)), UInt64(Int.max / 2))))
        var history = HistoryReader(store: self, newest: newer, generation: older.record.generation, held: older.file)
        var keys = Set<[UInt8]>()
        var (location, commit) = (newer.record.location, try newer.pages.commit(at: newer.record.commitPage))
        var walked = 0
        while commit.generation > older.record.generation {
            if commit.changes.droppedTrees.contains(tree) { return nil }
            if let changes = commit.changes.trees.first(where: { $0.tree == tree }) {
                if changes.isChangedWholesale { return nil }
                for entry in changes.entries { keys.insert(entry.key) }
            }
            walked += 1
            guard walked <= budget, keys.count <= budget, let previous = commit.previous else { return nil }
            let previousCommit: CommitRecord
            do throws(StorageError) {
                previousCommit = try history.root(at: previous).commit
            } catch .historyUnavailable {
                return nil
            }
            guard previousCommit.generation + 1 == commit.generation else { return nil }
            (location, commit) = (previous, previousCommit)
        }
        // The chain must have reached the older view's own commit, not a commit of the same
        // generation in another history (a writer that fell back to an older root after
        // damage): its place and its chain value.
        guard commit.generation == older.record.generation, location == older.record.location,
            try history.file(location.fileNumber).storedChecksum(at: location.address)
                == (try older.file.chainValue(of: older.record))
        else { return nil }
        return keys.sorted { $0.lexicographicallyPrecedes($1) }
    }
}
