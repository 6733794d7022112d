// Reading commits along the chain of commit pages: the replay's, and reads of past generations.

/// Reads commits along the chain of commit pages, keeping open the snapshot files it opened
/// (an open file stays readable even if retention removes it meanwhile).
struct HistoryReader {
    let store: Store
    let newest: CommittedRoot
    let generation: UInt64
    var files: [UInt64: SnapshotFile]
    /// The commit pages along the chain, read in blocks.
    var window = CommitPageWindow()
    /// Commits decoded in the first pass, kept for the second: the oldest ones the first pass
    /// reached, which are the first the second pass needs, within `rememberedBytes` of
    /// commit pages. Only while `remembering`; each is let go once the second pass took it.
    private var remembered: [CommitLocation: CommitRecord] = [:]
    /// The kept locations, newest first from `firstKept` on, and their pages' bytes in all.
    private var rememberedOrder: [(location: CommitLocation, bytes: Int)] = []
    private var firstKept = 0
    private var keptBytes = 0
    var remembering = false
    /// The bound on the kept commits' pages, in bytes (``ReplayBounds/rememberedBytes``).
    var rememberedBytes = 0

    /// `held`: a file the caller has open, read through that descriptor rather than opened
    /// again by name. A file number names one file for the store's life (a replaced file's
    /// number is never used again: a new one is above every file on disk), so the open
    /// file is the one the chain means.
    init(store: Store, newest: CommittedRoot, generation: UInt64, held: SnapshotFile?) {
        self.store = store
        self.newest = newest
        self.generation = generation
        files = [newest.file.number: newest.file]
        if let held, files[held.number] == nil { files[held.number] = held }
    }

    mutating func file(_ number: UInt64) throws(StorageError) -> SnapshotFile {
        if let open = files[number] { return open }
        do throws(StorageError) {
            let opened = try Store.openSnapshot(
                number, layout: store.layout, fileSystem: store.fileSystem, writable: false)
            files[number] = opened
            return opened
        } catch .io(let operation, let path, let code) where code != SystemError.notFound {
            // Not a file retention removed: a failure to report (descriptors exhausted, no
            // permission, the disk), which must not read as history that is gone.
            throw .io(operation: operation, path: path, code: code)
        } catch {
            throw .historyUnavailable(from: generation)
        }
    }

    /// The commit page at `location`, read and decoded afresh (never from the first pass's
    /// memory), and its chain value (the page's stored checksum, Docs/Format.md §7).
    mutating func commitPage(at location: CommitLocation) throws(StorageError) -> (commit: CommitRecord, chain: UInt32)
    {
        let file = try file(location.fileNumber)
        let bytes = try window.bytes(of: location.address, in: file, counters: store.counters)
        let commit = try CommitRecord.decode(bytes, address: location.address, file: file.path)
        return (commit, bytes.littleEndianUInt32(at: 0))
    }

    /// The store as the commit at `location` left it, and that commit.
    mutating func root(at location: CommitLocation) throws(StorageError) -> (root: CommittedRoot, commit: CommitRecord)
    {
        if location == newest.record.location {
            return (newest, try newest.pages.commit(at: newest.record.commitPage))
        }
        let pages = PageSource(file: try file(location.fileNumber), cache: store.cache, counters: store.counters)
        let commit: CommitRecord
        if let known = remembered.removeValue(forKey: location) {
            commit = known
        } else {
            commit = try CommitRecord.decode(
                try window.bytes(of: location.address, in: pages.file, counters: store.counters),
                address: location.address, file: pages.file.path)
            remember(commit, at: location)
        }
        let record = RootRecord(
            generation: commit.generation, snapshotFile: location.fileNumber,
            committedLength: location.address.end, commitPage: location.address,
            catalogRoot: commit.catalogRoot, liveBytes: commit.liveBytes,
            timestamp: commit.timestamp, previous: commit.previous)
        return (CommittedRoot(record: record, pages: pages), commit)
    }

    /// Keeps `commit` for the second pass if the first is running, dropping the newest kept
    /// ones past `rememberedBytes`: the second pass starts from the oldest.
    private mutating func remember(_ commit: CommitRecord, at location: CommitLocation) {
        guard remembering else { return }
        remembered[location] = commit
        rememberedOrder.append((location, Int(location.address.length)))
        keptBytes += Int(location.address.length)
        while keptBytes > rememberedBytes, firstKept < rememberedOrder.count {
            let dropped = rememberedOrder[firstKept]
            remembered[dropped.location] = nil
            keptBytes -= dropped.bytes
            firstKept += 1
        }
        if firstKept > 1024 && firstKept * 2 > rememberedOrder.count {
            rememberedOrder.removeFirst(firstKept)
            firstKept = 0
        }
    }

    /// Ends the first pass: what is kept stays, nothing more is.
    mutating func stopRemembering() {
        remembering = false
        rememberedOrder = []
        firstKept = 0
    }
}
