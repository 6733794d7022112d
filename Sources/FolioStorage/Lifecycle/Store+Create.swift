// Creating a store on disk (Docs/Durability.md §2): directory, lock, first snapshot file,
// info file and root file, each durable before the next.
extension Store {
    /// Creates a store in `layout.directory`, whose write lock the caller holds.
    ///
    /// Order (each step durable before the next; Docs/Durability.md §2): the snapshots
    /// directory; snapshot file 1 with its header and the creation commit (generation 1, no
    /// trees), fsynced, and its directory entry fsynced; the info file (atomic replace); the
    /// root file (atomic replace: temp, fsync, rename, directory fsync). The root's rename is
    /// the moment the store exists; a crash before it leaves a directory that the next
    /// writer simply creates again.
    static func createStore(_ layout: StoreLayout, fileSystem fs: any FileSystem) throws(StorageError) {
        CrashPoint.createAfterLock.reach()
        try fs.createDirectory(layout.snapshots)
        try fs.syncDirectory(layout.directory)
        // Leftovers of an earlier interrupted creation: no root ever referenced them. Anything
        // more than a first snapshot file holding only its creation commit means a real store
        // lost its root file: refuse, rather than destroy its data by starting over.
        for name in try fs.contentsOfDirectory(layout.snapshots) {
            let path = StoragePath.join(layout.snapshots, name)
            let size = try fs.open(path, mode: .readOnly).size()
            guard StoreLayout.snapshotNumber(fromName: name) == 1, size <= UInt64(SnapshotHeader.size + 512) else {
                throw .corruption(
                    Corruption(
                        file: layout.root, offset: 0,
                        detail:
                            "the root file is missing but \(path) holds committed data; refusing to create a new store over it"
                    ))
            }
        }
        for name in try fs.contentsOfDirectory(layout.snapshots) {
            try fs.remove(StoragePath.join(layout.snapshots, name))
        }
        for leftover in [layout.rootTemporary, layout.infoTemporary, layout.info] where fs.itemKind(at: leftover) != nil
        {
            try fs.remove(leftover)
        }

        let now = Clock.microsecondsSince1970()
        let fileNumber: UInt64 = 1
        let generation: UInt64 = 1
        var writer = ByteWriter(capacity: 256)
        writer.append(
            bytes: SnapshotHeader(fileNumber: fileNumber, createdGeneration: generation, timestamp: now).encoded())
        let commit = CommitRecord(
            generation: generation, timestamp: now, kind: .creation, catalogRoot: .none,
            liveBytes: 0, previous: nil, changes: ChangeRecord())
        let (commitPage, liveBytes, chain) = CommitRecord.encode(
            commit, liveBytesBeforePage: 0, into: &writer,
            at: UInt64(SnapshotHeader.size))
        let snapshotPath = layout.snapshot(fileNumber)
        let file = try fs.open(snapshotPath, mode: .truncate)
        defer { file.close() }
        try file.write(writer.bytes, at: 0)
        try file.sync()
        try fs.syncDirectory(layout.snapshots)
        CrashPoint.createAfterSnapshot.reach()

        try fs.replaceAtomically(layout.info, with: InfoFile.now().encoded(), temporaryPath: layout.infoTemporary)
        CrashPoint.createAfterInfo.reach()

        let root = RootRecord(
            generation: generation, snapshotFile: fileNumber, committedLength: commitPage.end,
            commitPage: commitPage, catalogRoot: .none, liveBytes: liveBytes, timestamp: now, previous: nil,
            chain: chain)
        // The only rename of a root file (besides a version 1 upgrade): the moment the store exists.
        try fs.replaceAtomically(
            layout.root, with: RootRecord.encodeFile(current: root),
            temporaryPath: layout.rootTemporary,
            crashPoints: (CrashPoint.createBeforeRootRename, CrashPoint.createAfterRootRename))
    }
}
