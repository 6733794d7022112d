/// A node as the readers see it, whether committed or changed by a write transaction.
enum LoadedNode {
    case leaf(LeafEntries)
    case storedBranch(BranchNode)
    case mutableBranch(MutableNode)

    var branchKeys: [ArraySlice<UInt8>] {
        switch self {
        case .storedBranch(let branch): return branch.keys
        case .mutableBranch(let node): return node.keys
        case .leaf: return []
        }
    }

    func child(_ index: Int) -> NodeRef {
        switch self {
        case .storedBranch(let branch): return .stored(branch.children[index])
        case .mutableBranch(let node): return node.children[index]
        case .leaf: preconditionFailure("a leaf has no children")
        }
    }
}

/// Where a cursor wants to go next.
enum SeekTarget {
    /// The first key `>= key` (or `> key` when not inclusive).
    case forward(from: ArraySlice<UInt8>, inclusive: Bool)
    /// The last key `<= key` (or `< key`); `nil` means the last key of the tree.
    case backward(from: ArraySlice<UInt8>?, inclusive: Bool)
}

/// One leaf's entries, as a cursor consumes them: `index` is the entry the seek found.
struct LeafBatch {
    var entries: LeafEntries
    var index: Int
}

/// Read algorithms over a tree whose nodes may be committed pages or a transaction's
/// changed nodes. Synchronous, allocation-light: one descent per lookup, one per leaf for
/// scans (Docs/Architecture.md, Concurrency).
struct TreeReader {
    let pages: PageSource

    @inline(__always)
    func load(_ ref: NodeRef) throws(StorageError) -> LoadedNode {
        switch ref {
        case .stored(let address):
            switch try pages.node(at: address) {
            case .leaf(let leaf): return .leaf(leaf.entries)
            case .branch(let branch): return .storedBranch(branch)
            }
        case .mutable(let node):
            return node.isLeaf ? .leaf(node.entries) : .mutableBranch(node)
        }
    }

    /// Child `index` of a branch, loaded: a committed branch's pinned child without the page
    /// cache, else through the cache (pinning it if it is a branch; see ``BranchNode``).
    @inline(__always)
    func loadChild(_ index: Int, of node: LoadedNode) throws(StorageError) -> LoadedNode {
        guard case .storedBranch(let branch) = node else { return try load(node.child(index)) }
        if let pinned = branch.pinnedChild(index) { return .storedBranch(pinned) }
        switch try pages.node(at: branch.children[index]) {
        case .leaf(let leaf): return .leaf(leaf.entries)
        case .branch(let child): return .storedBranch(branch.pin(child, at: index))
        }
    }

    /// The value stored under `key`, if any (overflow values not yet resolved).
    func get(root: NodeRef?, key: [UInt8]) throws(StorageError) -> LeafValue? {
        guard let root else { return nil }
        return try get(from: try load(root), key: key)
    }

    /// ``get(root:key:)`` of a committed tree through its anchor (``BranchNode/anchor(of:)``),
    /// which holds the tree's root pinned: the descent takes the cache for its leaf only.
    func get(anchor: BranchNode, key: [UInt8]) throws(StorageError) -> LeafValue? {
        try get(from: .storedBranch(anchor), key: key)
    }

    private func get(from start: LoadedNode, key: [UInt8]) throws(StorageError) -> LeafValue? {
        var node = start
        while true {
            switch node {
            case .leaf(let entries):
                return entries.index(of: key).map { entries.value($0) }
            case .storedBranch, .mutableBranch:
                node = try loadChild(ByteOrder.upperBound(node.branchKeys, key), of: node)
            }
        }
    }

    /// The leaf holding the entry `target` asks for, or nil if no key qualifies.
    ///
    /// Descending for `forward(k)`, each branch picks the child whose range holds `k` and
    /// remembers the nearest separator to its right (the leaf's upper fence). If the leaf
    /// has no key at or after `k`, the answer is the first key of the next leaf, which is
    /// the first key `>= fence`, so the search restarts there. `backward` is the mirror
    /// image with the lower fence.
    func seek(root: NodeRef?, _ target: SeekTarget) throws(StorageError) -> LeafBatch? {
        guard let root else { return nil }
        return try seek(from: try load(root), target)
    }

    /// ``seek(root:_:)`` of a committed tree through its anchor (``BranchNode/anchor(of:)``).
    func seek(anchor: BranchNode, _ target: SeekTarget) throws(StorageError) -> LeafBatch? {
        try seek(from: .storedBranch(anchor), target)
    }

    private func seek(from start: LoadedNode, _ target: SeekTarget) throws(StorageError) -> LeafBatch? {
        var target = target
        while true {
            var node = start
            var fence: ArraySlice<UInt8>? = nil
            while true {
                switch node {
                case .leaf(let entries):
                    switch target {
                    case .forward(let key, let inclusive):
                        let index = inclusive ? entries.lowerBound(key) : entries.upperBound(key)
                        if index < entries.count { return LeafBatch(entries: entries, index: index) }
                        guard let fence else { return nil }
                        target = .forward(from: fence, inclusive: true)
                    case .backward(let key, let inclusive):
                        let index: Int
                        if let key {
                            index = (inclusive ? entries.upperBound(key) : entries.lowerBound(key)) - 1
                        } else {
                            index = entries.count - 1
                        }
                        if index >= 0 { return LeafBatch(entries: entries, index: index) }
                        guard let fence else { return nil }
                        target = .backward(from: fence, inclusive: false)
                    }
                case .storedBranch, .mutableBranch:
                    let separators = node.branchKeys
                    let child: Int
                    switch target {
                    case .forward(let key, _):
                        child = ByteOrder.upperBound(separators, key)
                        if child < separators.count { fence = separators[child] }
                    case .backward(let key?, let inclusive):
                        child =
                            inclusive ? ByteOrder.upperBound(separators, key) : ByteOrder.lowerBound(separators, key)
                        if child > 0 { fence = separators[child - 1] }
                    case .backward(nil, _):
                        child = separators.count
                        if child > 0 { fence = separators[child - 1] }
                    }
                    node = try loadChild(child, of: node)
                    continue
                }
                break
            }
        }
    }

    /// The bytes of a value, reading its overflow page if it has one: a slice of the page
    /// it is stored in (no copy) for an inline value.
    func resolve(_ value: LeafValue) throws(StorageError) -> ArraySlice<UInt8> {
        switch value {
        case .inline(let bytes): return bytes
        case .pendingOverflow(let bytes): return bytes[...]
        case .overflow(let address): return try pages.overflow(at: address)[...]
        }
    }

    /// Height of the tree (0 when empty), following the leftmost path.
    func depth(root: NodeRef?) throws(StorageError) -> Int {
        guard var ref = root else { return 0 }
        var depth = 1
        while true {
            let node = try load(ref)
            if case .leaf = node { return depth }
            ref = node.child(0)
            depth += 1
        }
    }
}
