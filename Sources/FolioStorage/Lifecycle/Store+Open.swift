// Opening a store: for writing (lock, recovery that follows complete runs, Durability.md §3)
// and for reading (slots only, no lock).
extension Store {
    /// Opens the store at `path` for writing, creating it if `options.createIfMissing`.
    ///
    /// Takes the store's writer lock for the open's recovery and lets it go before
    /// returning: writers in other processes may open and write too, each taking the lock
    /// for its turns of writing (``beginWrite()``). While another process holds it, this
    /// waits up to `options.busyTimeout` (default zero: at once), blocking the calling
    /// thread, then throws `StorageError.lockedByAnotherWriter(path:)`. A second writer of
    /// the store in this process is refused at once
    /// (`StorageError.alreadyOpenInThisProcess(path:)`). Recovery is this and nothing more (Docs/Durability.md §3): from the
    /// newest usable root slot, complete runs written after it (commits whose slot write a
    /// crash prevented) are followed and adopted; bytes past the last complete run are left
    /// for the next commit to overwrite, nothing is truncated; a leftover `root.tmp` is
    /// removed. The other root slot is used only if the newest one, or what it names, is
    /// damaged, and the log says so.
    ///
    /// A store this process may read but not write (permissions, a read-only volume) throws
    /// `StorageError.notWritable(path:cause:)`, which says to open it read-only instead.
    public static func open(at path: String, options: StoreOptions = StoreOptions()) throws(StorageError) -> Store {
        do throws(StorageError) {
            return try openForWriting(at: path, options: options)
        } catch .io(let operation, let file, let code)
            where code == SystemError.accessDenied || code == SystemError.readOnlyFileSystem
        {
            throw .notWritable(
                path: path, cause: StorageError.io(operation: operation, path: file, code: code).description)
        }
    }

