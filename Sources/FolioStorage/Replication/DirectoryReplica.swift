import Synchronization

/// A replica in a directory: another disk, a mounted network or cloud drive. What it holds
/// is an ordinary store (Docs/Format.md §2): open it read-only and it follows the
/// replicator as a reader follows a writer; restore from it (``Store/restore(from:to:at:options:progress:)``)
/// at any generation it holds.
///
/// Its root file is written as a writer writes the store's own (Docs/Format.md §8): a slot
/// in place with one write, alternately, the root file synced before a slot would be 64
/// generations ahead of the one known durable, and after a write that alone is that far
/// ahead. So a replica's reader sees each published root at once, and after a power cut
/// the replica opens at a root at most 64 generations older than the last published, which
/// the replicator ships again.
///
/// While a replicator uses it, it holds the replica's writer lock (`lock`, Docs/Format.md
/// §2): a writer opened on the replica cannot commit over what is shipped, and a second
/// replicator of the same replica fails with `StorageError.lockedByAnotherWriter(path:)`
/// (and retries).
///
/// ```swift
/// let replicator = Replicator(source: storePath, to: DirectoryReplica(path: "/mnt/backup/library"))
/// try replicator.ship()
/// ```
public final class DirectoryReplica: ReplicaDestination {
    /// The replica's directory.
    public let path: String
    public var name: String { path }

    private let layout: StoreLayout
    private let fileSystem: any FileSystem
    private let state = Mutex<OpenFiles>(OpenFiles())

    /// The files this destination has open, and where its root slots stand.
    private struct OpenFiles: @unchecked Sendable {
        // Unchecked: the handles are Sendable; the struct holds only them and plain values,
        // and every access is under the mutex.
        var snapshots: [UInt64: any StorageFile] = [:]
        var written: Set<UInt64> = []
        /// Whether the snapshots directory must be synced before a root names what was
        /// written: a file this object created, or one a killed replicator created, whose
        /// name may not be durable. So the first synchronize of a session always syncs it.
        var directoryUnsynced = true
        var lock: (any FileLock)?
        var root: (any StorageFile)?
        /// The slot known durable, and its generation.
        var anchor = 0
        var anchorGeneration: UInt64 = 0
        /// The generation last written into the other slot since the anchor, if any.
        var lazyGeneration: UInt64?
    }

    /// A replica in the directory at `path`, which need not exist yet.
    public init(path: String, fileSystem: any FileSystem = POSIXFileSystem()) {
        self.layout = StoreLayout(directory: path)
        self.path = layout.directory
        self.fileSystem = fileSystem
    }

    deinit {
        state.withLock { files in Self.closeAll(&files) }
    }

    private static func closeAll(_ files: inout OpenFiles) {
        for handle in files.snapshots.values { handle.close() }
        files.root?.close()
        files.lock?.unlock()
        files = OpenFiles()
    }

    /// Starts a session: whatever this object held open from an earlier one (a handle gone
    /// stale with a remounted drive) is closed, and the replica's lock is taken.
    public func holdings() throws(StorageError) -> ReplicaHoldings? {
        let fs = fileSystem
        state.withLock { files in Self.closeAll(&files) }
        switch fs.itemKind(at: layout.directory) {
        case nil: return nil
        case .file?: throw .destinationNotEmpty(path: layout.directory)
        case .directory?: break
        }
        let names = try fs.contentsOfDirectory(layout.directory)
        if names.isEmpty { return nil }
        guard names.allSatisfy({ StoreLayout.knownNames.contains($0) }) else {
            throw .destinationNotEmpty(path: layout.directory)
        }
        // A replica begun but cut off before its info file was written holds nothing yet;
        // a store's files without one are not a replica's.
        guard names.contains("info") else {
            let snapshots =
                fs.itemKind(at: layout.snapshots) == .directory ? try fs.contentsOfDirectory(layout.snapshots) : []
            if names.contains("root") || !snapshots.isEmpty { throw .destinationNotEmpty(path: layout.directory) }
            return nil
        }
        try takeLock()
        let info = try fs.readAll(at: layout.info)
        let rootFile = fs.itemKind(at: layout.root) == .file ? try fs.readAll(at: layout.root) : []
        return ReplicaHoldings(info: info, rootFile: rootFile, snapshots: try snapshotLengths())
    }

    private func snapshotLengths() throws(StorageError) -> [UInt64: UInt64] {
        let fs = fileSystem
        var snapshots: [UInt64: UInt64] = [:]
        guard fs.itemKind(at: layout.snapshots) == .directory else { return snapshots }
        for name in try fs.contentsOfDirectory(layout.snapshots) {
            guard let number = StoreLayout.snapshotNumber(fromName: name) else { continue }
            let file = try fs.open(layout.snapshot(number), mode: .readOnly)
            defer { file.close() }
            snapshots[number] = try file.size()
        }
        return snapshots
    }

    /// Creates the replica's directory if needed (its parent must exist: a missing parent
    /// is more likely an unmounted drive than a place to create), then its info file.
    public func begin(info: [UInt8]) throws(StorageError) {
        let fs = fileSystem
        if fs.itemKind(at: layout.directory) == nil {
            try fs.createDirectory(layout.directory)
            try fs.syncDirectory(StoragePath.parent(of: layout.directory))
        }
        try takeLock()
        if fs.itemKind(at: layout.snapshots) == nil { try fs.createDirectory(layout.snapshots) }
        try fs.syncDirectory(layout.directory)
        try fs.replaceAtomically(layout.info, with: info, temporaryPath: layout.infoTemporary)
    }

