/// Appends new pages after a snapshot file's committed end, children before parents, in
/// buffered chunks of at most ``chunkSize`` bytes (so a large commit or a compaction never
/// holds more than one chunk and one root-to-leaf path in memory).
///
/// Appending only ever writes past the committed length: nothing committed is rewritten
/// (Docs/Format.md §3). A child's page always ends before its parent's begins; the decoder
/// relies on that (see ``TreePage/decode(_:address:file:)``).
///
/// A commit's appender is a run (Docs/Format.md §7): given the previous commit page's
/// checksum as `chainSeed`, it checksums every byte it writes before the commit page, and
/// the commit page carries that checksum, so recovery can tell a complete run from a torn
/// or stale one. It also preallocates: when a write would pass the file's allocated end,
/// zeros are written past it, so that later commits overwrite allocated blocks and their
/// fdatasync has no file size or block allocation to record.
struct PageAppender {
    static let chunkSize = 1 << 20
    /// Preallocation grows the file by an eighth of its committed length, between 64 KiB
    /// and 8 MiB: few extensions for a large store, little unused space for a small one.
    static func preallocationChunk(committedLength: UInt64) -> UInt64 {
        min(max(committedLength / 8, 64 << 10), 8 << 20)
    }

    let file: SnapshotFile
    let generation: UInt64
    let start: UInt64
    /// Collect decoded copies of written pages, to warm the cache once the commit succeeds.
    let collectsCacheEntries: Bool
    let crashPoint: CrashPoint
    private(set) var buffer = ByteWriter(capacity: 1 << 16)
    private(set) var flushedBytes: UInt64 = 0
    private(set) var pageCount = 0
    /// Pages of ``pageCount`` moved whole (``appendPage(copying:from:kind:count:)``).
    private(set) var movedPages = 0
    private(set) var cacheEntries: [WrittenPage] = []
    /// Record where each page went (``pageOffsets``): for a writer that needs only to know
    /// which cache keys its pages replace, not copies of them (a spill).
    var recordsPageOffsets = false
    private(set) var pageOffsets: [UInt64] = []
    /// The running (pre-inverted) CRC-32C of the run, nil when this appender writes no run.
    private var runCRC: UInt32?
    /// Bytes at the start of `buffer` already folded into `runCRC`.
    private var checksummedInBuffer = 0
    /// The shifts of page checksums into the run's, and of moved pages' checksums: it keeps
    /// the power of the last length, which pages of one length (overflow pages of equal
    /// values, leaves of fixed-size records) reuse.
    private var shifter = CRC32CShifter()
    /// Extend the file with zeros ahead of the writes (commits do; copies into a new file
    /// do not: they are written once, to their final length).
    let preallocates: Bool

    init(
        file: SnapshotFile, generation: UInt64, start: UInt64, collectsCacheEntries: Bool = true,
        crashPoint: CrashPoint = .commitMidAppend, chainSeed: UInt32? = nil, preallocates: Bool = false
    ) {
        self.file = file
        self.generation = generation
        self.start = start
        self.collectsCacheEntries = collectsCacheEntries
        self.crashPoint = crashPoint
        self.preallocates = preallocates
        if let chainSeed { runCRC = RunChecksum.seeded(with: chainSeed) }
    }

    /// An appender that continues a run begun by earlier appenders (a transaction's spilled
    /// pages): `start` is where they ended, `runningChecksum` their ``runningChecksum``.
    init(
        continuingRunAt start: UInt64, runningChecksum: UInt32, file: SnapshotFile, generation: UInt64,
        collectsCacheEntries: Bool, preallocates: Bool
    ) {
        self.file = file
        self.generation = generation
        self.start = start
        self.collectsCacheEntries = collectsCacheEntries
        self.crashPoint = .commitMidAppend
        self.preallocates = preallocates
        runCRC = runningChecksum
    }

