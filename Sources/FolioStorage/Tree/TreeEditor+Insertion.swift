// Putting keys into a copy-on-write tree: the leaf edit and the path above it; splitting
// oversized pages is TreeEditor+Balance's.
extension TreeEditor {
    /// Inserts or replaces `key`; returns the value it replaced, if any.
    func put(_ key: [UInt8], _ value: LeafValue, in tree: TreeState) throws(StorageError) -> LeafValue? {
        guard let root = tree.root else {
            tree.root = .mutable(MutableNode(leaf: LeafEntries(key: key[...], value: value), epoch: epoch))
            return nil
        }
        let (node, previous) = try insert(key, value, at: root, in: tree)
        tree.root = try normalizeRoot(node, in: tree)
        return previous
    }

    private func insert(
        _ key: [UInt8], _ value: LeafValue, at ref: NodeRef,
        in tree: TreeState
    ) throws(StorageError) -> (MutableNode, LeafValue?) {
        let node = try makeMutable(ref, in: tree)
        if node.isLeaf {
            // From here on the tree is being changed: an error above leaves it half-edited.
            tree.editChangedANode = true
            let index = node.entries.lowerBound(key)
            if index < node.entries.count, node.entries.compareKey(index, with: key[...]) == 0 {
                return (node, node.entries.replaceValue(at: index, with: value))
            }
            node.entries.insert(key: key[...], value: value, at: index)
            return (node, nil)
        }
        let index = ByteOrder.upperBound(node.keys, key)
        let childRef = node.children[index]
        let (child, previous) = try insert(key, value, at: childRef, in: tree)
        // A child changed in place is already there.
        if case .mutable(let edited) = childRef, edited === child {} else { node.children[index] = .mutable(child) }
        try rebalanceChild(at: index, of: node, in: tree)
        return (node, previous)
    }
}
