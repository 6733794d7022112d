// Applying many changes to a copy-on-write tree in one pass: one descent that splits the
// sorted changes among the children it visits, one copy of each touched page, and the
// size bounds restored once per branch on the way back up.
extension TreeEditor {
    /// What applying part of a batch did to a subtree.
    private enum BatchResult {
        /// Nothing changed (every removal named an absent key): the subtree is as it was,
        /// not even copied.
        case unchanged
        /// The subtree's new root, or nil if the batch removed every key it held. Every
        /// node below the root is within the size bounds; the root itself may be any size,
        /// and a branch root may have a single child (out of bounds itself).
        case changed(MutableNode?)
    }

    /// Applies `values[i]` to `keys[i]` for every `i` (a value is put, nil removes the key);
    /// `keys` must be strictly ascending. Returns each key's previous value (nil: it was
    /// absent), as ``put(_:_:in:)`` and ``remove(_:in:)`` would, key by key.
    ///
    /// Each page on the paths to the changed leaves is read once and copied once, whatever
    /// the number of changes it receives (a committed page is copied only if a change
    /// actually applies under it); an emptied page is dropped instead of merged.
    func apply(_ keys: [[UInt8]], _ values: [LeafValue?], in tree: TreeState) throws(StorageError) -> [LeafValue?] {
        var previous = [LeafValue?](repeating: nil, count: keys.count)
        guard !keys.isEmpty else { return previous }
        guard let root = tree.root else {
            // An empty tree: the puts, in order, are its one (perhaps oversized) leaf.
            var entries = LeafEntries()
            for index in keys.indices {
                if let value = values[index] { entries.append(key: keys[index][...], value: value) }
            }
            guard !entries.isEmpty else { return previous }
            tree.editChangedANode = true
            tree.root = try normalizeRoot(MutableNode(leaf: entries, epoch: epoch), in: tree)
            return previous
        }
        switch try apply(keys, values, keys.indices, at: root, previous: &previous, in: tree) {
        case .unchanged: break
        case .changed(nil): tree.root = nil
        case .changed(let node?): tree.root = try normalizeRoot(node, in: tree)
        }
        return previous
    }

    private func apply(
        _ keys: [[UInt8]], _ values: [LeafValue?], _ range: Range<Int>, at ref: NodeRef,
        previous: inout [LeafValue?], in tree: TreeState
    ) throws(StorageError) -> BatchResult {
        let loaded = try reader.load(ref)
        if case .leaf(let entries) = loaded {
            return try applyToLeaf(keys, values, range, ref: ref, leaf: entries, previous: &previous, in: tree)
        }
        // Partition the changes among the children: child `i` holds the keys from
        // separator `i - 1` (included) to separator `i` (excluded).
        let separators = loaded.branchKeys
        var outcomes: [(child: Int, result: BatchResult)] = []
        var start = range.lowerBound
        while start < range.upperBound {
            let child = ByteOrder.upperBound(separators, keys[start])
            var end = range.upperBound
            if child < separators.count { end = Self.lowerBound(keys, start..<range.upperBound, separators[child]) }
            let result = try apply(keys, values, start..<end, at: loaded.child(child), previous: &previous, in: tree)
            if case .changed = result { outcomes.append((child, result)) }
            start = end
        }
        guard !outcomes.isEmpty else { return .unchanged }
        let node = try makeMutable(ref, in: tree)
        // Emptied children go with the separator that bounds them (their range joins a
        // neighbour's, which holds no key of it), from the right so indexes stay valid.
        for (child, result) in outcomes.reversed() {
            guard case .changed(let changed) = result else { continue }
            if let changed {
                node.children[child] = .mutable(changed)
            } else if node.keys.isEmpty {
                return .changed(nil)
            } else {
                node.children.remove(at: child)
                node.keys.remove(at: child > 0 ? child - 1 : 0)
            }
        }
        try restoreChildBounds(of: node, in: tree)
        node.size = MutableNode.branchSize(keys: node.keys)
        return .changed(node)
    }

