/// What a backup or restore wrote, what it was asked for, and, when a restore wrote an older
/// generation than the newest because the newer ones were damaged, why.
public struct BackupReport: Sendable, Equatable {
    /// The generation copied (the copy has the same generation and contents).
    public var generation: UInt64
    /// Length of the copy's snapshot file.
    public var bytes: UInt64
    /// Pages written.
    public var pagesCopied: Int
    /// The generation asked for; nil when the newest was.
    public var requested: UInt64?
    /// The newest generation the source named when the copy began (its root slots; for a
    /// source whose newest generation could not even be opened, the generation those slots
    /// name).
    public var newest: UInt64
    /// The damage that made a restore step back from the generation it tried, in the order
    /// it was met, each naming the file and offset: empty when the generation asked for (or
    /// the newest) was copied. When not empty, ``generation`` is the newest generation that
    /// lies wholly before the damage.
    public var damage: [Corruption]
    /// Commit runs whose run checksum was compared with their bytes before copying.
    public var runsChecked: Int
    /// Bytes of the source's snapshot files read to check the runs.
    public var bytesChecked: UInt64

    /// Whether an older generation than the one asked for (or the newest) was copied,
    /// because of ``damage``.
    public var fellBack: Bool { !damage.isEmpty }

    init(
        generation: UInt64, bytes: UInt64, pagesCopied: Int, requested: UInt64? = nil, newest: UInt64,
        damage: [Corruption] = [], runsChecked: Int = 0, bytesChecked: UInt64 = 0
    ) {
        self.generation = generation
        self.bytes = bytes
        self.pagesCopied = pagesCopied
        self.requested = requested
        self.newest = newest
        self.damage = damage
        self.runsChecked = runsChecked
        self.bytesChecked = bytesChecked
    }
}

extension Store {
    /// Writes a consistent copy of the newest committed generation (or of past `generation`,
    /// one ``read(at:)`` reads: a point-in-time restore) to `destination` (a path that does
    /// not exist, or an empty directory), as a new store holding only live pages.
    ///
    /// Online: it pins one generation and copies from it while writers (in this or other
    /// processes) go on committing and compacting; the pinned pages never change and stay
    /// readable. Works on read-only stores. It streams (bounded memory) and reports progress.
    /// The copy is complete only when this returns: its root file is written last. The copy
    /// has the generation and contents of the one copied, and no history before it.
    ///
    /// Before copying, it reads the generation's snapshot file once up to the generation's
    /// commit page and checks every commit run's checksum there against the pages the run
    /// holds (Docs/Format.md §7); while copying, every page copied against its own checksum. Damage fails the backup (it never steps back to an
    /// older generation: that is ``restore(from:to:at:options:progress:)``'s choice) and
    /// leaves nothing of the copy behind.
    ///
    /// - Throws: `StorageError.generationUnavailable(requested:oldest:newest:)` if the store
    ///   does not hold `generation`; `StorageError.corruption` naming the file and offset of
    ///   damage in what the copy would hold.
    @discardableResult
    public func backup(
        to destination: String, at generation: UInt64? = nil, progress: ((CompactionProgress) -> Void)? = nil
    ) throws(StorageError) -> BackupReport {
        try checkedCopy(to: destination, at: generation, stepsBack: false, progress: progress)
    }

