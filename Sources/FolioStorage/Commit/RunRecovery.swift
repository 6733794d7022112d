/// Recovery's one job in format versions 2 and 3 (Docs/Format.md §15): from the root a slot
/// names, follow complete runs forward.
///
/// A slot is written after its run is synced but is itself synced only now and then
/// (``RootSlots``), so after a power cut the surviving slot can lag the durable runs. Each
/// run after it is found by walking page headers from the committed end; it counts only
/// if its commit page validates, comes next in generation, names the root before it as
/// `previous`, carries the checksum of the run's bytes seeded with the previous commit
/// page's checksum, and records no tree wholesale unless the store is version 3. Zeros
/// (preallocation), a torn page, an abandoned run or a stale run from an earlier use of
/// the tail all fail one of these, and the walk stops there.
///
/// The walk reads only bytes of the slot's file from the slot's committed length up to the
/// file's length when it starts (Docs/Format.md §7, "What following runs reads"), and looks
/// only at kinds, lengths, the first commit page and the run checksum: never at the other
/// pages' generations, so that every reader of the same bytes reaches the same generation.
enum RunRecovery {
    /// The newest root reachable from `root` by complete runs, and how many runs that is.
    /// I/O errors are thrown, never taken for the end of the runs: stopping early would
    /// let the next commit write over an acknowledged one. `size` is the file's length, if
    /// the caller has just read it.
    static func followRuns(
        from root: RootRecord, chain: UInt32,
        in file: SnapshotFile, size knownSize: UInt64? = nil
    ) throws(StorageError) -> (root: RootRecord, runs: Int) {
        let size: UInt64
        if let knownSize { size = knownSize } else { size = try file.handle.size() }
        var current = root
        current.chain = chain
        var runs = 0
        while let next = try run(after: current, in: file, size: size) {
            current = next
            runs += 1
        }
        return (current, runs)
    }

    /// Whether a page may begin at `offset` (a header of a known kind and a plausible
    /// length): false for zeros, the end of the file, or a header a rolled-back spill
    /// cleared. One read of a header, and no `fstat`: what a writer's turn asks first, so
    /// that a store nobody else wrote costs no more (``run(after:in:size:)`` needs the size).
    static func mayBeginRun(at offset: UInt64, in file: SnapshotFile) throws(StorageError) -> Bool {
        let header = try file.handle.read(at: offset, count: PageHeader.size)
        guard header.count == PageHeader.size, PageKind(rawValue: header[4]) != nil else { return false }
        return UInt64(header.littleEndianUInt32(at: 8)) >= UInt64(PageHeader.size)
    }

    /// The root of the complete run that starts at `root`'s committed end, if there is one.
    static func run(after root: RootRecord, in file: SnapshotFile, size: UInt64) throws(StorageError) -> RootRecord? {
        var position = root.committedLength
        var crc = RunChecksum.seeded(with: root.chain)
        while true {
            guard position <= size, size - position >= UInt64(PageHeader.size) else { return nil }
            let header = try file.handle.read(at: position, count: PageHeader.size)
            guard header.count == PageHeader.size else { return nil }
            let length = UInt64(header.littleEndianUInt32(at: 8))
            guard let kind = PageKind(rawValue: header[4]), length >= UInt64(PageHeader.size),
                length <= size - position
            else { return nil }
            let page = try file.handle.read(at: position, count: Int(length))
            guard page.count == Int(length) else { return nil }
            if kind == .commit {
                let address = PageAddress(offset: position, length: UInt32(length))
                guard let commit = try? CommitRecord.decode(page, address: address, file: file.path),
                    commit.kind == .transaction, commit.generation == root.generation &+ 1,
                    commit.previous == root.location, commit.runChecksum == RunChecksum.finish(crc),
                    fitsVersion(commit, of: root)
                else { return nil }
                return RootRecord(
                    generation: commit.generation, snapshotFile: root.snapshotFile,
                    committedLength: address.end, commitPage: address, catalogRoot: commit.catalogRoot,
                    liveBytes: commit.liveBytes, timestamp: commit.timestamp, previous: root.location,
                    chain: page.littleEndianUInt32(at: 0), formatVersion: root.formatVersion)
            }
            crc = page.withUnsafeBytes { RunChecksum.update(crc, $0) }
            position += length
        }
    }

    /// True unless `commit` records a tree wholesale in a store whose slots say version 2
    /// (Docs/Format.md §18.2). Such a run is one whose commit never had its version 3 slot
    /// made durable, so it was never acknowledged; a version 2 reader cannot decode it, and
    /// refusing it here means both versions' recoveries reach the same generation.
    static func fitsVersion(_ commit: CommitRecord, of root: RootRecord) -> Bool {
        StorageFormat.version(after: root.formatVersion, recording: commit.changes) == root.formatVersion
    }
}
