/// Reads the pages of a whole-tree copy (backup, restore) through a window of the file: one
/// `pread` of up to 1 MiB serves every page inside it, where reading page by page cost a
/// system call and a kernel copy per page, which was a third of a restore's processor time.
///
/// Pages of a tree are appended children first, so in a tree written in large commits or by
/// a compaction the leaves lie in the file in nearly the order a copy walks them
/// (ascending), and a window ahead of the leaf just read holds the next ones. A branch comes
/// after its children, so it is read alone (`ahead: false`): what follows it is not what
/// the walk reads next. A tree grown by many small commits is scattered over their runs
/// instead; there a window would read mostly pages the copy does not want. So the window
/// adapts: it doubles (to 1 MiB) each time the walk reads on past its end or used at least
/// half of it, halves otherwise, and below 16 KiB reads just the page asked for, until the
/// walk reads on from the page before.
///
/// A page served from the window counts as a page read (``IOStatistics``) with its own
/// bytes; what the window read ahead and never served is not counted. On a scattered layout
/// the window reads at most about 16 KiB more each time two pages the walk reads one after
/// the other happen to lie next to each other, and only each page otherwise.
///
/// It bypasses the page cache (a copy would evict every hot page) and never reads past `end`
/// (the copied generation's committed length, Format.md §3). Every page it returns is the
/// file's bytes, checked by the caller's decoding as any read page is (Format.md §4).
struct PageWindow {
    let source: PageSource
    /// Nothing at or past this offset is read ahead (a page asked for is read whole).
    let end: UInt64
    private var block: [UInt8] = []
    private var blockStart: UInt64 = 0
    /// Bytes of the current block that pages were served from.
    private var used = 0
    /// Where the last page served ended.
    private var lastEnd: UInt64 = 0
    /// Bytes read ahead on the next miss; below ``smallest``, none.
    private var size = 128 << 10

    static let largest = 1 << 20
    static let smallest = 16 << 10

    init(source: PageSource, end: UInt64) {
        self.source = source
        self.end = end
    }

    /// `body` of the bytes of the page at `address` as the file holds them (not yet checked;
    /// fewer than its length only where the file ends), in place in the window when they are
    /// there: no copy of them is made.
    mutating func withPage<Result>(
        at address: PageAddress, ahead: Bool = true,
        _ body: (UnsafeRawBufferPointer) throws(StorageError) -> Result
    ) throws(StorageError) -> Result {
        if let lower = place(of: address) {
            source.counters.recordPageRead(bytes: Int(address.length))
            lastEnd = address.end
            used += Int(address.length)
            return try block.withRawBytes { (raw) throws(StorageError) in
                try body(UnsafeRawBufferPointer(rebasing: raw[lower..<(lower + Int(address.length))]))
            }
        }
        let bytes = try page(at: address, ahead: ahead)
        return try bytes.withRawBytes(body)
    }

    /// Where the page at `address` lies in the block, if it lies there whole.
    private func place(of address: PageAddress) -> Int? {
        guard address.offset >= blockStart, address.offset - blockStart <= UInt64(block.count),
            UInt64(address.length) <= UInt64(block.count) - (address.offset - blockStart)
        else { return nil }
        return Int(address.offset - blockStart)
    }

    /// The bytes of the page at `address`, as the file holds them (not yet checked). With
    /// `ahead`, a read also reads ahead of the page, as far as the window says.
    mutating func page(at address: PageAddress, ahead: Bool = true) throws(StorageError) -> [UInt8] {
        let count = try address.byteCount(file: source.file.path)
        source.counters.recordPageRead(bytes: count)
        defer { lastEnd = address.offset &+ UInt64(count) }
        if let lower = place(of: address) {
            used += count
            return Array(block[lower..<(lower + count)])
        }
        guard ahead else { return try source.file.handle.read(at: address.offset, count: count) }
        adapt(missingAt: address.offset)
        let untilEnd = Int(clamping: end - min(end, address.offset))
        guard size >= Self.smallest, untilEnd > count else {
            block = []
            return try source.file.handle.read(at: address.offset, count: count)
        }
        block = try source.file.handle.read(at: address.offset, count: max(count, min(size, untilEnd)))
        blockStart = address.offset
        used = min(count, block.count)
        return Array(block.prefix(count))
    }

    /// Grows the window when the walk reads forward through it (or, reading page by page,
    /// on from the page before), shrinks it when most of it went unused.
    private mutating func adapt(missingAt offset: UInt64) {
        if block.isEmpty {
            if size < Self.smallest, offset == lastEnd { size = Self.smallest }
        } else if offset == blockStart + UInt64(block.count) || used * 2 >= block.count {
            size = min(size * 2, Self.largest)
        } else {
            size /= 2
        }
    }
}