    /// Restores the store at `backup` (one written by ``backup(to:at:progress:)``, a
    /// replica, or any store) into `destination`, which must not exist or be an empty
    /// directory: its newest intact generation, or `generation` if given (any the store
    /// still holds, Docs/Format.md §14).
    ///
    /// Nothing damaged is restored. Before copying, the generation's snapshot file is read
    /// once up to its commit page and every commit run's checksum is checked against the
    /// pages the run holds (Docs/Format.md §7; a page replaced by another that passes its
    /// own checksum, a torn copy, fails it); while copying, every page copied against its
    /// own checksum. Damage inside a page the restored generation does not use cannot change
    /// it and is not a reason to step back. Damage at offset `x` of a file cannot touch a
    /// generation whose commit page ends at or before `x` there, so:
    ///
    /// - with no `generation`, damage (a page or commit page that fails its checksum, a run
    ///   that does not match its run checksum, a file cut short) makes the restore step back
    ///   to the newest generation that lies wholly before it, check that one, and copy it;
    ///   the report names the generation restored and, in ``BackupReport/damage``, why. A
    ///   source whose newest root slot names a file cut short (which the store will not even
    ///   open) restores the newest generation the file still holds. A run that does not
    ///   match taints every generation from it on, since its checksum cannot say which page
    ///   differs. The restore does not step back into an older snapshot file: damage before
    ///   the end of the first commit of the file (a compaction's copy) fails it.
    /// - with `generation`, damage in what that generation needs fails the restore with
    ///   `StorageError.corruption` naming the file and offset.
    ///
    /// On failure, the files the restore wrote are removed, and `destination` itself if the
    /// restore created it: a destination never holds a store that opens to wrong data.
    @discardableResult
    public static func restore(
        from backup: String, to destination: String, at generation: UInt64? = nil,
        options: StoreOptions = StoreOptions(), progress: ((CompactionProgress) -> Void)? = nil
    ) throws(StorageError) -> BackupReport {
        let source: Store
        var unopened: (damage: Corruption, newest: UInt64)?
        do throws(StorageError) {
            source = try Store.openReadOnly(at: backup, options: options)
        } catch .corruption(let damage) {
            // The newest root names damage the open refuses (a file cut short): open at the
            // newest generation its file still holds intact, and say why.
            guard let salvaged = try openSalvaging(at: backup, options: options) else { throw .corruption(damage) }
            source = salvaged.store
            unopened = (damage, salvaged.named)
            if let generation, generation > source.generation {
                source.close()
                throw .corruption(damage)
            }
        }
        defer { source.close() }
        var report = try source.checkedCopy(to: destination, at: generation, stepsBack: true, progress: progress)
        if let unopened, generation == nil {
            report.damage.insert(unopened.damage, at: 0)
            report.newest = unopened.newest
        }
        return report
    }

    /// Copies `generation` (nil: the newest) to `destination` after checking its runs and,
    /// with `stepsBack` and no `generation`, steps back to older generations of the same
    /// file past damage, as ``restore(from:to:at:options:progress:)`` says.
    private func checkedCopy(
        to destination: String, at generation: UInt64?, stepsBack: Bool,
        progress: ((CompactionProgress) -> Void)?
    ) throws(StorageError) -> BackupReport {
        let newest = try read().root
        var candidate =
            try generation.map { (generation) throws(StorageError) in try read(at: generation).root } ?? newest
        let fallsBack = stepsBack && generation == nil
        var report = BackupReport(
            generation: candidate.record.generation, bytes: 0, pagesCopied: 0, requested: generation,
            newest: newest.record.generation)
        let target = try BackupDestination.prepare(destination, fileSystem: fileSystem)
        do throws(StorageError) {
            var end = candidate.record.committedLength
            var exact = true
            while true {
                let check = try RunCheck.walk(
                    candidate.file, to: end, exact: exact, formatVersion: candidate.record.formatVersion)
                report.runsChecked += check.runsChecked
                report.bytesChecked += check.bytesRead
                if let damage = check.damage {
                    guard fallsBack, let intact = check.intact else { throw StorageError.corruption(damage) }
                    report.damage.append(damage)
                    candidate = CommittedRoot(
                        record: intact, pages: PageSource(file: candidate.file, cache: cache, counters: counters))
                } else if !exact {
                    guard let intact = check.intact else { throw StorageError.corruption(report.damage.last!) }
                    candidate = CommittedRoot(
                        record: intact, pages: PageSource(file: candidate.file, cache: cache, counters: counters))
                }
                do throws(StorageError) {
                    let (record, pages) = try target.write(candidate, progress: progress)
                    report.generation = record.generation
                    report.bytes = record.committedLength
                    report.pagesCopied = pages
                    return report
                } catch .corruption(let damage) where damage.file == candidate.file.path && fallsBack {
                    // A page that fails its checksum lies where no run checksum covers it (a
                    // compaction's copy): the newest generation wholly before it is intact.
                    try target.clear()
                    report.damage.append(damage)
                    (end, exact) = (damage.offset, false)
                }
            }
        } catch {
            target.abandon()
            throw error
        }
    }

