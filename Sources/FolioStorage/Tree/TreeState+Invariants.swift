/// The shape a tree must have whenever a write transaction hands it on (to a commit or a
/// spill), checked over the nodes the transaction holds in memory, as swift-collections
/// checks its trees with `_invariantCheck` in debug builds. The verifier
/// (`Verify/TreeVerifier+Pages.swift`) checks the same rules on committed pages, after the
/// fact; this check fails at the edit that broke them, before a page is written.
///
/// What is checked, node by node over the changed (mutable) part of the tree:
///
/// - order: keys strictly ascending within each node and across the whole walk, in byte
///   order (Docs/Architecture.md invariant 8);
/// - separators: child `i` of a branch holds keys `k` with `separator[i-1] <= k <
///   separator[i]` (`TreeReader.get` descends to `upperBound(separators, k)`), so each
///   separator lies strictly inside its branch's own bounds, and each key inside its node's;
/// - shape: a leaf has one value per key, a branch one more child than separators; the
///   recorded `size` is the encoded size of the entries;
/// - fill (TreeEditor+Balance): every node at most ``StorageLimits/splitPageSize`` bytes,
///   every node but the root at least ``StorageLimits/minimumPageFill``; a root branch has
///   two children or more, a root leaf a key at least (an empty tree has no root);
/// - depth: every changed leaf at the same depth;
/// - count: `count` equals the keys of the leaves when the whole tree is in memory, and
///   always equals the committed count plus what the change log added and removed (unless
///   the tree changed wholesale and dropped its log).
///
/// Committed and spilled pages below a changed node are not read (that would add page
/// reads that `CostTests` count): of those, only what their address says is checked (a
/// page length within the fill bounds of a non-root page and the format's bound).
extension TreeState {
    /// Every rule the in-memory part of the tree breaks, each naming the node (its path of
    /// child indexes from the root) and the rule; empty when it holds them all. Reads no page.
    func invariantViolations() -> [String] {
        var walk = InvariantWalk()
        if !exists && (root != nil || count != 0) {
            walk.report("the tree does not exist but has a root or a count of \(count)")
        }
        if let root {
            walk.check(root, lower: nil, upper: nil)
        } else if count != 0 {
            walk.report("the tree is empty but its count is \(count)")
        }
        if !walk.readsStoredPages && walk.entries != count {
            walk.report("count is \(count), the leaves hold \(walk.entries) keys")
        }
        // A tree changed wholesale has dropped its log: nothing to check the count against.
        let logged = isChangedWholesale ? Int64(clamping: count) : loggedCount()
        if logged != Int64(clamping: count) {
            walk.report("count is \(count), the change log makes it \(logged)")
        }
        return walk.violations
    }

    /// Stops the process, naming the tree and every rule it breaks, if
    /// ``invariantViolations()`` finds any. Debug builds only: a release build does nothing
    /// here, so the check costs nothing where it is not wanted.
    @inline(__always)
    func checkInvariants() {
        #if DEBUG
        let violations = invariantViolations()
        if !violations.isEmpty {
            preconditionFailure(
                "tree \"\(name)\" breaks its invariants:\n" + violations.prefix(20).joined(separator: "\n"))
        }
        #endif
    }

    /// ``checkInvariants()`` of each tree, for a commit or a spill about to write them.
    /// Debug builds only, like it.
    @inline(__always)
    static func checkInvariants(of trees: some Sequence<TreeState>) {
        #if DEBUG
        for tree in trees { tree.checkInvariants() }
        #endif
    }

    /// The count the change log implies: the committed count (none after a drop, which
    /// forgets the operations before it), plus one for each key an operation created and
    /// minus one for each it removed.
    private func loggedCount() -> Int64 {
        var total = wasDropped ? 0 : Int64(clamping: committedCount)
        for change in changes[changesFrom...] {
            total += (change.existsAfter ? 1 : 0) - (change.existedBefore ? 1 : 0)
        }
        return total
    }
}

/// One walk over the mutable nodes of a tree, in key order, collecting what it finds.
private struct InvariantWalk {
    var violations: [String] = []
    /// Keys in the mutable leaves walked so far.
    var entries: UInt64 = 0
    /// A committed or spilled page was reached (its keys are not counted).
    var readsStoredPages = false
    /// The depth of the first mutable leaf (the root is depth 1).
    var leafDepth: Int?
    /// The last key of the last mutable leaf walked, for the order across leaves.
    var previousKey: ArraySlice<UInt8>?
    /// The child indexes from the root to the node being checked.
    var path: [Int] = []

    mutating func report(_ message: String) {
        let node = path.isEmpty ? "root" : "node " + path.map(String.init).joined(separator: ".")
        violations.append("\(node): \(message)")
    }

    /// Checks the node at `path`, whose keys must lie in `lower..<upper` (nil: unbounded).
    mutating func check(_ ref: NodeRef, lower: ArraySlice<UInt8>?, upper: ArraySlice<UInt8>?) {
        switch ref {
        case .stored(let address):
            readsStoredPages = true
            checkStored(address)
        case .mutable(let node):
            checkFill(node)
            if node.isLeaf {
                checkLeaf(node, lower: lower, upper: upper)
            } else {
                checkBranch(node, lower: lower, upper: upper)
            }
        }
    }

