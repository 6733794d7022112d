/// A reference to a tree node: a committed page, or a node a write transaction changed.
enum NodeRef {
    case stored(PageAddress)
    case mutable(MutableNode)
}

/// A node a write transaction has copied to change (copy-on-write: the committed page it
/// came from is never modified; Docs/Format.md §3). Owned by one transaction; written out,
/// children first, when it commits, or dropped without a trace when it rolls back.
///
/// Mutable nodes are themselves copy-on-write across savepoints and snapshot cursors: a
/// node is edited in place only while its ``epoch`` is at or above the transaction's
/// frozen boundary (see `WriteTransaction+Savepoint.swift`); an older node may be
/// referenced by a savepoint or a cursor and is copied instead.
///
/// Its stored properties are `@exclusivity(unchecked)` (see TreeState): a node is edited only
/// under its transaction's lock, and a frozen node, which savepoints and snapshot cursors
/// share, is never edited again (the epoch rule above), so no access to a property overlaps
/// a change of it.
final class MutableNode {
    let isLeaf: Bool
    /// The transaction epoch the node was created in.
    let epoch: UInt64
    /// Slices of the committed page the node was copied from, or of the arrays the
    /// transaction was given: copying a page copies no key.
    @exclusivity(unchecked) var keys: [ArraySlice<UInt8>]
    /// Leaf values, parallel to `keys` (empty for a branch).
    @exclusivity(unchecked) var values: [LeafValue]
    /// Branch children, `keys.count + 1` of them (empty for a leaf).
    @exclusivity(unchecked) var children: BranchChildren
    /// The encoded page size, kept up to date by every edit.
    @exclusivity(unchecked) var size: Int

    init(leafKeys keys: [ArraySlice<UInt8>], values: [LeafValue], epoch: UInt64) {
        isLeaf = true
        self.epoch = epoch
        self.keys = keys
        self.values = values
        children = BranchChildren()
        size = 0
        size = Self.leafSize(keys: keys, values: values)
    }

    convenience init(branchKeys keys: [ArraySlice<UInt8>], children: [NodeRef], epoch: UInt64) {
        self.init(branchKeys: keys, children: BranchChildren(children), epoch: epoch)
    }

    init(branchKeys keys: [ArraySlice<UInt8>], children: BranchChildren, epoch: UInt64) {
        isLeaf = false
        self.epoch = epoch
        self.keys = keys
        values = []
        self.children = children
        size = 0
        size = Self.branchSize(keys: keys)
    }

    /// A node with the given parts and a known encoded size (not computed again).
    private init(
        isLeaf: Bool, keys: [ArraySlice<UInt8>], values: [LeafValue], children: BranchChildren, size: Int,
        epoch: UInt64
    ) {
        self.isLeaf = isLeaf
        self.epoch = epoch
        self.keys = keys
        self.values = values
        self.children = children
        self.size = size
    }

    /// A copy of the committed page `node`: it shares the decoded page's arrays (keys,
    /// values, child addresses) until it changes them, and its size is the page's length,
    /// which is what its entries encode to (a page is parsed to its last byte, and the
    /// appender records the length it encoded), so copying a page reads none of its entries.
    convenience init(copying node: StoredNode, epoch: UInt64) {
        switch node {
        case .leaf(let leaf):
            self.init(
                isLeaf: true, keys: leaf.keys, values: leaf.values, children: BranchChildren(), size: leaf.pageLength,
                epoch: epoch)
        case .branch(let branch):
            self.init(
                isLeaf: false, keys: branch.keys, values: [], children: BranchChildren(stored: branch.children),
                size: branch.pageLength, epoch: epoch)
        }
        assert(
            size == (isLeaf ? Self.leafSize(keys: keys, values: values) : Self.branchSize(keys: keys)),
            "a page's length is the size of its entries")
    }

    /// A copy of a frozen node, to edit in a later epoch (the arrays are shared until the
    /// copy changes them).
    convenience init(copying node: MutableNode, epoch: UInt64) {
        self.init(
            isLeaf: node.isLeaf, keys: node.keys, values: node.values, children: node.children, size: node.size,
            epoch: epoch)
    }

    static func leafSize(keys: [ArraySlice<UInt8>], values: [LeafValue]) -> Int {
        var size = PageHeader.size
        for index in keys.indices { size += TreePage.leafEntrySize(keyCount: keys[index].count, value: values[index]) }
        return size
    }

    static func branchSize(keys: [ArraySlice<UInt8>]) -> Int {
        var size = TreePage.emptyBranchSize
        for key in keys { size += TreePage.branchEntrySize(keyCount: key.count) }
        return size
    }

    /// Size of entry `index` alone (leaf: key and value; branch: separator `index` and the
    /// child after it).
    func entrySize(_ index: Int) -> Int {
        isLeaf
            ? TreePage.leafEntrySize(keyCount: keys[index].count, value: values[index])
            : TreePage.branchEntrySize(keyCount: keys[index].count)
    }
}