    /// A read-only store at the newest generation whose runs are intact in the file the
    /// newest usable root slot names, for a source the ordinary open refuses; nil if no slot
    /// names a file with an intact commit. Also returns the generation that slot names.
    private static func openSalvaging(
        at path: String, options: StoreOptions
    ) throws(StorageError) -> (store: Store, named: UInt64)? {
        let layout = StoreLayout(directory: path)
        let fs = options.fileSystem
        let rootFile = try fs.open(layout.root, mode: .readOnly)
        let bytes = try rootFile.readAll()
        rootFile.close()
        var records: [RootRecord] = []
        for slot in 0..<2 where !RootRecord.slotIsEmpty(bytes, slot: slot) {
            if let record = try? RootRecord.decodeSlot(bytes, slot: slot, file: layout.root) { records.append(record) }
        }
        let version = records.map(\.formatVersion).max() ?? StorageFormat.createdVersion
        let cache = PageCache(capacity: options.cacheCapacity)
        let counters = IOCounters()
        for record in records.sorted(by: { $0.generation > $1.generation }) {
            guard let file = try? openSnapshot(record.snapshotFile, layout: layout, fileSystem: fs, writable: false)
            else { continue }
            let check = try RunCheck.walk(file, to: record.committedLength, exact: false, formatVersion: version)
            guard let intact = check.intact else { continue }
            let root = CommittedRoot(record: intact, pages: PageSource(file: file, cache: cache, counters: counters))
            let store = Store(
                path: path, readOnly: true, layout: layout, options: options, cache: cache, counters: counters,
                state: State(current: root, writer: nil))
            return (store, record.generation)
        }
        return nil
    }
}

/// The store a backup or restore writes: prepared once, written (again after a damaged
/// attempt), and removed if the copy fails.
private struct BackupDestination {
    let layout: StoreLayout
    let fileSystem: any FileSystem
    /// The directories this copy created, outermost first: removed if it fails.
    let created: [String]

    /// Checks that `path` does not exist or is an empty directory, and creates it and its
    /// `snapshots` directory.
    static func prepare(_ path: String, fileSystem fs: any FileSystem) throws(StorageError) -> BackupDestination {
        let layout = StoreLayout(directory: path)
        var created: [String] = []
        switch fs.itemKind(at: layout.directory) {
        case nil:
            var missing = layout.directory
            while fs.itemKind(at: missing) == nil && missing != "/" && missing != "." && !missing.isEmpty {
                created.insert(missing, at: 0)
                missing = StoragePath.parent(of: missing)
            }
            try Store.createDirectories(layout.directory, fileSystem: fs)
        case .directory?:
            guard try fs.contentsOfDirectory(layout.directory).isEmpty else {
                throw .destinationNotEmpty(path: layout.directory)
            }
        case .file?:
            throw .destinationNotEmpty(path: layout.directory)
        }
        try fs.createDirectory(layout.snapshots)
        created.append(layout.snapshots)
        try fs.syncDirectory(layout.directory)
        return BackupDestination(layout: layout, fileSystem: fs, created: created)
    }

    /// Writes `root`'s live pages as the store's only file, then its info and root files.
    func write(
        _ root: CommittedRoot, progress: ((CompactionProgress) -> Void)?
    ) throws(StorageError) -> (RootRecord, Int) {
        let fs = fileSystem
        let file = SnapshotFile(
            number: 1, path: layout.snapshot(1), handle: try fs.open(layout.snapshot(1), mode: .truncate))
        let (record, pages, _) = try LiveCopy.write(
            root, into: file, generation: root.record.generation,
            timestamp: root.record.timestamp, previous: nil,
            crashPoint: .backupMidCopy, progress: progress)
        try fs.syncDirectory(layout.snapshots)
        try fs.replaceAtomically(layout.info, with: InfoFile.now().encoded(), temporaryPath: layout.infoTemporary)
        try fs.replaceAtomically(
            layout.root, with: RootRecord.encodeFile(current: record),
            temporaryPath: layout.rootTemporary)
        return (record, pages)
    }

    /// Removes the files a write may have left, root file first, so that what is left never
    /// opens as a store.
    func clear() throws(StorageError) {
        for path in [layout.root, layout.rootTemporary, layout.info, layout.infoTemporary, layout.snapshot(1)]
        where fileSystem.itemKind(at: path) == .file {
            try fileSystem.remove(path)
        }
    }

    /// Removes what the copy wrote and the directories it created, as far as it can (a
    /// failure to remove is not reported: the copy's own failure is).
    func abandon() {
        try? clear()
        for directory in created.reversed() { fileSystem.removeEmptyDirectory(directory) }
        if let first = created.first { try? fileSystem.syncDirectory(StoragePath.parent(of: first)) }
    }
}

extension FileSystem {
    /// Removes the directory at `path` if it is empty, where the file system can (POSIX and
    /// in-memory); does nothing otherwise. For undoing a copy's directories, best effort.
    fileprivate func removeEmptyDirectory(_ path: String) {
        if let posix = self as? POSIXFileSystem {
            posix.removeEmptyDirectory(path)
        } else if let memory = self as? MemoryFileSystem {
            memory.removeEmptyDirectory(path)
        }
    }
}
