// Removing keys from a copy-on-write tree: the leaf edit and the path above it; merging
// and refilling underfull pages is TreeEditor+Balance's.
extension TreeEditor {
    /// Removes `key`; returns its value, or nil (and changes nothing) if it is absent.
    ///
    /// The descent reads before it copies, so deleting an absent key writes no page.
    func remove(_ key: [UInt8], in tree: TreeState) throws(StorageError) -> LeafValue? {
        guard let root = tree.root else { return nil }
        guard let (node, removed) = try delete(key, at: root, in: tree) else { return nil }
        tree.root = try normalizeRoot(node, in: tree)
        return removed
    }

    private func delete(
        _ key: [UInt8], at ref: NodeRef, in tree: TreeState
    ) throws(StorageError) -> (MutableNode, LeafValue)? {
        let loaded = try reader.load(ref)
        switch loaded {
        case .leaf(let entries):
            guard let index = entries.index(of: key) else { return nil }
            let node = try makeMutable(ref, in: tree)
            // From here on the tree is being changed: an error above leaves it half-edited.
            tree.editChangedANode = true
            return (node, node.entries.remove(at: index))
        case .storedBranch, .mutableBranch:
            let index = ByteOrder.upperBound(loaded.branchKeys, key)
            guard let (child, removed) = try delete(key, at: loaded.child(index), in: tree) else { return nil }
            let node = try makeMutable(ref, in: tree)
            node.children[index] = .mutable(child)
            try rebalanceChild(at: index, of: node, in: tree)
            return (node, removed)
        }
    }
}
