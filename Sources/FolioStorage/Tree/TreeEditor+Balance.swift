/// Size bounds: every page the writer makes is at most ``StorageLimits/splitPageSize``
/// bytes (`max`, 4096; the format allows 8192), and every non-root page at least
/// ``StorageLimits/minimumPageFill`` (`min`, 500; both checked by
/// `Verify/TreeVerifier+Pages.swift`, which every test that touches a store runs). Why both
/// hold after every edit:
///
/// - An edit changes one entry, at most `entry = 3 + 1024 + 4 + 2048 = 3079` bytes (key and
///   inline value limits). An oversized node is split at its best byte balance, and each
///   piece still over `max` is split again (``split(_:)`` recurses); a piece of one entry
///   is at most `24 + 3079 < max`, so the recursion ends with every piece under `max`.
/// - An undersized node (`< min`) is merged with a sibling if the two fit in one page. The
///   sibling held at least `min`, so the merged node does too.
/// - Otherwise the two together exceed `max`; redistributing at the best byte balance
///   leaves sides that differ by at most one entry, so each holds more than
///   `(max - entry) / 2 = 508 > min`.
/// - A page written by an earlier policy (up to 8192 bytes) is split the first time an
///   edit touches it.
extension TreeEditor {
    /// After `parent.children[index]` changed, splits it if too large or merges or
    /// refills it from a sibling if too small; `parent` may then be out of bounds itself,
    /// which its own parent (or ``normalizeRoot(_:in:)``) handles on the way up.
    func rebalanceChild(at index: Int, of parent: MutableNode, in tree: TreeState) throws(StorageError) {
        guard case .mutable(let child) = parent.children[index] else { return }
        if child.size > StorageLimits.splitPageSize {
            let pieces = split(child)
            parent.keys.insert(contentsOf: pieces.map(\.separator), at: index)
            parent.children.insert(contentsOf: pieces.map { .mutable($0.node) }, at: index + 1)
            parent.size = MutableNode.branchSize(keys: parent.keys)
        } else if child.size < StorageLimits.minimumPageFill && parent.children.count > 1 {
            let left = index > 0 ? index - 1 : index
            try mergeOrRedistribute(leftIndex: left, of: parent, in: tree)
        }
    }

    /// Splits an oversized node in place: `node` keeps the first piece; the others are
    /// returned in key order, each with the separator that precedes it.
    func split(_ node: MutableNode) -> [(separator: ArraySlice<UInt8>, node: MutableNode)] {
        guard node.size > StorageLimits.splitPageSize else { return [] }
        let (separator, right) = splitInTwo(node)
        return split(node) + [(separator, right)] + split(right)
    }

    /// Children `leftIndex` and `leftIndex + 1` of `parent` as one new node: a leaf of both
    /// leaves' entries, or a branch of both branches' children with the separator between
    /// them brought down. `parent` is not changed (``place(_:replacingChildrenAt:of:)`` is
    /// the next step).
    func merging(
        childrenAt leftIndex: Int, of parent: MutableNode, in tree: TreeState
    ) throws(StorageError)
        -> MutableNode
    {
        let left = try makeMutable(parent.children[leftIndex], in: tree)
        let right = try makeMutable(parent.children[leftIndex + 1], in: tree)
        if left.isLeaf {
            var entries = LeafEntries(left.entries, range: 0..<left.entries.count)
            entries.reserve(entries: right.entries.count, bytes: right.entries.entryBytes)
            entries.append(contentsOf: right.entries, range: 0..<right.entries.count)
            return MutableNode(leaf: entries, epoch: epoch)
        }
        return MutableNode(
            branchKeys: left.keys + [parent.keys[leftIndex]] + right.keys,
            children: left.children + right.children, epoch: epoch)
    }

    /// Puts `merged`, the contents of children `leftIndex` and `leftIndex + 1` of `parent`,
    /// in their place: as one child if it fits a page, else split in two at its best byte
    /// balance (both halves then hold more than the minimum).
    func place(_ merged: MutableNode, replacingChildrenAt leftIndex: Int, of parent: MutableNode) {
        if merged.size <= StorageLimits.splitPageSize {
            parent.keys.remove(at: leftIndex)
            parent.children.remove(at: leftIndex + 1)
            parent.children[leftIndex] = .mutable(merged)
        } else {
            let (separator, newRight) = splitInTwo(merged)
            parent.keys[leftIndex] = separator
            parent.children[leftIndex] = .mutable(merged)
            parent.children[leftIndex + 1] = .mutable(newRight)
        }
    }

    /// Splits `node` at its best byte balance: `node` keeps the left half; returns the
    /// separator and the right half.
    func splitInTwo(_ node: MutableNode) -> (separator: ArraySlice<UInt8>, node: MutableNode) {
        if node.isLeaf {
            let count = node.entries.count
            let at = bestSplit(node, firstRight: 1, lastRight: count - 1, separatorMovesUp: false)
            let right = MutableNode(leaf: LeafEntries(node.entries, range: at..<count), epoch: epoch)
            // Copied out: a slice of the right leaf's buffer would make it shared, and its next
            // edit would copy the whole buffer.
            let separator = ArraySlice(
                Array(ByteOrder.shortestSeparator(after: node.entries.key(at - 1), upTo: right.entries.key(0))))
            node.entries.removeSuffix(from: at)
            return (separator, right)
        }
        // Branch: key `at` moves up; the left keeps keys ..<at, the right keys at+1...
        // Both sides need two children, so 1 <= at <= keys.count - 2.
        let at = bestSplit(node, firstRight: 1, lastRight: node.keys.count - 2, separatorMovesUp: true)
        let separator = node.keys[at]
        let right = MutableNode(
            branchKeys: Array(node.keys[(at + 1)...]), children: BranchChildren(node.children[(at + 1)...]),
            epoch: epoch)
        node.keys.removeSubrange(at...)
        node.children.removeSubrange((at + 1)...)
        node.size = MutableNode.branchSize(keys: node.keys)
        return (separator, right)
    }

    /// The split index in `firstRight...lastRight` that minimises the larger half.
    private func bestSplit(_ node: MutableNode, firstRight: Int, lastRight: Int, separatorMovesUp: Bool) -> Int {
        let base = node.isLeaf ? PageHeader.size : TreePage.emptyBranchSize
        let total = node.size - base
        var leftBytes = 0
        var best = firstRight
        var bestLarger = Int.max
        for index in 0..<node.keyCount {
            if index >= firstRight && index <= lastRight {
                let moving = separatorMovesUp ? node.entrySize(index) : 0
                let rightBytes = total - leftBytes - moving
                let larger = max(leftBytes, rightBytes)
                if larger < bestLarger {
                    bestLarger = larger
                    best = index
                }
            }
            leftBytes += node.entrySize(index)
        }
        return best
    }

    /// Merges children `leftIndex` and `leftIndex + 1` of `parent` if they fit in one page,
    /// else redistributes their entries evenly.
    private func mergeOrRedistribute(leftIndex: Int, of parent: MutableNode, in tree: TreeState) throws(StorageError) {
        let merged = try merging(childrenAt: leftIndex, of: parent, in: tree)
        place(merged, replacingChildrenAt: leftIndex, of: parent)
        parent.size = MutableNode.branchSize(keys: parent.keys)
    }
}