    private static func openForWriting(at path: String, options: StoreOptions) throws(StorageError) -> Store {
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
                throw .notAStore(
                    path: layout.directory,
                    reason: "it holds other files (\(foreign.prefix(3).joined(separator: ", ")))")
            }
            guard options.createIfMissing else { throw .storeNotFound(path: layout.directory) }
        }

        let (lock, identity) = try takeWriterLock(layout, options: options)
        do throws(StorageError) {
            CrashPoint.openAfterLock.reach()
            if fs.itemKind(at: layout.root) == nil {
                // No root: no commit ever completed here, so nothing can be lost by starting over.
                try createStore(layout, fileSystem: fs)
            }
            let cache = PageCache(capacity: options.cacheCapacity)
            let counters = IOCounters()
            let opened = try loadRoot(
                layout, fileSystem: fs, cache: cache, counters: counters, writable: true, log: options.log)
            var slots = try RootSlots(layout: layout, fileSystem: fs, opened: opened.record)
            let root: CommittedRoot
            do throws(StorageError) {
                // Make the root we opened at durable before showing it or building on it, and
                // before recovery writes a slot other processes can see (Docs/Durability.md
                // §3): the root file may have been renamed into place by a writer killed
                // before its directory sync (creation, a version 1 upgrade); a power cut
                // would then bring back an older one, and the generation our caller (or a
                // reader) saw would go backwards (D4).
                try fs.syncDirectory(layout.directory)
                root = try recover(opened, slots: &slots, layout: layout, fileSystem: fs, log: options.log)
            } catch {
                slots.abandon()
                throw error
            }
            let writer = WriterState(holdsLock: true, durableRecord: root.record)
            // The same counters the root's page source counts into (ioStatistics).
            let store = Store(
                path: path, readOnly: false, layout: layout, options: options, cache: cache,
                counters: counters, state: State(current: root, writer: writer), slots: slots,
                writerLock: (lock, identity))
            // Still holding the lock: no other writer is compacting into a file this removes.
            try store.retireStaleSnapshots(
                current: root.record.snapshotFile, namedAtOpen: slots.namedAtOpen,
                openedFromPreviousSlot: root.openedFromPreviousSlot)
            store.releaseLockIfIdle()
            return store
        } catch {
            lock.close()
            WriterRegistry.unregister(identity)
            throw error
        }
    }

    /// The store's writer lock, taken within `options.busyTimeout`, and its identity
    /// registered for this process (a second writer of the same store in this process is
    /// refused at once, not after the timeout).
    static func takeWriterLock(
        _ layout: StoreLayout, options: StoreOptions
    ) throws(StorageError) -> (WriterLock, FileIdentity) {
        let lock = try WriterLock(path: layout.lock, fileSystem: options.fileSystem)
        let identity: FileIdentity
        do throws(StorageError) {
            identity = try WriterRegistry.reserve(lockPath: layout.lock, fileSystem: options.fileSystem)
        } catch {
            lock.close()
            throw error
        }
        do throws(StorageError) {
            try lock.acquire(waitingUpTo: options.busyTimeout)
        } catch {
            WriterRegistry.unregister(identity)
            lock.close()
            throw error
        }
        return (lock, identity)
    }

    /// Opens the store at `path` for reading only. Takes no lock and writes nothing, so it
    /// works beside a writer in another process and on a read-only file system. The view
    /// stays at the generation it opened until ``refresh()``.
    public static func openReadOnly(
        at path: String, options: StoreOptions = StoreOptions()
    ) throws(StorageError) -> Store {
        let layout = StoreLayout(directory: path)
        let fs = options.fileSystem
        guard let kind = fs.itemKind(at: layout.directory) else { throw .storeNotFound(path: layout.directory) }
        guard kind == .directory else {
            throw .notAStore(path: layout.directory, reason: "it is a file, not a directory")
        }
        guard fs.itemKind(at: layout.root) != nil else {
            let names = try fs.contentsOfDirectory(layout.directory)
            if names.contains(where: { !StoreLayout.knownNames.contains($0) }) {
                throw .notAStore(path: layout.directory, reason: "it has no root file")
            }
            throw .storeNotFound(path: layout.directory)
        }
        let cache = PageCache(capacity: options.cacheCapacity)
        let counters = IOCounters()
        let root = try loadRoot(
            layout, fileSystem: fs, cache: cache, counters: counters, writable: false, log: options.log)
        return Store(
            path: path, readOnly: true, layout: layout, options: options, cache: cache,
            counters: counters, state: State(current: root, writer: nil))
    }

    /// Writer recovery (Docs/Format.md §15): follow complete runs forward from the root the
    /// slots named; if there are any, make them durable (a writer killed before its sync
    /// can leave complete runs in the page cache) and record the newest in a root slot,
    /// synced. Leftover temporary files go. Bytes after the last complete run stay: they
    /// are preallocated zeros or an abandoned run, which the next commit writes over.
    /// A version 1 root file is the whole truth (version 1 wrote no chained runs).
    private static func recover(
        _ opened: CommittedRoot, slots: inout RootSlots, layout: StoreLayout,
        fileSystem fs: any FileSystem, log: @Sendable (String) -> Void
    ) throws(StorageError) -> CommittedRoot {
        for leftover in [layout.rootTemporary, layout.infoTemporary, layout.reclaimTemporary]
        where fs.itemKind(at: leftover) != nil {
            try fs.remove(leftover)
        }
        opened.file.allocatedLength = try opened.file.handle.size()
        guard !slots.isVersionOneLayout else { return opened }
        let (record, runs) = try RunRecovery.followRuns(
            from: opened.record, chain: opened.record.chain, in: opened.file)
        // Said, not repaired: the next commit writes over what lies past `record`. (A read
        // error here leaves the diagnosis unsaid rather than failing the open: the walk
        // above read every byte recovery depends on.)
        if let damage = try? RunRecovery.damagedRun(after: record, in: opened.file) {
            log("recovering \(layout.directory): \(damage.description) (Docs/Durability.md §1.5)")
        }
        guard runs > 0 else {
            // A torn slot and no run after the other: rewrite it with the root we opened at.
            if slots.foundDamagedSlot { try slots.writeDurably(opened.record) }
            return opened
        }
        log(
            "recovered \(runs) commits past root slot \(opened.slot) of \(layout.root) (generation \(opened.record.generation) "
                + "to \(record.generation)), from complete runs in \(opened.file.path)")
        try opened.file.handle.syncData()
        try slots.writeDurably(record)
        return CommittedRoot(
            record: record, pages: opened.pages, openedFromPreviousSlot: opened.openedFromPreviousSlot,
            slot: opened.slot)
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