    private mutating func checkStored(_ address: PageAddress) {
        if address.isNone {
            report("a child is the null page address")
        } else if address.length > StorageLimits.maximumPageSize {
            report("a stored child of \(address.length) bytes exceeds the format's \(StorageLimits.maximumPageSize)")
        } else if !path.isEmpty && address.length < StorageLimits.minimumPageFill {
            report("a stored child of \(address.length) bytes is under the \(StorageLimits.minimumPageFill)-byte fill")
        }
    }

    private mutating func checkFill(_ node: MutableNode) {
        let encoded =
            node.isLeaf
            ? PageHeader.size + node.entries.measuredEntryBytes() : MutableNode.branchSize(keys: node.keys)
        if node.size != encoded {
            report("recorded size \(node.size) bytes, its entries encode to \(encoded)")
        }
        if encoded > StorageLimits.splitPageSize {
            report("\(encoded) bytes, over the \(StorageLimits.splitPageSize)-byte split size")
        }
        // The root alone may be underfull: nothing is left to merge it with.
        if !path.isEmpty && encoded < StorageLimits.minimumPageFill {
            report("\(encoded) bytes, under the \(StorageLimits.minimumPageFill)-byte minimum fill")
        }
    }

    private mutating func checkLeaf(_ node: MutableNode, lower: ArraySlice<UInt8>?, upper: ArraySlice<UInt8>?) {
        let depth = path.count + 1
        if let leafDepth, leafDepth != depth {
            report("a leaf at depth \(depth), another at depth \(leafDepth)")
        }
        leafDepth = leafDepth ?? depth
        let entries = node.entries
        guard node.keys.isEmpty, node.children.isEmpty else {
            report("a leaf with \(node.keys.count) separators, \(node.children.count) children")
            return
        }
        // An empty leaf is only ever a whole empty tree, which has no root at all.
        guard let first = entries.firstKey, let last = entries.lastKey else {
            report("an empty leaf")
            return
        }
        // The keys ascend (checked below), so the first and the last within bounds put
        // them all within.
        checkBounds(first, index: 0, lower: lower, upper: upper)
        checkBounds(last, index: entries.count - 1, lower: lower, upper: upper)
        for index in 0..<entries.count {
            let key = entries.key(index)
            if key.count > StorageLimits.maximumKeyLength { report("key \(index) is \(key.count) bytes long") }
            if let previousKey, ByteOrder.compare(previousKey, key) >= 0 {
                report("key \(index) \(hex(key)) does not follow the key before it, \(hex(previousKey))")
            }
            previousKey = key
            switch entries.value(index) {
            case .inline(let bytes) where bytes.count > StorageLimits.inlineValueLimit:
                report("value \(index) is inline with \(bytes.count) bytes")
            case .pendingOverflow(let bytes) where bytes.count <= StorageLimits.inlineValueLimit:
                report("value \(index) goes to an overflow page with only \(bytes.count) bytes")
            default: break
            }
        }
        self.entries += UInt64(entries.count)
    }

    private mutating func checkBranch(_ node: MutableNode, lower: ArraySlice<UInt8>?, upper: ArraySlice<UInt8>?) {
        guard node.children.count == node.keys.count + 1, node.entries.isEmpty else {
            report("a branch with \(node.keys.count) separators, \(node.children.count) children")
            return
        }
        // A root branch of one child is replaced by that child (TreeEditor.normalizeRoot);
        // below the root, one child is too small a page to exist.
        if path.isEmpty && node.children.count < 2 { report("a root branch with one child") }
        for index in node.keys.indices {
            let separator = node.keys[index]
            // Strictly inside: each child holds a key, so no child's range is empty.
            if let lower, ByteOrder.compare(separator, lower) <= 0 {
                report("separator \(index) \(hex(separator)) is not above the lower bound \(hex(lower))")
            }
            if let upper, ByteOrder.compare(separator, upper) >= 0 {
                report("separator \(index) \(hex(separator)) is not below the upper bound \(hex(upper))")
            }
            if index > 0, ByteOrder.compare(node.keys[index - 1], separator) >= 0 {
                report("separator \(index) \(hex(separator)) does not follow \(hex(node.keys[index - 1]))")
            }
        }
        var leaves = false, branches = false
        for index in node.children.indices {
            let child = node.children[index]
            if case .mutable(let childNode) = child {
                if childNode.isLeaf { leaves = true } else { branches = true }
            }
            path.append(index)
            check(
                child, lower: index == 0 ? lower : node.keys[index - 1],
                upper: index == node.keys.count ? upper : node.keys[index])
            path.removeLast()
        }
        if leaves && branches { report("a branch whose children are leaves and branches at once") }
    }

    private mutating func checkBounds(
        _ key: ArraySlice<UInt8>, index: Int, lower: ArraySlice<UInt8>?, upper: ArraySlice<UInt8>?
    ) {
        if let lower, ByteOrder.compare(key, lower) < 0 {
            report("key \(index) \(hex(key)) is below its separator \(hex(lower))")
        }
        if let upper, ByteOrder.compare(key, upper) >= 0 {
            report("key \(index) \(hex(key)) is not below the next separator \(hex(upper))")
        }
    }

    /// A key for a message: its first bytes in hex.
    private func hex(_ key: ArraySlice<UInt8>) -> String {
        let shown = key.prefix(24).map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
        return "0x" + shown + (key.count > 24 ? "…(\(key.count) bytes)" : "")
    }
}
