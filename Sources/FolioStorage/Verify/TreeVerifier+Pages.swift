// The checks of one tree, page by page: each page's checksum and decoding, key order
// within the page, separator fences from the parent, page size bounds, equal leaf depth
// (balance), and overflow values.

extension TreeVerifier {
    /// What the walk of one tree found, to compare with its catalog descriptor; `complete`
    /// is false when a page could not be read.
    struct WalkStatistics {
        var count: UInt64 = 0
        var bytes: UInt64 = 0
        var depth = 0
        var complete = true
    }

    /// Walks a tree depth-first, checking each page and calling `visit` for each entry.
    mutating func walk(
        _ root: PageAddress, tree: String,
        visit: ([UInt8], [UInt8]) -> Void
    ) -> WalkStatistics {
        var stats = WalkStatistics()
        guard !root.isNone else { return stats }
        var leafDepth: Int? = nil
        check(
            root, tree: tree, level: 1, isRoot: true, lower: nil, upper: nil, leafDepth: &leafDepth, stats: &stats,
            visit: visit)
        stats.depth = leafDepth ?? 0
        return stats
    }

    mutating func check(
        _ address: PageAddress, tree: String, level: Int, isRoot: Bool,
        lower: ArraySlice<UInt8>?, upper: ArraySlice<UInt8>?, leafDepth: inout Int?,
        stats: inout WalkStatistics, visit: ([UInt8], [UInt8]) -> Void
    ) {
        let node: StoredNode
        do throws(StorageError) {
            node = try pages.nodeBypassingCache(at: address)
        } catch {
            problem(error, tree: tree, at: address.offset)
            stats.complete = false
            return
        }
        counted(address)
        stats.bytes += UInt64(address.length)
        let keys: [ArraySlice<UInt8>]
        switch node {
        case .leaf(let leaf): keys = (0..<leaf.entries.count).map { leaf.entries.key($0) }
        case .branch(let branch): keys = branch.keys
        }
        // Order within the page, and fences from the parent: lower <= key < upper.
        for index in keys.indices {
            if index > 0 && ByteOrder.compare(keys[index - 1], keys[index]) >= 0 {
                problem(address.offset, tree, "keys \(index - 1) and \(index) are out of order")
            }
            if let lower, ByteOrder.compare(keys[index], lower) < 0 {
                problem(address.offset, tree, "key \(index) sorts before its separator in the parent")
            }
            if let upper, ByteOrder.compare(keys[index], upper) >= 0 {
                problem(address.offset, tree, "key \(index) sorts at or after the next separator in the parent")
            }
        }
        if UInt64(address.length) > UInt64(StorageLimits.maximumPageSize) {
            problem(
                address.offset, tree,
                "page of \(address.length) bytes exceeds the \(StorageLimits.maximumPageSize)-byte bound")
        }
        if !isRoot && UInt64(address.length) < UInt64(StorageLimits.minimumPageFill) {
            problem(
                address.offset, tree,
                "non-root page of \(address.length) bytes is under the \(StorageLimits.minimumPageFill)-byte fill bound"
            )
        }
        switch node {
        case .leaf(let leaf):
            if let depth = leafDepth, depth != level {
                problem(
                    address.offset, tree,
                    "leaf at depth \(level), other leaves at depth \(depth): the tree is unbalanced")
            }
            leafDepth = leafDepth ?? level
            stats.count += UInt64(leaf.entries.count)
            for index in 0..<leaf.entries.count {
                switch leaf.entries.value(index) {
                case .inline(let value):
                    visit(Array(leaf.entries.key(index)), Array(value))
                case .overflow(let overflow):
                    do throws(StorageError) {
                        let value = try pages.overflowBypassingCache(at: overflow)
                        counted(overflow)
                        stats.bytes += UInt64(overflow.length)
                        visit(Array(leaf.entries.key(index)), value)
                    } catch {
                        problem(error, tree: tree, at: overflow.offset)
                        stats.complete = false
                    }
                case .pendingOverflow:
                    problem(address.offset, tree, "impossible pending value in a stored page")
                }
            }
        case .branch(let branch):
            for index in branch.children.indices {
                let childLower = index == 0 ? lower : branch.keys[index - 1]
                let childUpper = index == branch.keys.count ? upper : branch.keys[index]
                check(
                    branch.children[index], tree: tree, level: level + 1, isRoot: false, lower: childLower,
                    upper: childUpper, leafDepth: &leafDepth, stats: &stats, visit: visit)
            }
        }
    }
}