    /// The run's checksum so far, before finishing: what a continuing appender starts from.
    /// Call after ``flush()``.
    var runningChecksum: UInt32? { runCRC }

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
            // Overflow pages first, so the leaf can point at them. The node itself is not
            // changed: a savepoint may still share it, and roll a spill back.
            let pending = node.entries.pendingEntries
            var addresses: [PageAddress] = []
            if !pending.isEmpty {
                addresses = Array(repeating: .none, count: node.entries.pendingValues.count)
                for (place, bytes) in pending { addresses[place] = try appendOverflow(bytes) }
            }
            return try appendLeaf(node.entries, pendingAddresses: addresses)
        case .mutable(let node):
            // The unchanged children keep their addresses; only the changed ones are
            // written, in child order (children before their parent).
            var children = node.children.addresses
            var changed: [(index: Int, address: PageAddress)] = []
            changed.reserveCapacity(node.children.changed.count)
            for child in node.children.changed {
                let address = try write(.mutable(child.node))
                children[child.index] = address
                changed.append((child.index, address))
            }
            if let page = node.sourcePage {
                return try appendBranch(copying: page, keys: node.keys, children: children, changed: changed)
            }
            return try appendBranch(keys: node.keys, children: children)
        }
    }

    mutating func appendLeaf(
        _ entries: LeafEntries, pendingAddresses: [PageAddress] = []
    ) throws(StorageError) -> PageAddress {
        let offset = position, pageStart = buffer.count
        TreePage.encodeLeaf(
            entries, pendingAddresses: pendingAddresses, generation: generation, into: &buffer, at: offset)
        return try finishPage(at: offset, cached: writtenLeaf(from: pageStart))
    }

    /// A branch is cached as the node it was written from, not parsed back from its bytes:
    /// parsing a branch of a hundred separators, and later freeing that second node, was a
    /// tenth of a single-record commit's instructions (callgrind). Its separators are slices
    /// of the pages and arrays they came from, so a cached branch may keep one older page
    /// alive beyond the cache's count of it; branches are about one page in a fan-out's
    /// worth, so that overhang is a small fraction of the cache.
    mutating func appendBranch(keys: [ArraySlice<UInt8>], children: [PageAddress]) throws(StorageError) -> PageAddress {
        let offset = position, pageStart = buffer.count
        TreePage.encodeBranch(keys: keys, children: children, generation: generation, into: &buffer, at: offset)
        return try finishPage(at: offset, cached: writtenBranch(keys: keys, children: children, from: pageStart))
    }

    /// ``appendBranch(keys:children:)`` of a branch whose separators are those of `page`,
    /// where `changed` lists the children that differ from it: the page is copied and those
    /// children's addresses written over (the same bytes, checked in debug builds).
    mutating func appendBranch(
        copying page: [UInt8], keys: [ArraySlice<UInt8>], children: [PageAddress],
        changed: [(index: Int, address: PageAddress)]
    ) throws(StorageError) -> PageAddress {
        let offset = position, pageStart = buffer.count
        TreePage.encodeBranch(
            copying: page, keys: keys, changed: changed, generation: generation, into: &buffer, at: offset)
        assert(
            {
                var encoded = ByteWriter()
                TreePage.encodeBranch(
                    keys: keys, children: children, generation: generation, into: &encoded, at: offset)
                return encoded.bytes[...] == buffer.bytes[pageStart...]
            }(), "a branch copied from its page encodes to other bytes than its separators and children")
        return try finishPage(at: offset, cached: writtenBranch(keys: keys, children: children, from: pageStart))
    }

    /// The branch just encoded from `pageStart` of the buffer, for the cache: the node it was
    /// written from, with a copy of its bytes, from which the next commit that changes it
    /// writes it again (``TreePage``'s `encodeBranch(copying:…)`).
    private func writtenBranch(keys: [ArraySlice<UInt8>], children: [PageAddress], from pageStart: Int) -> CachedPage? {
        guard collectsCacheEntries else { return nil }
        let page = Self.detachedCopy(of: buffer.bytes[pageStart...])
        return .node(.branch(BranchNode(keys: keys, children: children, pageLength: page.count, page: page)))
    }

    /// The leaf just encoded from `pageStart` of the buffer, for the cache: a copy of its own
    /// bytes, which the cache reads in place once decoded, so a cached leaf keeps alive
    /// exactly the bytes it was written with (its values would otherwise be slices of the
    /// older page it was copied from, as large as itself, which the cache's byte count would
    /// not see). Decoded on its first read, if there is one (``CachedPage/writtenLeaf(_:)``).
    private func writtenLeaf(from pageStart: Int) -> CachedPage? {
        guard collectsCacheEntries else { return nil }
        return .writtenLeaf(Self.detachedCopy(of: buffer.bytes[pageStart...]))
    }

    /// A copy of `bytes` in storage of its own, exactly as large. `Array(slice)` is not one
    /// when the slice spans its whole array: it shares the array's storage, so a page written
    /// first after a flush would keep the appender's whole buffer (64 KiB to past 1 MiB)
    /// alive in the cache, which counts only the page's length.
    static func detachedCopy(of bytes: ArraySlice<UInt8>) -> [UInt8] {
        bytes.withUnsafeBufferPointer { Array($0) }
    }

    mutating func appendOverflow(_ value: [UInt8]) throws(StorageError) -> PageAddress {
        let offset = position
        TreePage.encodeOverflow(value, generation: generation, into: &buffer, at: offset)
        return try finishPage(at: offset, cached: collectsCacheEntries ? .overflow(value) : nil)
    }

    /// Appends a copy of `page`, a leaf or overflow page whose stored checksum is valid at
    /// `sourceOffset` (it was checked when read, or this process sealed it there), with this
    /// appender's header fields: the bytes ``appendLeaf(_:pendingAddresses:)`` or
    /// ``appendOverflow(_:)`` would write for its contents, without reading the body through
    /// a CRC again (``PageHeader/checksum(movedFrom:at:header:to:shifter:)``). The caller vouches
    /// that the body needs no change: a leaf's ``LeafEntries/unchangedPage`` or one
    /// ``TreePage/isInlineLeaf(_:count:)`` accepts, any overflow page.
    mutating func appendPage(
        copying page: [UInt8], from sourceOffset: UInt64, kind: PageKind, count: Int
    ) throws(StorageError) -> PageAddress {
        try page.withRawBytes { (raw) throws(StorageError) in
            try appendPage(copying: raw, from: sourceOffset, kind: kind, count: count)
        }
    }

    /// ``appendPage(copying:from:kind:count:)`` of a page in place (a window of a larger read).
    mutating func appendPage(
        copying source: UnsafeRawBufferPointer, from sourceOffset: UInt64, kind: PageKind, count: Int
    ) throws(StorageError) -> PageAddress {
        let offset = position
        let start = PageHeader.begin(&buffer, kind: kind, count: count, generation: generation)
        buffer.append(raw: UnsafeRawBufferPointer(rebasing: source[PageHeader.size...]))
        buffer.set(UInt32(source.count), at: start + 8)
        var shifter = self.shifter
        defer { self.shifter = shifter }
        let checksum = buffer.bytes.withUnsafeBytes { written in
            PageHeader.checksum(
                movedFrom: source, at: sourceOffset,
                header: UnsafeRawBufferPointer(rebasing: written[(start + 4)..<(start + PageHeader.size)]),
                to: offset, shifter: &shifter)
        }
        buffer.set(checksum, at: start)
        movedPages += 1
        assert(
            buffer.bytes.withUnsafeBytes { PageHeader.checksum($0[(start + 4)...], fileOffset: offset) } == checksum,
            "a moved page's checksum differs from its bytes' (or its source's stored checksum was not valid)")
        let cached: CachedPage?
        if !collectsCacheEntries {
            cached = nil
        } else if kind == .overflow {
            cached = .overflow(Array(source[PageHeader.size...]))
        } else {
            cached = writtenLeaf(from: start)
        }
        return try finishPage(at: offset, cached: cached)
    }

    /// Appends the commit page (always the last page of a commit). In a run, the page
    /// carries the checksum of every byte appended before it.
    mutating func appendCommit(
        _ record: CommitRecord,
        liveBytesBeforePage: UInt64
    ) -> (address: PageAddress, liveBytes: UInt64, chain: UInt32) {
        pageCount += 1
        var record = record
        if runCRC != nil {
            foldBufferIntoRunChecksum()
            record.runChecksum = RunChecksum.finish(runCRC!)
            runCRC = nil  // the commit page ends the run
        }
        return CommitRecord.encode(record, liveBytesBeforePage: liveBytesBeforePage, into: &buffer, at: position)
    }

    /// Folds the buffered bytes not yet in the run checksum, up to `end` (the buffer's end by
    /// default), by reading them. Pages are folded as they are sealed
    /// (``foldSealedPageIntoRunChecksum(length:at:)``), so this reads only bytes outside
    /// any page, of which a run has none today.
    private mutating func foldBufferIntoRunChecksum(upTo end: Int? = nil) {
        let end = end ?? buffer.count
        guard let crc = runCRC, end > checksummedInBuffer else { return }
        runCRC = buffer.bytes.withUnsafeBytes {
            RunChecksum.update(crc, UnsafeRawBufferPointer(rebasing: $0[checksummedInBuffer..<end]))
        }
        checksummedInBuffer = end
    }

    /// The page just sealed at the end of the buffer enters the run checksum through its own
    /// checksum: each byte of a commit is read once, by the page checksum, not a second time
    /// for the run (RunChecksum's `update(_:sealedPageChecksum:length:fileOffset:)`).
    private mutating func foldSealedPageIntoRunChecksum(length: Int, at offset: UInt64) {
        guard runCRC != nil else { return }
        let pageStart = buffer.count - length
        foldBufferIntoRunChecksum(upTo: pageStart)
        let stored = buffer.bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: pageStart, as: UInt32.self) }
        var shifter = self.shifter
        defer { self.shifter = shifter }
        runCRC = RunChecksum.update(
            runCRC!, sealedPageChecksum: UInt32(littleEndian: stored), length: length, fileOffset: offset,
            shifter: &shifter)
        checksummedInBuffer = buffer.count
    }

    private mutating func finishPage(
        at offset: UInt64, cached: CachedPage?
    ) throws(StorageError) -> PageAddress {
        let address = PageAddress(offset: offset, length: UInt32(position - offset))
        foldSealedPageIntoRunChecksum(length: Int(address.length), at: offset)
        pageCount += 1
        if recordsPageOffsets { pageOffsets.append(offset) }
        if let cached {
            cacheEntries.append(
                WrittenPage(
                    key: PageCache.Key(file: file.cacheIdentity, offset: offset), address: address, page: cached))
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
        foldBufferIntoRunChecksum()
        let offset = start + flushedBytes
        try file.handle.write(buffer.bytes, at: offset)
        flushedBytes += UInt64(buffer.count)
        buffer.bytes.removeAll(keepingCapacity: true)
        checksummedInBuffer = 0
    }

    /// After the run's last write: if it passed the file's allocated end, zero-fills the
    /// file from the run's end to a chunk past it, so that the next commits overwrite
    /// allocated blocks. Only bytes past the run are written (Docs/Format.md §3): zeros are
    /// never a complete run, so recovery stops at them. The commit's sync covers them.
    func preallocateAfterRun() throws(StorageError) {
        guard preallocates else { return }
        let end = start + flushedBytes + UInt64(buffer.count)
        let allocated = file.allocatedLength
        guard end > allocated else { return }
        // Another writer process may have allocated past this run already: its runs and its
        // zeros lie after what this writer last allocated, and a turn's catch-up does not ask
        // the file's size (Store+CatchUp.swift says why). Its zeros are used then, not
        // written again: without this look, every turn that followed another process's
        // commits wrote a whole chunk of zeros (an eighth of the file) and synced it. Asked
        // only here, where zeros would be written otherwise, so a writer alone asks once per
        // chunk, just before a sync that records the file's new length anyway.
        let size = try file.handle.size()
        if size > end {
            file.allocatedLength = size
            return
        }
        let target = end + Self.preallocationChunk(committedLength: start)
        let zeros = ZeroBytes.buffer
        var position = end
        while position < target {
            let count = Int(min(UInt64(zeros.count), target - position))
            try file.handle.write(UnsafeRawBufferPointer(rebasing: zeros[0..<count]), at: position)
            position += UInt64(count)
        }
        file.allocatedLength = target
    }
}
