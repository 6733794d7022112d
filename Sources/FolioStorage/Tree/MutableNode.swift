/// A reference to a tree node: a committed page, or a node a write transaction changed.
enum NodeRef {
    case stored(PageAddress)
    case mutable(MutableNode)
}

/// A node a write transaction has copied to change (copy-on-write: the committed page it
/// came from is never modified; Docs/Format.md §3). Owned by one transaction; written out,
/// children first, when it commits, or dropped without a trace when it rolls back.
///
/// A leaf is its page's entries as bytes plus an offset table (``LeafEntries``), the same
/// representation as a committed leaf, so copying a page copies no entry. A branch holds
/// its separators (slices of the page or of the keys that split a child) and its children.
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
    /// A leaf's entries (empty for a branch).
    @exclusivity(unchecked) var entries: LeafEntries
    /// A branch's separators (empty for a leaf).
    @exclusivity(unchecked) var keys: [ArraySlice<UInt8>] {
        // No `oldValue`: an edit of the array stays in place (SE-0268).
        didSet { sourcePage = nil }
    }
    /// The committed branch page this branch was copied from, while its separators are that
    /// page's (any change of ``keys`` forgets it; a change of children's count changes the
    /// separators too): the commit writes the page with its changed children replaced
    /// instead of encoding every separator again.
    @exclusivity(unchecked) private(set) var sourcePage: [UInt8]?
    /// Branch children, `keys.count + 1` of them (empty for a leaf).
    @exclusivity(unchecked) var children: BranchChildren
    /// A branch's encoded page size, kept up to date by every edit (a leaf's is its
    /// entries' bytes: ``size``).
    @exclusivity(unchecked) private var branchBytes: Int

    /// The encoded page size.
    var size: Int {
        get { isLeaf ? PageHeader.size + entries.entryBytes : branchBytes }
        set {
            assert(!isLeaf, "a leaf's size is its entries'")
            branchBytes = newValue
        }
    }

    init(leaf entries: LeafEntries, epoch: UInt64) {
        isLeaf = true
        self.epoch = epoch
        self.entries = entries
        keys = []
        sourcePage = nil
        children = BranchChildren()
        branchBytes = 0
    }

    /// A leaf of the entries `keys[i]: values[i]`; `keys` strictly ascending.
    convenience init(leafKeys keys: [ArraySlice<UInt8>], values: [LeafValue], epoch: UInt64) {
        self.init(leaf: LeafEntries(keys: keys, values: values), epoch: epoch)
    }

    convenience init(branchKeys keys: [ArraySlice<UInt8>], children: [NodeRef], epoch: UInt64) {
        self.init(branchKeys: keys, children: BranchChildren(children), epoch: epoch)
    }

    convenience init(branchKeys keys: [ArraySlice<UInt8>], children: BranchChildren, epoch: UInt64) {
        self.init(branchKeys: keys, children: children, size: Self.branchSize(keys: keys), epoch: epoch)
    }

    /// A branch with a known encoded size (not computed again).
    private init(
        branchKeys keys: [ArraySlice<UInt8>], children: BranchChildren, size: Int, sourcePage: [UInt8]? = nil,
        epoch: UInt64
    ) {
        isLeaf = false
        self.epoch = epoch
        entries = LeafEntries()
        self.keys = keys
        self.sourcePage = sourcePage
        self.children = children
        branchBytes = size
    }

    /// A copy of the committed page `node`: it shares the decoded page's storage (entries,
    /// or separators and child addresses) until it changes it, and a branch's size is the
    /// page's length, which is what its entries encode to (a page is parsed to its last
    /// byte, and the appender records the length it encoded), so copying a page reads none
    /// of its entries.
    convenience init(copying node: StoredNode, epoch: UInt64) {
        switch node {
        case .leaf(let leaf):
            self.init(leaf: leaf.entries, epoch: epoch)
            assert(size == leaf.pageLength, "a page's length is the size of its entries")
        case .branch(let branch):
            self.init(
                branchKeys: branch.keys, children: BranchChildren(stored: branch.children), size: branch.pageLength,
                sourcePage: branch.page, epoch: epoch)
            assert(size == Self.branchSize(keys: keys), "a page's length is the size of its entries")
        }
    }

    /// A copy of a frozen node, to edit in a later epoch (the storage is shared until the
    /// copy changes it).
    convenience init(copying node: MutableNode, epoch: UInt64) {
        if node.isLeaf {
            self.init(leaf: node.entries, epoch: epoch)
        } else {
            self.init(
                branchKeys: node.keys, children: node.children, size: node.size, sourcePage: node.sourcePage,
                epoch: epoch)
        }
    }

    static func branchSize(keys: [ArraySlice<UInt8>]) -> Int {
        var size = TreePage.emptyBranchSize
        for key in keys { size += TreePage.branchEntrySize(keyCount: key.count) }
        return size
    }

    /// Number of entries: a leaf's keys, or a branch's separators.
    var keyCount: Int { isLeaf ? entries.count : keys.count }

    /// Size of entry `index` alone (leaf: key and value; branch: separator `index` and the
    /// child after it).
    func entrySize(_ index: Int) -> Int {
        isLeaf ? entries.entrySize(index) : TreePage.branchEntrySize(keyCount: keys[index].count)
    }
}
