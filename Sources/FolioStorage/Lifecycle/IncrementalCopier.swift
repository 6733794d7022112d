/// A tree as a compaction pass left it in the new file: the root it was copied from (a page
/// of the current snapshot file), the root of its copy, and the tree's depth.
struct TreeImage: Sendable {
    /// The tree's name.
    let name: String
    /// The root the copy was made from, in the store's current snapshot file.
    let source: PageAddress
    /// The root of the copy, in the compaction's new file.
    let copy: PageAddress
    /// Levels from the root to the leaves (0: empty).
    let depth: Int
}

/// Copies trees of the current snapshot file into a compaction's new file, reusing what an
/// earlier pass copied: a subtree whose root page is the same page (same address in the
/// same file) as one an earlier pass copied is not read again, its copy is referenced.
///
/// Why reuse is exact: pages of a snapshot file are never rewritten once committed
/// (Docs/Architecture.md invariant 1), so one address names one subtree, byte for byte,
/// whatever generation reaches it; the earlier copy of that subtree is a copy of exactly
/// what the newer generation holds there. Everything else is copied page by page from the
/// newer generation. So the result is the newer generation's trees, page for page, whatever
/// the reuse finds: finding an unchanged subtree saves work, missing one costs a copy, and
/// neither changes the result. Change records are not needed (nor trusted): a tree changed
/// wholesale, dropped and re-created, or with no change record simply shares fewer pages.
///
/// Finding earlier copies costs no memory beyond one root-to-leaf path: the earlier copy
/// has the shape of the tree it was made from (the same pages, children in the same order),
/// so the copy of a page is found by walking the earlier source tree and its copy side by
/// side, down the key range of the page being copied.
struct IncrementalCopier {
    /// The current snapshot file's pages.
    let source: PageSource
    /// The new file's pages (what earlier passes wrote and flushed).
    let target: PageSource
    /// Called between pages; throws to stop the copy (the store is closing).
    let checkpoint: () throws(StorageError) -> Void
    let progress: ((CompactionProgress) -> Void)?
    let total: UInt64
    /// Bytes of source pages copied (not reused) so far.
    private(set) var copiedBytes: UInt64 = 0
    private var reported: UInt64 = 0
    /// Sync the new file each time this many more bytes were written to it (nil: never):
    /// the background passes do, so that the file's dirty pages go to disk a few MiB at a
    /// time, beside the commits' syncs, rather than in one flush of the whole store that a
    /// commit's sync would queue behind.
    var syncEvery: UInt64?
    private var syncedAt: UInt64 = 0

    init(
        source: PageSource, target: PageSource, total: UInt64,
        progress: ((CompactionProgress) -> Void)?,
        checkpoint: @escaping () throws(StorageError) -> Void
    ) {
        self.source = source
        self.target = target
        self.total = total
        self.progress = progress
        self.checkpoint = checkpoint
    }

    /// An earlier copy of a node: the source page, its copy, its height (1: a leaf) and the
    /// key range the source tree gives it (nil: unbounded).
    private struct Earlier {
        let source: PageAddress
        let copy: PageAddress
        let height: Int
        let lower: ArraySlice<UInt8>?
        let upper: ArraySlice<UInt8>?

        /// Whether the range holds `key` (nil: the smallest key of all).
        func covers(_ key: ArraySlice<UInt8>?) -> Bool {
            if let lower { guard let key, ByteOrder.compare(key, lower) >= 0 else { return false } }
            guard let upper, let key else { return true }
            return ByteOrder.compare(key, upper) < 0
        }
    }

    /// Copies the tree whose root is `root` (`depth` levels) into `appender`, reusing the
    /// pages of `earlier` (a copy of the same tree made from an older generation of the
    /// same file), and returns the copy's root.
    mutating func copyTree(
        root: PageAddress, depth: Int, earlier: TreeImage?, into appender: inout PageAppender
    ) throws(StorageError) -> PageAddress {
        if root.isNone { return .none }
        let start = earlier.flatMap { image in
            image.source.isNone
                ? nil : Earlier(source: image.source, copy: image.copy, height: image.depth, lower: nil, upper: nil)
        }
        return try copy(root, height: depth, lower: nil, earlier: start, root: start, into: &appender)
    }

