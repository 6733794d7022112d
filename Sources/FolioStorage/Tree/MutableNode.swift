/// A reference to a tree node: a committed page, or a node a write transaction changed.
enum NodeRef {
    case stored(PageAddress)
    case mutable(MutableNode)
}

/// A node a write transaction has copied to change (copy-on-write: the committed page it
/// came from is never modified; Docs/Format.md §3). Owned by one transaction; written out,
/// children first, when it commits, or dropped without a trace when it rolls back.
final class MutableNode {
    let isLeaf: Bool
    var keys: [[UInt8]]
    /// Leaf values, parallel to `keys` (empty for a branch).
    var values: [LeafValue]
    /// Branch children, `keys.count + 1` of them (empty for a leaf).
    var children: [NodeRef]
    /// The encoded page size, kept up to date by every edit.
    var size: Int

    init(leafKeys keys: [[UInt8]], values: [LeafValue]) {
        isLeaf = true
        self.keys = keys
        self.values = values
        children = []
        size = 0
        size = Self.leafSize(keys: keys, values: values)
    }

    init(branchKeys keys: [[UInt8]], children: [NodeRef]) {
        isLeaf = false
        self.keys = keys
        values = []
        self.children = children
        size = 0
        size = Self.branchSize(keys: keys)
    }

    convenience init(copying node: StoredNode) {
        switch node {
        case .leaf(let leaf): self.init(leafKeys: leaf.keys, values: leaf.values)
        case .branch(let branch): self.init(branchKeys: branch.keys, children: branch.children.map { .stored($0) })
        }
    }

    static func leafSize(keys: [[UInt8]], values: [LeafValue]) -> Int {
        var size = PageHeader.size
        for index in keys.indices { size += TreePage.leafEntrySize(keyCount: keys[index].count, value: values[index]) }
        return size
    }

    static func branchSize(keys: [[UInt8]]) -> Int {
        var size = TreePage.emptyBranchSize
        for key in keys { size += TreePage.branchEntrySize(keyCount: key.count) }
        return size
    }

    /// Size of entry `index` alone (leaf: key and value; branch: separator `index` and the
    /// child after it).
    func entrySize(_ index: Int) -> Int {
        isLeaf ? TreePage.leafEntrySize(keyCount: keys[index].count, value: values[index])
            : TreePage.branchEntrySize(keyCount: keys[index].count)
    }
}
