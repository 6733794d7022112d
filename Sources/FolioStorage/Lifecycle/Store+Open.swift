// Opening a store: for writing (lock, recovery that follows complete runs, Durability.md §3)
// and for reading (slots only, no lock), and a reader's refresh to a newer root.
extension Store {
    /// Opens the store at `path` for writing, creating it if `options.createIfMissing`.
    ///
    /// Takes the store's write lock at once or throws `StorageError.lockedByAnotherWriter(path:)`
    /// (never waits). Recovery is this and nothing more (Docs/Durability.md §3): from the
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

        let (lock, identity) = try WriterRegistry.register(lockPath: layout.lock, fileSystem: fs) {
            () throws(StorageError) in
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
            let writer = WriterState(lock: lock, identity: identity, durableRecord: root.record)
            // The same counters the root's page source counts into (ioStatistics).
            let store = Store(
                path: path, readOnly: false, layout: layout, options: options, cache: cache,
                counters: counters, state: State(current: root, writer: writer), slots: slots)
            try store.retireStaleSnapshots(
                current: root.record.snapshotFile, namedAtOpen: slots.namedAtOpen,
                openedFromPreviousSlot: root.openedFromPreviousSlot)
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
            var newest = try Store.loadRoot(
                layout, fileSystem: fileSystem, cache: cache, counters: counters, writable: false,
                log: options.log, reusing: current.file)
            // A slot read while the writer rewrites it in place can fail its checksum, and the
            // other slot is older: read again rather than step back. Only a root that stays
            // older (a damaged slot) is adopted below.
            var rereads = 0
            while newest.record.generation < current.record.generation && rereads < 3 {
                rereads += 1
                newest = try Store.loadRoot(
                    layout, fileSystem: fileSystem, cache: cache, counters: counters, writable: false,
                    log: options.log, reusing: current.file)
            }
            guard !Self.sameCommit(newest.record, current.record) else { return false }
            // A root older than the one adopted is never adopted: a slot torn by a read that
            // overlapped its in-place write can fail its checksum several times in a row
            // while the writer commits quickly, and the other slot is older. The next
            // notification or poll reads again. So the generation never goes backwards for
            // a reader (D4); the pages of the adopted root stay readable (its file is open).
            guard newest.record.generation >= current.record.generation else { return false }
            // Invariant: no cache of this process serves a page or a record of another
            // history. A writer that fell back to an older root (damage) appends another
            // history from an older committed end, over bytes this reader may have read, and
            // with generations this reader may have (even this one: adopted, since reading on
            // over the rewritten bytes would mix the two histories). The page cache knows
            // pages by (open file, offset): the file is opened anew, so that views still on
            // the first history neither find the new pages nor put theirs where new views
            // look. The layer above learns that the generation no longer names what it did.
            if !(try descends(newest, from: current)) {
                let file = try Store.openSnapshot(
                    newest.record.snapshotFile, layout: layout, fileSystem: fileSystem, writable: false)
                newest = CommittedRoot(
                    record: newest.record, pages: PageSource(file: file, cache: cache, counters: counters))
                cache.removeAll()  // memory only: no later lookup uses the old identities
                reportHistoryReplaced(at: newest.record.generation)
            }
            state.withLock { $0.current = newest }
            return true
        }
    }

    /// Whether two roots name the same commit: the same generation at the same place with
    /// the same chain value (a version 1 slot carries none: then place and generation).
    static func sameCommit(_ a: RootRecord, _ b: RootRecord) -> Bool {
        a.generation == b.generation && a.location == b.location && (a.chain == b.chain || a.chain == 0 || b.chain == 0)
    }

    /// Whether `newest` continues the chain of commits through `current`, judged without
    /// walking the chain: a later commit in the same file ends past `current`'s committed
    /// end, which no commit rewrites, so `current`'s commit page is still there with its
    /// chain value; a compaction's commit is in a newer file. Another history is written
    /// from an older committed end: it ends before, or rewrote `current`'s commit page (its
    /// chain value differs, since its run does), or lies in an older file.
    private func descends(_ newest: CommittedRoot, from current: CommittedRoot) throws(StorageError) -> Bool {
        if newest.record.snapshotFile != current.record.snapshotFile {
            return newest.record.snapshotFile > current.record.snapshotFile
        }
        guard newest.record.committedLength > current.record.committedLength else { return false }
        return try newest.file.storedChecksum(at: current.record.commitPage)
            == current.file.chainValue(of: current.record)
    }

    // MARK: Loading the root

    /// Reads the root file and opens the generation it names: the valid slot with the higher
    /// generation, or the other slot if that one or what it names is damaged (Docs/Format.md
    /// §8). A reader that finds the named snapshot file gone (a compaction between reading
    /// the root and opening the file) reads the root again.
    static func loadRoot(
        _ layout: StoreLayout, fileSystem fs: any FileSystem, cache: PageCache, counters: IOCounters,
        writable: Bool, log: @Sendable (String) -> Void,
        reusing existing: SnapshotFile? = nil
    ) throws(StorageError) -> CommittedRoot {
        var attempts = 0
        while true {
            attempts += 1
            do throws(StorageError) {
                return try loadRootOnce(
                    layout, fileSystem: fs, cache: cache, counters: counters, writable: writable,
                    log: log, reusing: existing)
            } catch .io(let operation, let path, let code)
                where code == SystemError.notFound && attempts < 5
                && StoragePath.parent(of: path) == layout.snapshots
            {
                _ = operation
                continue
            }
        }
    }

    private static func loadRootOnce(
        _ layout: StoreLayout, fileSystem fs: any FileSystem, cache: PageCache,
        counters: IOCounters, writable: Bool, log: @Sendable (String) -> Void,
        reusing existing: SnapshotFile?
    ) throws(StorageError) -> CommittedRoot {
        let info = try fs.open(layout.info, mode: .readOnly)
        _ = try InfoFile.decode(try info.readAll(), path: layout.info)
        info.close()

        let rootFile = try fs.open(layout.root, mode: .readOnly)
        let bytes = try rootFile.readAll()
        rootFile.close()

        // Every slot that holds something is a candidate, newest generation first (Docs/Format.md
        // §8). In a version 1 file slot 0 is always the newer; in version 2 either may be.
        var candidates: [(slot: Int, record: RootRecord)] = []
        var firstProblem: StorageError?
        for slot in 0..<2 where !RootRecord.slotIsEmpty(bytes, slot: slot) {
            do throws(StorageError) {
                candidates.append((slot, try RootRecord.decodeSlot(bytes, slot: slot, file: layout.root)))
            } catch {
                if case .unsupportedFormatVersion = error { throw error }
                firstProblem = firstProblem ?? error
            }
        }
        // Equal generations (a compaction writes its root into both slots): slot 0 first.
        candidates.sort { ($0.record.generation, 1 - $0.slot) > ($1.record.generation, 1 - $1.slot) }
        var shortFile: StorageError?
        for (index, candidate) in candidates.enumerated() {
            do throws(StorageError) {
                let record = candidate.record
                let file: SnapshotFile
                if let existing, existing.number == record.snapshotFile {
                    file = existing
                } else {
                    file = try openSnapshot(record.snapshotFile, layout: layout, fileSystem: fs, writable: writable)
                }
                // A file shorter than the slot's committed length lost committed bytes: no crash
                // does that (a slot is written only after its run is synced), so it is damage,
                // and it is reported, never a reason to fall back: a writer opened at an older
                // slot would write over what is left (Docs/Format.md §8).
                let size = try file.handle.size()
                guard size >= record.committedLength else {
                    shortFile = StorageError.corruption(
                        Corruption(
                            file: file.path, offset: size,
                            detail:
                                "file ends at \(size) bytes but root slot \(candidate.slot) says \(record.committedLength) are committed"
                        ))
                    throw shortFile!
                }
                // The slot carries everything a reader needs (catalog root, committed length), so
                // opening reads no commit page: a damaged commit page costs only its change
                // record, which verify and observers report, not the generation.
                let pages = PageSource(file: file, cache: cache, counters: counters)
                if let firstProblem {
                    log(
                        "a root slot of \(layout.root) is unusable (\(firstProblem)); opened at generation \(record.generation) "
                            + "from slot \(candidate.slot)")
                }
                return CommittedRoot(
                    record: record, pages: pages, openedFromPreviousSlot: firstProblem != nil,
                    slot: candidate.slot)
            } catch {
                if case .unsupportedFormatVersion = error { throw error }
                if let shortFile { throw shortFile }
                if index == 0 {
                    // Only damage to the newest slot or what it names justifies an older root. An
                    // I/O error says nothing about the data: falling back on a transient EIO or
                    // ENOSPC would open a writer at the older slot, and the acknowledged
                    // generation the newest names would be lost to it (D1). Report it instead;
                    // opening again can succeed. (A missing snapshot file is a compaction race:
                    // the caller reads the root again.)
                    guard case .corruption = error else { throw error }
                }
                firstProblem = firstProblem ?? error
            }
        }
        throw firstProblem ?? .corruption(Corruption(file: layout.root, offset: 0, detail: "no usable root slot"))
    }

    static func openSnapshot(
        _ number: UInt64, layout: StoreLayout, fileSystem fs: any FileSystem,
        writable: Bool
    ) throws(StorageError) -> SnapshotFile {
        let path = layout.snapshot(number)
        let handle = try fs.open(path, mode: writable ? .readWrite : .readOnly)
        do throws(StorageError) {
            let header = try SnapshotHeader.decode(try handle.read(at: 0, count: SnapshotHeader.size), file: path)
            guard header.fileNumber == number else {
                throw StorageError.corruption(
                    Corruption(
                        file: path, offset: 0,
                        detail: "snapshot header names file \(header.fileNumber)"))
            }
        } catch {
            handle.close()
            throw error
        }
        return SnapshotFile(number: number, path: path, handle: handle)
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
