/// Checks the committed runs of one snapshot file, reading it once from its first page to a
/// generation's committed end: what a restore does before it copies that generation, so that
/// it never copies damage it could have seen (Docs/Format.md §7, "Runs and the chain").
///
/// The page area below a generation's committed length is a gap-free sequence of pages
/// ending in that generation's commit page (§3), so walking page headers forward from
/// offset 64 meets every commit page of the file in generation order. At each one the walk
/// checks that the page validates as a commit page (§4, §7), that it follows the commit
/// before it (next generation, a transaction naming that commit as `previous`), and that
/// its `runChecksum` matches its run, seeded with the previous commit page's chain value.
/// Creation and compaction commits carry no run checksum (the pages before a compaction's
/// commit are its copy), nor do the commit pages version 1 wrote (their field is 0).
///
/// **What is compared with the run checksum.** The run's CRC is continued from each page's
/// stored checksum and length (``RunChecksum/update(_:sealedPageChecksum:length:fileOffset:)``),
/// not from a second CRC pass over the page's bytes: that equals the run checksum of the
/// bytes exactly when every page of the run matches its own stored checksum. So the walk
/// proves which pages the run holds (their offsets, lengths, kinds and stored checksums, the
/// commit pages' bytes), and the copy that follows checks each page it copies against its
/// stored checksum. Together they catch everything that could change what is restored: a
/// page that is not the one written (a stale page of another history at the same offset, a
/// torn copy) has another stored checksum and fails the run; a page whose bytes were
/// damaged after it was written fails its own checksum when the copy reads it. What they do
/// not catch is damage inside a page no restored generation uses (a dead page), which
/// cannot change what is restored, so it does not cost the newer generations; and a
/// restore reads each restored page's bytes through a CRC once instead of twice.
///
/// Damage at offset `x` cannot change a generation whose commit page ends at or before `x`
/// (nothing of it lies there, and runs are never rewritten), so the newest commit the walk
/// passed before meeting damage is intact as far as runs can tell. A run's checksum cannot
/// say which of its pages differs, so a run that does not match taints every generation
/// from it on.
///
/// The cost is one sequential read of the file up to the committed end (in 1 MiB blocks), a
/// few hundred instructions a page, and one CRC pass over each commit page.
struct RunCheck {
    /// The newest commit the walk found intact, as the root of its generation (nil if the
    /// walk met damage before the file's first commit page ended).
    var intact: RootRecord?
    /// The damage that ended the walk before `end`, if any.
    var damage: Corruption?
    /// Transaction runs whose checksum was compared.
    var runsChecked = 0
    /// Bytes of the file read.
    var bytesRead: UInt64 = 0

    /// The bytes read at once: enough that system calls do not count. Each block is a fresh
    /// array, and 4 MiB ones cost a restore page faults (fresh memory for every block) that
    /// 1 MiB ones, which the allocator reuses, do not.
    static let blockSize = 1 << 20