    /// Merges the sorted changes `range` into one leaf: one pass over both, one copy of
    /// the leaf, and none if no change applies.
    private func applyToLeaf(
        _ keys: [[UInt8]], _ values: [LeafValue?], _ range: Range<Int>, ref: NodeRef,
        leaf: LeafEntries, previous: inout [LeafValue?], in tree: TreeState
    ) throws(StorageError) -> BatchResult {
        // Whether any change applies is known before anything is built: a batch of removals
        // of absent keys leaves the leaf as it was, not even copied.
        var old = leaf.lowerBound(keys[range.lowerBound])
        let first = old
        var changed = false
        for index in range {
            let key = keys[index][...]
            while old < leaf.count, leaf.compareKey(old, with: key) < 0 { old += 1 }
            let present = old < leaf.count && leaf.compareKey(old, with: key) == 0
            if present {
                previous[index] = leaf.value(old)
                old += 1
            }
            if values[index] != nil || present { changed = true }
        }
        guard changed else { return .unchanged }
        var merged = LeafEntries(leaf, range: 0..<first)
        old = first
        for index in range {
            let key = keys[index][...]
            while old < leaf.count, leaf.compareKey(old, with: key) < 0 {
                merged.append(entry: old, of: leaf)
                old += 1
            }
            if old < leaf.count && leaf.compareKey(old, with: key) == 0 { old += 1 }
            if let value = values[index] { merged.append(key: key, value: value) }
        }
        merged.append(contentsOf: leaf, range: old..<leaf.count)
        let node = try makeMutable(ref, in: tree)
        // From here on the tree is being changed: an error above leaves it half-edited.
        tree.editChangedANode = true
        guard !merged.isEmpty else { return .changed(nil) }
        node.entries = merged
        return .changed(node)
    }

    /// Brings every child of `parent` within the size bounds: an oversized child is split
    /// (``split(_:)``), an undersized one merged with or refilled from a neighbour, until
    /// every child is within bounds or `parent` has a single child. Stored children are
    /// committed pages, within bounds already; only changed (mutable) children are checked.
    ///
    /// Unlike a single edit, a batch can leave a child far under the minimum, or a branch
    /// child with a single child of its own (out of bounds itself): merging two branches
    /// then restores the bounds of the children they bring together as well.
    func restoreChildBounds(of parent: MutableNode, in tree: TreeState) throws(StorageError) {
        var index = parent.children.count - 1
        while index >= 0 {
            if index >= parent.children.count { index = parent.children.count - 1 }
            guard case .mutable(let child) = parent.children[index] else {
                index -= 1
                continue
            }
            if child.size > StorageLimits.splitPageSize {
                let pieces = split(child)
                parent.keys.insert(contentsOf: pieces.map(\.separator), at: index)
                parent.children.insert(contentsOf: pieces.map { .mutable($0.node) }, at: index + 1)
                index -= 1
            } else if child.size < StorageLimits.minimumPageFill && parent.children.count > 1 {
                // The merged node is looked at again: two undersized nodes may still be.
                index = index > 0 ? index - 1 : 0
                try mergeOrRefill(leftIndex: index, of: parent, in: tree)
            } else {
                index -= 1
            }
        }
        parent.size = MutableNode.branchSize(keys: parent.keys)
    }

    /// Merges children `leftIndex` and `leftIndex + 1` of `parent`, restoring the bounds
    /// of the children a branch merge brings together; if the result is oversized, splits
    /// it into as many pieces as it needs, in their place.
    ///
    /// As many, not two: unlike a single edit's merge (at most a page and an underfull page),
    /// a batch's merge can bring together a child it overfilled far past a page and the
    /// neighbour it emptied, so two halves could each still be oversized, and the pass that
    /// restores the bounds does not look at the right one again. ``split(_:)`` leaves every
    /// piece within both bounds (TreeEditor+Balance argues it).
    private func mergeOrRefill(leftIndex: Int, of parent: MutableNode, in tree: TreeState) throws(StorageError) {
        let merged = try merging(childrenAt: leftIndex, of: parent, in: tree)
        if !merged.isLeaf { try restoreChildBounds(of: merged, in: tree) }
        guard merged.size > StorageLimits.splitPageSize else {
            place(merged, replacingChildrenAt: leftIndex, of: parent)
            return
        }
        let pieces = split(merged)
        parent.keys.replaceSubrange(leftIndex...leftIndex, with: pieces.map(\.separator))
        parent.children.replaceSubrange(
            leftIndex...(leftIndex + 1), with: [.mutable(merged)] + pieces.map { .mutable($0.node) })
    }

    /// Index of the first key in `range` of `keys` that is `>= key`.
    private static func lowerBound(_ keys: [[UInt8]], _ range: Range<Int>, _ key: ArraySlice<UInt8>) -> Int {
        var low = range.lowerBound, high = range.upperBound
        while low < high {
            let mid = (low + high) >> 1
            if ByteOrder.compare(keys[mid][...], key) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
