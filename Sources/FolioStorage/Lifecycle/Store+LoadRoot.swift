// Loading the root: the root file's newest usable slot, with the fallback to the other
// slot, and the snapshot file it names.
extension Store {
    /// Reads the root file and opens the generation it names: the valid slot with the higher
    /// generation, or the other slot if that one or what it names is damaged (Docs/Format.md
    /// §8). A reader that finds the named snapshot file gone (a compaction between reading
    /// the root and opening the file) reads the root again.
    ///
    /// With `existing` (the snapshot file of a store already open: a refresh, a catch-up, a
    /// follow), the info file is not read: the open checked it, and it is written once, when
    /// the store is created (Docs/Format.md §2). Reading and decoding it at every refresh was
    /// half of what a replica's shipment or a turn after another process's commits spent in
    /// loading the root.
    ///
    /// With `glance` (the store's mapping of its root file), the slots are copied from the
    /// mapping instead of read from the file: the same bytes, since both go through the page
    /// cache, without the open, read and close. For a writer only: the mapping is of the file
    /// the store opened, as the writer's own handle of the root file is, while a reader
    /// opens the path at each refresh and so sees a store directory replaced under it (a
    /// copy restored over it) as the replaced store it now is.
    static func loadRoot(
        _ layout: StoreLayout, fileSystem fs: any FileSystem, cache: PageCache, counters: IOCounters,
        writable: Bool, log: @Sendable (String) -> Void,
        reusing existing: SnapshotFile? = nil, glance: RootGlance? = nil
    ) throws(StorageError) -> CommittedRoot {
        var attempts = 0
        while true {
            attempts += 1
            do throws(StorageError) {
                return try loadRootOnce(
                    layout, fileSystem: fs, cache: cache, counters: counters, writable: writable,
                    log: log, reusing: existing, glance: glance)
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
        reusing existing: SnapshotFile?, glance: RootGlance?
    ) throws(StorageError) -> CommittedRoot {
        if existing == nil {
            let info = try fs.open(layout.info, mode: .readOnly)
            _ = try InfoFile.decode(try info.readAll(), path: layout.info)
            info.close()
        }

        let bytes: [UInt8]
        if let glance {
            bytes = glance.rootFileBytes()
        } else {
            let rootFile = try fs.open(layout.root, mode: .readOnly)
            bytes = try rootFile.readAll()
            rootFile.close()
        }

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
        // The store's format version is the highest its slots say (Docs/Format.md §18): once
        // one slot is version 3, runs after either may record trees wholesale, and every slot
        // written from then on says 3.
        let storeVersion = candidates.map(\.record.formatVersion).max() ?? StorageFormat.createdVersion
        for index in candidates.indices { candidates[index].record.formatVersion = storeVersion }
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
                //
                // A writer's catch-up does not ask when its own file is known to be long enough
                // (what it appended and preallocated, `allocatedLength`): on ext4 an `fstat`
                // between a turn's writes made its `fdatasync` write the inode as well
                // (Store+CatchUp.swift). When it asks, what it learns is kept there, so its
                // next preallocation need not ask again.
                let knownLongEnough =
                    writable && file === existing && record.committedLength <= file.allocatedLength
                if !knownLongEnough {
                    let size = try file.handle.size()
                    if writable { file.allocatedLength = max(file.allocatedLength, size) }
                    guard size >= record.committedLength else {
                        shortFile = StorageError.corruption(
                            Corruption(
                                file: file.path, offset: size,
                                detail:
                                    "file ends at \(size) bytes but root slot \(candidate.slot) says \(record.committedLength) are committed"
                            ))
                        throw shortFile!
                    }
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
}
