/// Appends new pages after a snapshot file's committed end, children before parents, in
/// buffered chunks of at most ``chunkSize`` bytes (so a large commit or a compaction never
/// holds more than one chunk and one root-to-leaf path in memory).
///
/// Appending only ever writes past the committed length: nothing committed is rewritten
/// (Docs/Format.md §3). A child's page always ends before its parent's begins; the decoder
/// relies on that (see ``TreePage/decode(_:address:file:)``).
struct PageAppender {
    static let chunkSize = 1 << 20

    let file: SnapshotFile
    let generation: UInt64
    let start: UInt64
    /// Collect decoded copies of written pages, to warm the cache once the commit succeeds.
    let collectsCacheEntries: Bool
    let crashPoint: CrashPoint
    private(set) var buffer = ByteWriter(capacity: 1 << 16)
    private(set) var flushedBytes: UInt64 = 0
    private(set) var pageCount = 0
    private(set) var cacheEntries: [(key: PageCache.Key, page: CachedPage, cost: Int)] = []

    init(file: SnapshotFile, generation: UInt64, start: UInt64, collectsCacheEntries: Bool = true,
         crashPoint: CrashPoint = .commitMidAppend) {
        self.file = file
        self.generation = generation
        self.start = start
        self.collectsCacheEntries = collectsCacheEntries
        self.crashPoint = crashPoint
    }

    /// Where the next page will go.
    var position: UInt64 { start + flushedBytes + UInt64(buffer.count) }
    /// Bytes appended so far.
    var bytesAppended: UInt64 { flushedBytes + UInt64(buffer.count) }

    /// Writes every changed node of a tree (post-order) and returns its root's address.
    mutating func writeTree(_ root: NodeRef?) throws(StorageError) -> PageAddress {
        guard let root else { return .none }
        return try write(root)
    }

    private mutating func write(_ ref: NodeRef) throws(StorageError) -> PageAddress {
        switch ref {
        case .stored(let address):
            return address
        case .mutable(let node) where node.isLeaf:
            var values = node.values
            for index in values.indices {
                if case .pendingOverflow(let bytes) = values[index] { values[index] = .overflow(try appendOverflow(bytes)) }
            }
            return try appendLeaf(LeafNode(keys: node.keys, values: values))
        case .mutable(let node):
            var children: [PageAddress] = []
            children.reserveCapacity(node.children.count)
            for child in node.children { children.append(try write(child)) }
            return try appendBranch(BranchNode(keys: node.keys, children: children))
        }
    }

    mutating func appendLeaf(_ leaf: LeafNode) throws(StorageError) -> PageAddress {
        let offset = position
        TreePage.encodeLeaf(keys: leaf.keys, values: leaf.values, generation: generation, into: &buffer, at: offset)
        return try finishPage(at: offset, cached: .node(.leaf(leaf)))
    }

    mutating func appendBranch(_ branch: BranchNode) throws(StorageError) -> PageAddress {
        let offset = position
        TreePage.encodeBranch(keys: branch.keys, children: branch.children, generation: generation, into: &buffer, at: offset)
        return try finishPage(at: offset, cached: .node(.branch(branch)))
    }

    mutating func appendOverflow(_ value: [UInt8]) throws(StorageError) -> PageAddress {
        let offset = position
        TreePage.encodeOverflow(value, generation: generation, into: &buffer, at: offset)
        return try finishPage(at: offset, cached: .overflow(value))
    }

    /// Appends the commit page (always the last page of a commit).
    mutating func appendCommit(_ record: CommitRecord, liveBytesBeforePage: UInt64) -> (PageAddress, UInt64) {
        pageCount += 1
        return CommitRecord.encode(record, liveBytesBeforePage: liveBytesBeforePage, into: &buffer, at: position)
    }

    private mutating func finishPage(at offset: UInt64, cached: CachedPage) throws(StorageError) -> PageAddress {
        let address = PageAddress(offset: offset, length: UInt32(position - offset))
        pageCount += 1
        if collectsCacheEntries {
            cacheEntries.append((PageCache.Key(file: file.number, offset: offset), cached, Int(address.length) + 64))
        }
        if buffer.count >= Self.chunkSize {
            try flush()
            crashPoint.reach()
        }
        return address
    }

    /// Writes what is buffered to the file.
    mutating func flush() throws(StorageError) {
        guard buffer.count > 0 else { return }
        try file.handle.write(buffer.bytes, at: start + flushedBytes)
        flushedBytes += UInt64(buffer.count)
        buffer.bytes.removeAll(keepingCapacity: true)
    }
}
