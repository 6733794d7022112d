extension Store {
    /// Opens the store at `path` for writing, creating it if `options.createIfMissing`.
    ///
    /// Takes the store's write lock at once or throws ``StorageError/lockedByAnotherWriter(path:)``
    /// (never waits). Recovery is this and nothing more: bytes past the committed root are
    /// discarded (an interrupted commit), a leftover `root.tmp` is removed. If the current
    /// root slot is damaged, the store opens at the previous one and says so in the log.
    public static func open(at path: String, options: StoreOptions = StoreOptions()) throws(StorageError) -> Store {
        let layout = StoreLayout(directory: path)
        let fs = options.fileSystem
        switch fs.itemKind(at: layout.directory) {
        case .file?:
            throw .notAStore(path: layout.directory, reason: "it is a file, not a directory")
        case nil:
            guard options.createIfMissing else { throw .storeNotFound(path: layout.directory) }
            try createDirectories(layout.directory, fileSystem: fs)
        case .directory?:
            break
        }
        if fs.itemKind(at: layout.root) == nil {
            // Refuse to take over a directory holding other things before even locking it.
            let foreign = try fs.contentsOfDirectory(layout.directory).filter { !StoreLayout.knownNames.contains($0) }
            if !foreign.isEmpty {
                throw .notAStore(path: layout.directory, reason: "it holds other files (\(foreign.prefix(3).joined(separator: ", ")))")
            }
            guard options.createIfMissing else { throw .storeNotFound(path: layout.directory) }
        }

        let (lock, identity) = try WriterRegistry.register(lockPath: layout.lock, fileSystem: fs) { () throws(StorageError) in
            try fs.lock(layout.lock)
        }
        do throws(StorageError) {
            CrashPoint.openAfterLock.reach()
            if fs.itemKind(at: layout.root) == nil {
                // No root: no commit ever completed here, so nothing can be lost by starting over.
                try createStore(layout, fileSystem: fs)
            }
            let cache = PageCache(capacity: options.cacheCapacity)
            let counters = IOCounters()
            let root = try loadRoot(layout, fileSystem: fs, cache: cache, counters: counters, writable: true, log: options.log)
            try recover(root, layout: layout, fileSystem: fs, log: options.log)
            // Make the root we opened at durable before showing it or building on it
            // (Docs/Durability.md §3 step 4). A writer killed between renaming `root.tmp`
            // and syncing the directory leaves a root that is visible but not durable: a
            // power cut after we opened at it would bring back the older root, so the
            // generation our caller saw would go backwards (D4), and retiring the snapshot
            // file the older root names could even leave the store unopenable.
            try fs.syncDirectory(layout.directory)
            let writer = WriterState(lock: lock, identity: identity, durableRecord: root.record)
            // The same counters the root's page source counts into (ioStatistics).
            let store = Store(path: path, readOnly: false, layout: layout, options: options, cache: cache,
                              counters: counters, state: State(current: root, writer: writer))
            try store.retireStaleSnapshots(current: root.record.snapshotFile, openedFromPreviousSlot: root.openedFromPreviousSlot)
            return store
        } catch {
            lock.unlock()
            WriterRegistry.unregister(identity)
            throw error
        }
    }

    /// Opens the store at `path` for reading only. Takes no lock and writes nothing, so it
    /// works beside a writer in another process and on a read-only file system. The view
    /// stays at the generation it opened until ``refresh()``.
    public static func openReadOnly(at path: String, options: StoreOptions = StoreOptions()) throws(StorageError) -> Store {
        let layout = StoreLayout(directory: path)
        let fs = options.fileSystem
        guard let kind = fs.itemKind(at: layout.directory) else { throw .storeNotFound(path: layout.directory) }
        guard kind == .directory else { throw .notAStore(path: layout.directory, reason: "it is a file, not a directory") }
        guard fs.itemKind(at: layout.root) != nil else {
            let names = try fs.contentsOfDirectory(layout.directory)
            if names.contains(where: { !StoreLayout.knownNames.contains($0) }) {
                throw .notAStore(path: layout.directory, reason: "it has no root file")
            }
            throw .storeNotFound(path: layout.directory)
        }
        let cache = PageCache(capacity: options.cacheCapacity)
        let counters = IOCounters()
        let root = try loadRoot(layout, fileSystem: fs, cache: cache, counters: counters, writable: false, log: options.log)
        return Store(path: path, readOnly: true, layout: layout, options: options, cache: cache,
                     counters: counters, state: State(current: root, writer: nil))
    }

    /// Read-only stores: moves to the newest committed generation, if there is a newer one.
    /// Returns true if the generation changed. Views taken before keep their generation.
    @discardableResult
    public func refresh() throws(StorageError) -> Bool {
        guard isReadOnly else { return false }
        // Refreshes are serialised, loading and adopting under one lock (a read-only store
        // writes no root file, so nothing else takes `rootFileLock` here). Two refreshes
        // interleaving (the follower's catch-up and a manual call) could otherwise adopt a
        // root read before the newest one after it, moving the store backwards and making
        // the follower report a spurious `historyUnavailable`.
        return try rootFileLock.withLock { _ throws(StorageError) -> Bool in
            let current = try state.withLock { (state) throws(StorageError) -> CommittedRoot in
                if state.closed { throw .closed(path: path) }
                return state.current
            }
            let newest = try Store.loadRoot(layout, fileSystem: fileSystem, cache: cache, counters: counters, writable: false,
                                            log: options.log, reusing: current.file)
            guard newest.record.generation != current.record.generation
                    || newest.record.snapshotFile != current.record.snapshotFile
            else { return false }
            // Invariant: `current` is what the previous refresh adopted, and this load read the
            // root file after it, so the generation never goes backwards for a reader, unless
            // the writer itself fell back to a previous root (a damaged root slot), which the
            // log reports and the follower signals as `historyUnavailable`.
            state.withLock { $0.current = newest }
            return true
        }
    }

    // MARK: Loading the root

    /// Reads the root file and opens the generation it names: slot 0, or slot 1 if slot 0
    /// is damaged. A reader that finds the named snapshot file gone (a compaction between
    /// reading the root and opening the file) reads the root again.
    static func loadRoot(_ layout: StoreLayout, fileSystem fs: any FileSystem, cache: PageCache, counters: IOCounters,
                         writable: Bool, log: @Sendable (String) -> Void,
                         reusing existing: SnapshotFile? = nil) throws(StorageError) -> CommittedRoot {
        var attempts = 0
        while true {
            attempts += 1
            do throws(StorageError) {
                return try loadRootOnce(layout, fileSystem: fs, cache: cache, counters: counters, writable: writable,
                                        log: log, reusing: existing)
            } catch .io(let operation, let path, let code) where code == SystemError.notFound && attempts < 5
                        && StoragePath.parent(of: path) == layout.snapshots {
                _ = operation
                continue
            }
        }
    }

    private static func loadRootOnce(_ layout: StoreLayout, fileSystem fs: any FileSystem, cache: PageCache,
                                     counters: IOCounters, writable: Bool, log: @Sendable (String) -> Void,
                                     reusing existing: SnapshotFile?) throws(StorageError) -> CommittedRoot {
        let info = try fs.open(layout.info, mode: .readOnly)
        _ = try InfoFile.decode(try info.readAll(), path: layout.info)
        info.close()

        let rootFile = try fs.open(layout.root, mode: .readOnly)
        let bytes = try rootFile.readAll()
        rootFile.close()

        var firstProblem: StorageError?
        for slot in 0..<2 {
            do throws(StorageError) {
                let record = try RootRecord.decodeSlot(bytes, slot: slot, file: layout.root)
                let file: SnapshotFile
                if let existing, existing.number == record.snapshotFile {
                    file = existing
                } else {
                    file = try openSnapshot(record.snapshotFile, layout: layout, fileSystem: fs, writable: writable)
                }
                // The slot carries everything a reader needs (catalog root, committed length), so
                // opening reads no commit page: a damaged commit page costs only its change
                // record, which verify and observers report, not the generation.
                let pages = PageSource(file: file, cache: cache, counters: counters)
                if let firstProblem {
                    log("root slot 0 of \(layout.root) is unusable (\(firstProblem)); opened at the previous root, generation \(record.generation)")
                }
                return CommittedRoot(record: record, pages: pages, openedFromPreviousSlot: slot == 1)
            } catch {
                if case .unsupportedFormatVersion = error { throw error }
                if slot == 0 {
                    // Only damage to slot 0 or what it names justifies the previous root. An
                    // I/O error says nothing about the data: falling back on a transient EIO
                    // or ENOSPC would open a writer at slot 1, and recovery would then
                    // truncate away the acknowledged generation slot 0 names (D1). Report it
                    // instead; opening again can succeed. (A missing snapshot file is a
                    // compaction race: the caller reads the root again.)
                    guard case .corruption = error else { throw error }
                    firstProblem = error
                }
                // Slot 1 failing too: the store cannot be opened; slot 0's problem is reported.
            }
        }
        throw firstProblem ?? .corruption(Corruption(file: layout.root, offset: 0, detail: "no usable root slot"))
    }

    static func openSnapshot(_ number: UInt64, layout: StoreLayout, fileSystem fs: any FileSystem,
                             writable: Bool) throws(StorageError) -> SnapshotFile {
        let path = layout.snapshot(number)
        let handle = try fs.open(path, mode: writable ? .readWrite : .readOnly)
        do throws(StorageError) {
            let header = try SnapshotHeader.decode(try handle.read(at: 0, count: SnapshotHeader.size), file: path)
            guard header.fileNumber == number else {
                throw StorageError.corruption(Corruption(file: path, offset: 0,
                                                         detail: "snapshot header names file \(header.fileNumber)"))
            }
        } catch {
            handle.close()
            throw error
        }
        return SnapshotFile(number: number, path: path, handle: handle)
    }

    /// Writer recovery: discard bytes past the committed length (an interrupted commit's
    /// pages, never referenced by any root) and a leftover temporary root file. This is the
    /// only repair a crash ever needs (Docs/Architecture.md invariant 2).
    private static func recover(_ root: CommittedRoot, layout: StoreLayout, fileSystem fs: any FileSystem,
                                log: @Sendable (String) -> Void) throws(StorageError) {
        let size = try root.file.handle.size()
        if size > root.record.committedLength {
            log("discarding \(size - root.record.committedLength) bytes past the last commit of \(root.file.path) (an interrupted commit)")
            try root.file.handle.truncate(to: root.record.committedLength)
        } else if size < root.record.committedLength {
            throw .corruption(Corruption(file: root.file.path, offset: size,
                                         detail: "file ends at \(size) bytes but the root says \(root.record.committedLength) are committed"))
        }
        for leftover in [layout.rootTemporary, layout.infoTemporary] where fs.itemKind(at: leftover) != nil {
            try fs.remove(leftover)
        }
    }

    /// Creates `path` and any missing parents, syncing each parent so the new entry is durable.
    static func createDirectories(_ path: String, fileSystem fs: any FileSystem) throws(StorageError) {
        var missing: [String] = []
        var current = path
        while fs.itemKind(at: current) == nil && current != "/" && current != "." && !current.isEmpty {
            missing.append(current)
            current = StoragePath.parent(of: current)
        }
        for directory in missing.reversed() {
            try fs.createDirectory(directory)
            try fs.syncDirectory(StoragePath.parent(of: directory))
        }
    }
}
