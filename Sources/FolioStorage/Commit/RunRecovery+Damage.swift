/// A run past the newest root that belongs to the commit chain but is damaged, and the
/// complete runs after it that it cuts off (Docs/Durability.md §1.5).
///
/// Recovery stops at the first incomplete run, so a damaged page in the run of generation
/// `g + 1` loses `g + 1` and every complete run after it, whatever reached the disk. This
/// says so, for the writer's log and for `verify`.
struct DamagedRun: Sendable, Equatable {
    /// The generation whose run is damaged: recovery stops just before it.
    var generation: UInt64
    /// The first page of that run that fails its checksum.
    var offset: UInt64
    /// The generations of the complete runs after it, each chained to the one before.
    var cutOff: ClosedRange<UInt64>

    /// One line for the log or a verification problem.
    var description: String {
        "the run of generation \(generation) past the last complete run is damaged (its page at offset \(offset) fails "
            + "its checksum), and the complete runs after it, generations \(cutOff.lowerBound)-\(cutOff.upperBound), "
            + "chain to it: recovery stops at generation \(generation - 1), so generations \(generation)-\(cutOff.upperBound) "
            + "are lost"
    }
}

extension RunRecovery {
    /// The damaged run right after `last` (the newest root reachable by complete runs, its
    /// `chain` set), if there is one that later complete runs chain to; nil otherwise.
    ///
    /// Only damage is reported, never an ordinary end of the runs: the run of `last + 1`
    /// must name `last` as its `previous` (by its own commit page, or, when that page is
    /// the damaged one, by the next commit page naming it), a page of it must fail its own
    /// checksum (stale bytes from an earlier use of the tail are whole pages; a run whose
    /// pages are all sound and whose run checksum differs is such a stale run, not damage),
    /// and at least one complete run must chain to it. A damaged last run with nothing
    /// after it is what a power cut leaves of an unsynced commit, and is not reported.
    /// (A power cut during one sync covering several commits can also tear an earlier run
    /// and leave a later one whole; those commits were not acknowledged, but the picture is
    /// the same, so the report says what is lost, not whether it was acknowledged.)
    ///
    /// Reads at most the damaged run and the runs it cuts off, page by page; I/O errors are
    /// thrown.
    static func damagedRun(after last: RootRecord, in file: SnapshotFile) throws(StorageError) -> DamagedRun? {
        // Generations come from disk: the two after `last` must exist for a report.
        guard last.generation <= UInt64.max - 2 else { return nil }
        let size = try file.handle.size()
        var position = last.committedLength
        var badPages: [PageAddress] = []
        while true {
            guard position <= size, size - position >= UInt64(PageHeader.size) else { return nil }
            let header = try file.handle.read(at: position, count: PageHeader.size)
            guard header.count == PageHeader.size else { return nil }
            let length = UInt64(header.littleEndianUInt32(at: 8))
            guard PageKind(rawValue: header[4]) != nil, length >= UInt64(PageHeader.size), length <= size - position
            else {
                return nil  // zeros, garbage, or a page past the end: the bytes end here
            }
            let address = PageAddress(offset: position, length: UInt32(length))
            let page = try file.handle.read(at: position, count: Int(length))
            guard page.count == Int(length) else { return nil }
            position += length
            guard (try? PageHeader.validate(page, address: address, file: file.path)) != nil else {
                badPages.append(address)
                continue
            }
            guard header[4] == PageKind.commit.rawValue else { continue }
            // The first sound commit page past `last` decides.
            guard let firstBad = badPages.first?.offset,
                let commit = try? CommitRecord.decode(page, address: address, file: file.path),
                commit.kind == .transaction, let previous = commit.previous
            else { return nil }
            let chain = page.littleEndianUInt32(at: 0)
            let damaged: RootRecord
            if commit.generation == last.generation &+ 1 && previous == last.location {
                // The run's own commit page is sound and names `last`; a page before it is not.
                damaged = root(of: commit, at: address, in: file, chain: chain, version: last.formatVersion)
            } else if commit.generation == last.generation &+ 2, previous.fileNumber == file.number,
                badPages.contains(previous.address), previous.address.offset > last.committedLength
            {
                // The damaged page is the run's commit page: the next commit names it, and its
                // run checksums to the bytes after it seeded with its stored checksum.
                let seed = try file.storedChecksum(at: previous.address)
                guard
                    commit.runChecksum
                        == (try runChecksum(seed: seed, from: previous.address.end, to: address.offset, in: file))
                else { return nil }
                let next = root(of: commit, at: address, in: file, chain: chain, version: last.formatVersion)
                let (newest, _) = try followRuns(from: next, chain: chain, in: file)
                return DamagedRun(
                    generation: last.generation + 1, offset: firstBad,
                    cutOff: (last.generation + 2)...newest.generation)
            } else {
                return nil  // another chain's commit: stale bytes, not damage
            }
            let (newest, runs) = try followRuns(from: damaged, chain: chain, in: file)
            guard runs > 0 else { return nil }
            return DamagedRun(
                generation: damaged.generation, offset: firstBad, cutOff: (damaged.generation + 1)...newest.generation)
        }
    }

    private static func root(
        of commit: CommitRecord, at address: PageAddress, in file: SnapshotFile,
        chain: UInt32, version: UInt32
    ) -> RootRecord {
        RootRecord(
            generation: commit.generation, snapshotFile: file.number, committedLength: address.end,
            commitPage: address, catalogRoot: commit.catalogRoot, liveBytes: commit.liveBytes,
            timestamp: commit.timestamp, previous: commit.previous, chain: chain, formatVersion: version)
    }

    /// The run checksum of the bytes `[start, end)` of `file`, seeded with `seed`.
    private static func runChecksum(
        seed: UInt32, from start: UInt64, to end: UInt64,
        in file: SnapshotFile
    ) throws(StorageError) -> UInt32 {
        var crc = RunChecksum.seeded(with: seed)
        var position = start
        while position < end {
            let bytes = try file.handle.read(at: position, count: Int(min(end - position, 1 << 20)))
            guard !bytes.isEmpty else { break }
            crc = bytes.withUnsafeBytes { RunChecksum.update(crc, $0) }
            position += UInt64(bytes.count)
        }
        return RunChecksum.finish(crc)
    }
}
