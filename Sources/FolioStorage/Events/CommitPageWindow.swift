/// The bytes of a snapshot file around the commit pages a replay reads, read in blocks.
///
/// A replay reads one commit page per generation, in file order: backward along the chain
/// in its first pass, forward in its second. The pages are small and lie close together
/// (each at the end of its run), so reading each with a system call of its own cost more
/// than decoding it: a writer that took its turn after three other processes had made a
/// thousand commits each spent more time in those reads than in its own commit. One read
/// of up to ``size`` bytes serves every page that lies inside it.
///
/// Why the bytes are right: a replay asks only for pages the commit chain of a committed
/// root names, and every such page was durable (so readable) before that root's commit,
/// before the replay began. Committed pages are never rewritten (Docs/Format.md §3), and a
/// file number names one file for the store's life, so a block read during the replay holds
/// exactly what a read of the page alone would return. Bytes past the committed end may be
/// part of another writer's run in progress; the window holds them but never serves them,
/// because no page the chain names lies there. A page the window does not cover entirely
/// (the file ends first, or the page is larger than the block) is read alone, as before.
///
/// Blocks pay only where commit pages lie close together. A read of a page alone costs a
/// system call, about a microsecond; a block costs that once, plus copying every byte between
/// its pages, at some 5 GB/s. Pages further apart than ``sparseSpacing`` (the runs of
/// transactions that changed a few records with their indexes: several leaves each) are
/// read alone: a block would copy more between them than the calls it saves cost. A writer
/// that took its turn after another process's streak of such commits spent 1.3 ms a turn
/// reading blocks (and faulting in their fresh memory) where reads alone take a third.
struct CommitPageWindow {
    /// The most bytes read at once: with commit runs of a few KiB, some fifty commit pages.
    static let size = 256 << 10
    /// The first read's size. A read that served more than one page doubles the next one, up
    /// to ``size``; one that served a single page halves it, down to this: most replays
    /// cover a few commits, and the runs of large transactions lie far apart, and for both
    /// a large read would copy more than the reads it saves.
    static let firstSize = 16 << 10
    /// The distance between two commit pages asked for one after the other beyond which the
    /// next is read alone (the break-even of a system call and the copy of the bytes between).
    static let sparseSpacing: UInt64 = 6 << 10

    private var fileIdentity: UInt64?
    private var start: UInt64 = 0
    private var bytes: [UInt8] = []

    /// Reads ahead of the pages asked for: toward the file's start while true (the chain's
    /// first pass, newest first), toward its end while false.
    var readsBackward = true {
        didSet { if readsBackward != oldValue { (nextSize, served) = (Self.firstSize, nil) } }
    }
    private var nextSize = Self.firstSize
    /// Pages served from the block in `bytes`; nil before the first block in this direction.
    private var served: Int?
    /// Where the page asked for last begins, in the file it is in.
    private var last: (file: UInt64, offset: UInt64)?

    /// The bytes of the page at `address` in `file`.
    mutating func bytes(
        of address: PageAddress, in file: SnapshotFile, counters: IOCounters
    ) throws(StorageError) -> [UInt8] {
        let count = try address.byteCount(file: file.path)
        defer { last = (file.cacheIdentity, address.offset) }
        if let covered = cached(address, count, file) { return covered }
        if let last, last.file == file.cacheIdentity,
            (last.offset > address.offset ? last.offset - address.offset : address.offset - last.offset)
                > Self.sparseSpacing
        {
            return try readAlone(address, count, file, counters)
        }
        if let served {
            nextSize = served > 1 ? min(nextSize * 2, Self.size) : max(nextSize / 2, Self.firstSize)
        }
        let size = nextSize
        // A page that would end past the last offset (a damaged link names any) is read alone:
        // the read finds nothing there, and decoding reports the damage.
        guard count < size, address.offset <= UInt64.max - UInt64(address.length) else {
            return try readAlone(address, count, file, counters)
        }
        let blockStart = readsBackward ? (address.end > UInt64(size) ? address.end - UInt64(size) : 0) : address.offset
        bytes = try file.handle.read(at: blockStart, count: size)
        counters.recordPageRead(bytes: bytes.count)
        (fileIdentity, start, served) = (file.cacheIdentity, blockStart, 0)
        if let covered = cached(address, count, file) { return covered }
        return try readAlone(address, count, file, counters)
    }

    private mutating func cached(_ address: PageAddress, _ count: Int, _ file: SnapshotFile) -> [UInt8]? {
        guard fileIdentity == file.cacheIdentity, address.offset >= start else { return nil }
        let from = address.offset - start
        guard from <= UInt64(bytes.count), UInt64(count) <= UInt64(bytes.count) - from else { return nil }
        let lower = Int(from)
        served = (served ?? 0) + 1
        return Array(bytes[lower..<lower + count])
    }

    private func readAlone(
        _ address: PageAddress, _ count: Int, _ file: SnapshotFile, _ counters: IOCounters
    ) throws(StorageError) -> [UInt8] {
        let read = try file.handle.read(at: address.offset, count: count)
        counters.recordPageRead(bytes: read.count)
        return read
    }
}