    /// Walks `file` from its first page. With `exact`, the walk must end exactly at `end` on
    /// a commit page (a generation's committed length): anything else is damage. Without it,
    /// `end` is a bound (an offset where damage was found): the walk stops before the first
    /// page that would reach past it and reports no damage for that. `formatVersion` is the
    /// store's (the root slots'); it goes into the roots the walk returns.
    static func walk(
        _ file: SnapshotFile, to end: UInt64, exact: Bool, formatVersion: UInt32
    ) throws(StorageError) -> RunCheck {
        var check = RunCheck()
        var reader = BlockReader(file: file, end: end)
        var position = UInt64(SnapshotHeader.size)
        var crc: UInt32 = 0
        var shifter = CRC32CShifter()
        func damaged(_ offset: UInt64, _ detail: String, expected: UInt32? = nil, actual: UInt32? = nil) -> RunCheck {
            var found = check
            found.damage = Corruption(
                file: file.path, offset: offset, detail: detail, expectedChecksum: expected, actualChecksum: actual)
            found.bytesRead = reader.bytesRead
            return found
        }
        while position < end {
            guard end - position >= UInt64(PageHeader.size) else {
                if !exact { break }
                return damaged(position, "\(end - position) bytes before the committed end at \(end) hold no page")
            }
            guard try reader.holds(position, count: PageHeader.size) else {
                return damaged(
                    position, "the file ends at \(try file.handle.size()) bytes, before the committed end at \(end)")
            }
            let header = reader.header(at: position)
            let length = UInt64(header.length)
            guard let kind = PageKind(rawValue: header.kind), length >= UInt64(PageHeader.size) else {
                return damaged(position, "no page header where a page must begin (the pages below \(end) do not tile)")
            }
            guard length <= end - position else {
                if !exact { break }
                return damaged(position, "a page of \(length) bytes reaches past the committed end at \(end)")
            }
            guard try reader.holds(position, count: Int(length)) else {
                return damaged(position, "the file ends at \(try file.handle.size()) bytes, inside a page")
            }
            guard kind == .commit else {
                if check.intact != nil {
                    crc = RunChecksum.update(
                        crc, sealedPageChecksum: header.checksum, length: Int(length), fileOffset: position,
                        shifter: &shifter)
                }
                position += length
                continue
            }
            let address = PageAddress(offset: position, length: UInt32(length))
            let page = reader.array(at: position, count: Int(length))
            let commit: CommitRecord
            do throws(StorageError) {
                commit = try CommitRecord.decode(page, address: address, file: file.path)
            } catch .corruption(let corruption) {
                var found = check
                found.damage = corruption
                found.bytesRead = reader.bytesRead
                return found
            }
            let chain = page.littleEndianUInt32(at: 0)
            if let previous = check.intact {
                guard commit.kind == .transaction, commit.generation == previous.generation &+ 1,
                    commit.previous == previous.location
                else {
                    return damaged(
                        position,
                        "commit page of generation \(commit.generation) does not follow the commit of generation "
                            + "\(previous.generation) before it")
                }
                if commit.runChecksum != 0 {
                    let computed = RunChecksum.finish(crc)
                    check.runsChecked += 1
                    guard computed == commit.runChecksum else {
                        return damaged(
                            previous.committedLength,
                            "the run of generation \(commit.generation) (bytes \(previous.committedLength)..<\(position)) "
                                + "does not match its run checksum",
                            expected: commit.runChecksum, actual: computed)
                    }
                }
            }
            check.intact = RootRecord(
                generation: commit.generation, snapshotFile: file.number, committedLength: address.end,
                commitPage: address, catalogRoot: commit.catalogRoot, liveBytes: commit.liveBytes,
                timestamp: commit.timestamp, previous: commit.previous, chain: chain, formatVersion: formatVersion)
            crc = RunChecksum.seeded(with: chain)
            position += length
        }
        if exact && check.intact?.committedLength != end {
            return damaged(end, "no commit page ends at the committed end \(end)")
        }
        check.bytesRead = reader.bytesRead
        return check
    }
}

/// Reads a file forward in large blocks and serves the byte ranges a page walk asks for.
private struct BlockReader {
    let file: SnapshotFile
    /// Nothing at or past this offset is read.
    let end: UInt64
    private var block: [UInt8] = []
    private var blockStart: UInt64 = 0
    private(set) var bytesRead: UInt64 = 0

    init(file: SnapshotFile, end: UInt64) {
        self.file = file
        self.end = end
    }

    /// Whether the `count` bytes at `offset` (at or after every offset asked before) are in
    /// the block, reading on if they are not; false if the file ends first.
    mutating func holds(_ offset: UInt64, count: Int) throws(StorageError) -> Bool {
        let blockEnd = blockStart + UInt64(block.count)
        if offset >= blockStart, offset + UInt64(count) <= blockEnd { return true }
        // The next block starts at `offset`: the part of a page the last block held is read
        // again (less than a page) rather than the new block copied after it.
        let wanted = max(count, min(RunCheck.blockSize, Int(clamping: end - min(end, offset))))
        let read = try file.handle.read(at: offset, count: wanted)
        bytesRead += UInt64(read.count) - min(UInt64(read.count), blockEnd - min(blockEnd, offset))
        (block, blockStart) = (read, offset)
        return read.count >= count
    }

    /// The stored checksum, kind byte and length field of the page header at `offset`, which
    /// ``holds(_:count:)`` said is in the block: read in place, for the walk's every page.
    func header(at offset: UInt64) -> (checksum: UInt32, kind: UInt8, length: UInt32) {
        block.withUnsafeBytes { raw in
            let lower = Int(offset - blockStart)
            return (
                UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: lower, as: UInt32.self)), raw[lower + 4],
                UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: lower + 8, as: UInt32.self))
            )
        }
    }

    /// A copy of the `count` bytes at `offset`, which ``holds(_:count:)`` said are in the block.
    func array(at offset: UInt64, count: Int) -> [UInt8] {
        let lower = Int(offset - blockStart)
        return Array(block[lower..<lower + count])
    }
}
