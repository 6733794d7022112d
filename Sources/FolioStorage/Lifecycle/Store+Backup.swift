/// What a backup or restore wrote.
public struct BackupReport: Sendable, Equatable {
    /// The generation copied (the copy has the same generation and contents).
    public var generation: UInt64
    /// Length of the copy's snapshot file.
    public var bytes: UInt64
    /// Pages written.
    public var pagesCopied: Int
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
    /// - Throws: `StorageError.generationUnavailable(requested:oldest:newest:)` if the store
    ///   does not hold `generation`.
    @discardableResult
    public func backup(
        to destination: String, at generation: UInt64? = nil, progress: ((CompactionProgress) -> Void)? = nil
    ) throws(StorageError) -> BackupReport {
        let root: CommittedRoot
        if let generation { root = try read(at: generation).root } else { root = try read().root }
        let fs = fileSystem
        let layout = StoreLayout(directory: destination)
        switch fs.itemKind(at: layout.directory) {
        case nil:
            try Store.createDirectories(layout.directory, fileSystem: fs)
        case .directory?:
            guard try fs.contentsOfDirectory(layout.directory).isEmpty else {
                throw .destinationNotEmpty(path: layout.directory)
            }
        case .file?:
            throw .destinationNotEmpty(path: layout.directory)
        }
        try fs.createDirectory(layout.snapshots)
        try fs.syncDirectory(layout.directory)
        let file = SnapshotFile(
            number: 1, path: layout.snapshot(1), handle: try fs.open(layout.snapshot(1), mode: .truncate))
        let (record, pages) = try LiveCopy.write(
            root, into: file, generation: root.record.generation,
            timestamp: root.record.timestamp, previous: nil,
            crashPoint: .backupMidCopy, progress: progress)
        try fs.syncDirectory(layout.snapshots)
        try fs.replaceAtomically(layout.info, with: InfoFile.now().encoded(), temporaryPath: layout.infoTemporary)
        try fs.replaceAtomically(
            layout.root, with: RootRecord.encodeFile(current: record),
            temporaryPath: layout.rootTemporary)
        return BackupReport(generation: record.generation, bytes: record.committedLength, pagesCopied: pages)
    }

    /// Restores the store at `backup` (one written by ``backup(to:at:progress:)``, or any
    /// store) into `destination`, which must not exist or be an empty directory: its newest
    /// generation, or `generation` if given (any the store still holds, Docs/Format.md §14).
    /// Every page is read and its checksum checked on the way, so a damaged backup fails
    /// instead of restoring damage.
    @discardableResult
    public static func restore(
        from backup: String, to destination: String, at generation: UInt64? = nil,
        options: StoreOptions = StoreOptions(), progress: ((CompactionProgress) -> Void)? = nil
    ) throws(StorageError) -> BackupReport {
        let source = try Store.openReadOnly(at: backup, options: options)
        defer { source.close() }
        return try source.backup(to: destination, at: generation, progress: progress)
    }
}