    private func takeLock() throws(StorageError) {
        let fs = fileSystem
        let path = layout.lock
        try state.withLock { files throws(StorageError) in
            if files.lock == nil { files.lock = try fs.lock(path) }
        }
    }

    public func write(_ bytes: [UInt8], toSnapshot number: UInt64, at offset: UInt64) throws(StorageError) {
        let fs = fileSystem
        let path = layout.snapshot(number)
        try state.withLock { files throws(StorageError) in
            let handle: any StorageFile
            if let open = files.snapshots[number] {
                handle = open
            } else {
                if fs.itemKind(at: path) == nil { files.directoryUnsynced = true }
                handle = try fs.open(path, mode: .create)
                files.snapshots[number] = handle
            }
            try handle.write(bytes, at: offset)
            files.written.insert(number)
        }
    }

    public func synchronize() throws(StorageError) {
        let fs = fileSystem
        let snapshots = layout.snapshots
        try state.withLock { files throws(StorageError) in
            for number in files.written.sorted() {
                guard let handle = files.snapshots[number] else {
                    throw .io(
                        operation: "sync", path: StoragePath.join(snapshots, StoreLayout.snapshotName(number)),
                        code: SystemError.badDescriptor)
                }
                try handle.syncData()
            }
            files.written = []
            if files.directoryUnsynced {
                try fs.syncDirectory(snapshots)
                files.directoryUnsynced = false
            }
        }
    }

    public func publish(rootSlot: [UInt8], generation: UInt64) throws(StorageError) {
        precondition(rootSlot.count == RootRecord.slotSize, "a root slot is 128 bytes")
        let fs = fileSystem
        let layout = layout
        try state.withLock { files throws(StorageError) in
            if files.root == nil {
                if fs.itemKind(at: layout.root) == nil {
                    // The first root: the whole file at once, by atomic replace, as a store's
                    // creation writes it; slot 1 stays empty.
                    var bytes = rootSlot
                    bytes += [UInt8](repeating: 0, count: RootRecord.fileSize - rootSlot.count)
                    try fs.replaceAtomically(layout.root, with: bytes, temporaryPath: layout.rootTemporary)
                    files.root = try fs.open(layout.root, mode: .readWrite)
                    files.anchor = 0
                    files.anchorGeneration = generation
                    files.lazyGeneration = nil
                    return
                }
                try openRoot(&files)
            }
            guard let root = files.root else { return }
            // The anchor invariant (RootSlots.swift): only the slot that is not the anchor
            // is written; before a write that would put it 64 generations ahead, the root
            // file is synced and the slot written last becomes the anchor, and so after a
            // write that alone is that far ahead: the anchor never lags more.
            let lag = RootSlots.maximumAnchorLag
            if files.lazyGeneration != nil, generation &- files.anchorGeneration >= lag {
                try Self.syncLazySlot(&files, root: root)
            }
            let slot = 1 - files.anchor
            try root.write(rootSlot, at: UInt64(RootRecord.slotOffset(slot, fileLength: RootRecord.fileSize)))
            files.lazyGeneration = generation
            if generation &- files.anchorGeneration >= lag { try Self.syncLazySlot(&files, root: root) }
        }
    }

    /// Syncs the root file: the slot written last is durable, and becomes the anchor.
    private static func syncLazySlot(_ files: inout OpenFiles, root: any StorageFile) throws(StorageError) {
        guard let lazy = files.lazyGeneration else { return }
        try root.syncData()
        files.anchor = 1 - files.anchor
        files.anchorGeneration = lazy
        files.lazyGeneration = nil
    }

    /// Opens an existing root file for in-place slot writes: synced first, so that whichever
    /// slot the last session left unsynced is durable; the slot with the newer generation
    /// (slot 0 on a tie) is the anchor.
    private func openRoot(_ files: inout OpenFiles) throws(StorageError) {
        let handle = try fileSystem.open(layout.root, mode: .readWrite)
        do throws(StorageError) {
            let bytes = try handle.readAll()
            guard bytes.count == RootRecord.fileSize else {
                throw .corruption(
                    Corruption(
                        file: layout.root, offset: 0,
                        detail: "replica root file is \(bytes.count) bytes, expected \(RootRecord.fileSize)"))
            }
            try handle.syncData()
            // The anchor is the slot the replica opens at (what the replicator resumed
            // from), so the slot written next is the other one.
            let snapshots = try snapshotLengths()
            let usable = ReplicaRoots.usable(bytes, file: layout.root, snapshots: snapshots)
            files.root = handle
            files.anchor = usable?.slot ?? 0
            files.anchorGeneration = usable?.record.generation ?? 0
            files.lazyGeneration = nil
        } catch {
            handle.close()
            throw error
        }
    }

    public func removeSnapshot(_ number: UInt64) throws(StorageError) {
        state.withLock { files in
            files.snapshots.removeValue(forKey: number)?.close()
            files.written.remove(number)
        }
        let path = layout.snapshot(number)
        if fileSystem.itemKind(at: path) != nil { try fileSystem.remove(path) }
    }

    public func makePublishedRootDurable() throws(StorageError) {
        try state.withLock { files throws(StorageError) in
            if let root = files.root { try Self.syncLazySlot(&files, root: root) }
        }
    }

    public func finish() throws(StorageError) {
        try state.withLock { files throws(StorageError) in
            if let root = files.root { try Self.syncLazySlot(&files, root: root) }
            Self.closeAll(&files)
        }
    }
}