    private mutating func copy(
        _ address: PageAddress, height: Int, lower: ArraySlice<UInt8>?, earlier: Earlier?, root: Earlier?,
        into appender: inout PageAppender
    ) throws(StorageError) -> PageAddress {
        // The same page as an earlier copy's: its subtree is that copy (see the type's comment).
        let candidate = try narrow(earlier, to: height, covering: lower, root: root)
        if let candidate, candidate.source == address { return candidate.copy }
        try checkpoint()
        let result: PageAddress
        switch try source.nodeBypassingCache(at: address) {
        case .leaf(let leaf):
            if let page = leaf.entries.unchangedPage {
                result = try appender.appendPage(
                    copying: page, from: address.offset, kind: .leaf, count: leaf.entries.count)
            } else {
                let entries = try leaf.entries.movingOverflowPages { (overflow) throws(StorageError) in
                    let copy = try checkedLength(
                        of: overflow, try appender.appendCopy(ofOverflow: overflow, from: source))
                    advance(UInt64(overflow.length))
                    return copy
                }
                result = try appender.appendLeaf(entries)
            }
            if let syncEvery, copiedBytes - syncedAt >= syncEvery {
                try appender.flush()
                try appender.file.handle.syncData()
                syncedAt = copiedBytes
            }
        case .branch(let branch):
            // The earlier copy's children at this height, by source page: an unchanged child
            // is found here without reading it.
            var known: [PageAddress: PageAddress] = [:]
            if let candidate, candidate.height == height,
                case .branch(let earlierSource) = try source.nodeBypassingCache(at: candidate.source),
                case .branch(let earlierCopy) = try target.nodeBypassingCache(at: candidate.copy),
                earlierSource.children.count == earlierCopy.children.count
            {
                for index in earlierSource.children.indices {
                    known[earlierSource.children[index]] = earlierCopy.children[index]
                }
            }
            var children: [PageAddress] = []
            children.reserveCapacity(branch.children.count)
            for (index, child) in branch.children.enumerated() {
                if let copied = known[child] {
                    children.append(copied)
                    continue
                }
                let childLower = index == 0 ? lower : branch.keys[index - 1]
                children.append(
                    try copy(
                        child, height: height - 1, lower: childLower, earlier: candidate, root: root, into: &appender))
            }
            result = try appender.appendBranch(keys: branch.keys, children: children)
        }
        advance(UInt64(address.length))
        return try checkedLength(of: address, result)
    }

    /// The earlier copy's node at `height` whose range holds `key`, starting from `earlier`
    /// when its range holds the key, else from the earlier tree's root; nil if the earlier
    /// tree is lower than `height` (it then stays the candidate of the levels below).
    private func narrow(
        _ earlier: Earlier?, to height: Int, covering key: ArraySlice<UInt8>?, root: Earlier?
    ) throws(StorageError) -> Earlier? {
        guard var node = earlier else { return nil }
        if node.height < height { return node }
        if !node.covers(key), let root, root.height >= height { node = root }
        while node.height > height {
            guard case .branch(let sourceBranch) = try source.nodeBypassingCache(at: node.source),
                case .branch(let copyBranch) = try target.nodeBypassingCache(at: node.copy),
                sourceBranch.children.count == copyBranch.children.count
            else { return nil }
            let index = key.map { ByteOrder.upperBound(sourceBranch.keys, $0) } ?? 0
            node = Earlier(
                source: sourceBranch.children[index], copy: copyBranch.children[index], height: node.height - 1,
                lower: index == 0 ? node.lower : sourceBranch.keys[index - 1],
                upper: index == sourceBranch.keys.count ? node.upper : sourceBranch.keys[index])
        }
        return node
    }

    /// A copied page is as long as its source page (addresses are fixed-width, contents are
    /// unchanged): what lets a tree's byte count be taken from the generation it was copied
    /// from, and a reused subtree's bytes go uncounted.
    private func checkedLength(of source: PageAddress, _ copy: PageAddress) throws(StorageError) -> PageAddress {
        guard copy.length == source.length else {
            throw .corruption(
                Corruption(
                    file: self.source.file.path, offset: source.offset,
                    detail: "compaction: the copy of this page is \(copy.length) bytes, not \(source.length)",
                    expectedChecksum: 0, actualChecksum: 0))
        }
        return copy
    }

    private mutating func advance(_ bytes: UInt64) {
        copiedBytes += bytes
        if let progress, copiedBytes - reported >= 1 << 20 {
            reported = copiedBytes
            progress(.copying(bytesCopied: min(copiedBytes, total), totalBytes: total))
        }
    }
}

extension PageAppender {
    /// A copy of the overflow page at `address` of `source`: the page moved whole, or, when
    /// the cache holds its value rather than its bytes, the value written again.
    mutating func appendCopy(
        ofOverflow address: PageAddress, from source: PageSource
    ) throws(StorageError) -> PageAddress {
        if let page = try source.overflowPageBypassingCache(at: address) {
            return try appendPage(copying: page, from: address.offset, kind: .overflow, count: 0)
        }
        return try appendOverflow(try source.overflowBypassingCache(at: address))
    }
}
