/// Copy-on-write edits of one tree inside a write transaction.
///
/// An edit copies each committed page on the path from the root to the changed leaf into a
/// ``MutableNode`` (counting the copied page as freed), changes the copy, then restores the
/// size bounds on the way back up (``TreeEditor+Balance``). Committed pages are never
/// modified: see Docs/Format.md §3. Insertion and deletion live in their own files.
struct TreeEditor {
    let reader: TreeReader
    /// The epoch new and copied nodes are created in.
    var epoch: UInt64 = 0
    /// Mutable nodes of an older epoch are frozen (a savepoint or a snapshot cursor may
    /// still reference them): they are copied before an edit, like committed pages.
    var mutableFrom: UInt64 = 0

    /// The node behind `ref`, as a node this transaction may change.
    func makeMutable(_ ref: NodeRef, in tree: TreeState) throws(StorageError) -> MutableNode {
        switch ref {
        case .mutable(let node):
            // Frozen nodes are never edited in place: see WriteTransaction+Savepoint.swift.
            return node.epoch >= mutableFrom ? node : MutableNode(copying: node, epoch: epoch)
        case .stored(let address):
            let node = MutableNode(copying: try reader.pages.node(at: address), epoch: epoch)
            tree.release(address)
            return node
        }
    }

    /// Counts a replaced or removed value's overflow page as freed.
    func release(_ value: LeafValue, in tree: TreeState) {
        if case .overflow(let address) = value { tree.release(address) }
    }

    /// Restores the root after an edit: splits an oversized root under a new branch,
    /// replaces a branch with a single child by that child (the tree shrinks), and turns an
    /// empty leaf into an empty tree.
    func normalizeRoot(_ node: MutableNode, in tree: TreeState) throws(StorageError) -> NodeRef? {
        var root = node
        while root.size > StorageLimits.splitPageSize {
            let pieces = split(root)
            root = MutableNode(
                branchKeys: pieces.map(\.separator), children: [.mutable(root)] + pieces.map { .mutable($0.node) },
                epoch: epoch)
        }
        if root.isLeaf {
            return root.entries.isEmpty ? nil : .mutable(root)
        }
        var ref: NodeRef = .mutable(root)
        while case .mutable(let branch) = ref, !branch.isLeaf, branch.children.count == 1 {
            ref = branch.children[0]
        }
        if case .stored(let address) = ref, case .branch(let branch) = try reader.pages.node(at: address),
            branch.children.count == 1
        {
            // Never written by this engine (a branch always has two children), but harmless.
            ref = .stored(branch.children[0])
        }
        return ref
    }
}
