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
        let (older, newer) = a.generation <= b.generation ? (a, b) : (b, a)
        let target = older.root.record
        // Walking more commits than the tree has keys costs more than reading it whole.
        let budget = max(64, Int(min(max(try a.count(in: tree), try b.count(in: tree)), UInt64(Int.max / 2))))
        var keys = Set<[UInt8]>()
        var walked = 0
        var reached: LoggedCommit?
        try forEachCommit(from: newer, holding: older.root.file) { (commit) throws(StorageError) -> Bool in
            if commit.generation <= target.generation {
                reached = commit
                return false
            }
            if commit.changes.droppedTrees.contains(tree) { return false }
            if let changes = commit.changes.trees.first(where: { $0.tree == tree }) {
                if changes.isChangedWholesale { return false }
                for entry in changes.entries { keys.insert(entry.key) }
            }
            walked += 1
            return walked <= budget && keys.count <= budget
        }
        // The walk must have reached the older view's own commit (not stopped at a tree
        // changed wholesale or dropped, the budget or the chain's end), and not a commit of
        // the same generation in another history (a writer that fell back to an older root
        // after damage): its place and its chain value.
        guard let reached, reached.generation == target.generation, reached.location == target.location else {
            return nil
        }
        var chain = reached.chain
        if chain == nil { chain = try newer.root.file.chainValue(of: newer.root.record) }
        guard chain == (try older.root.file.chainValue(of: target)) else { return nil }
        return keys.sorted { $0.lexicographicallyPrecedes($1) }
    }
}
