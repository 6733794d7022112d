import Dispatch

// A store moving to the newest committed generation (a reader, or a writer between its
// turns), and how it tells a continuation of its history from another history.
extension Store {
    /// Moves to the newest committed generation, if there is a newer one. Returns true if
    /// the generation changed. Views taken before keep their generation.
    ///
    /// A writer knows its own commits; between its turns (holding no lock: no transaction
    /// active, every commit durable), this moves it to what writers in other processes
    /// committed, as a reader moves, and tells its observers. During a turn it does
    /// nothing: no other process can have committed since the turn's start.
    @discardableResult
    public func refresh() throws(StorageError) -> Bool {
        guard isReadOnly else { return try followOtherWritersBetweenTurns() == .adopted }
        return try refreshReadOnly()
    }

    /// Adopts what other processes committed since this store last looked, if the root
    /// file's slots changed since (``RootGlance``): a read that follows another process's
    /// commit (once that commit returned) sees it, as the next read of an SQLite connection
    /// does, instead of waiting for the follower's notification. When nothing changed it
    /// costs a comparison of mapped bytes.
    ///
    /// For the layer above, at the start of each read outside a transaction, holding none of
    /// its own locks. A read-only store only adopts (its follower tells observers, replaying
    /// from the file of the commit it last delivered, which it keeps open); a writer between
    /// turns adopts and tells its observers on this thread. Failures are left to the
    /// follower, which reports them; the read goes on with the generation already adopted.
    /// So does a read that finds this writer busy (another thread following, a transaction
    /// catching up at the start of its turn, or a compaction catching up): what they adopt,
    /// it sees from its next read. During this writer's own turn there is nothing to follow:
    /// its catch-up adopted every other process's commit, and its own slot writes are noted
    /// as seen.
    package func followIfRootFileChanged() {
        guard let glance = rootGlance, let slots = glance.changedSlots() else { return }
        let looked: Bool
        if isReadOnly {
            looked = (try? refreshReadOnly()) != nil
        } else {
            var followed = try? followOtherWritersBetweenTurns()
            // Another thread uses the store alone (the follower adopting the same commit, a
            // turn beginning): what it adopts is what this read must see, so wait for it
            // (briefly: a compaction's catch-up may hold it longer) and look again.
            if followed == .busy,
                let waiter = state.withLock({ state -> DispatchSemaphore? in
                    guard var writer = state.writer else { return nil }
                    defer { state.writer = writer }
                    return waitForExclusive(&writer)
                })
            {
                _ = waiter.wait(timeout: .now() + .milliseconds(500))
                followed = try? followOtherWritersBetweenTurns()
            }
            looked = followed.map { $0 != .busy } ?? false
        }
        if looked { glance.noteSeen(slots) }
    }

    /// A view of the newest committed generation, other processes' commits included: the
    /// look of ``followIfRootFileChanged()``, then ``read()``. For the layer above, at the
    /// start of a read outside a transaction.
    package func readNewest() throws(StorageError) -> ReadView {
        followIfRootFileChanged()
        return try read()
    }

    /// ``refresh()`` of a read-only store.
    private func refreshReadOnly() throws(StorageError) -> Bool {
        // Refreshes are serialised, loading and adopting under one lock (a read-only store
        // writes no root file, so nothing else takes `rootFileLock` here). Two refreshes
        // interleaving (the follower's catch-up and a manual call) could otherwise adopt a
        // root read before the newest one after it, moving the store backwards and making
        // the follower report a spurious `historyUnavailable`.
        try rootFileLock.withLock { _ throws(StorageError) -> Bool in
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
    func descends(_ newest: CommittedRoot, from current: CommittedRoot) throws(StorageError) -> Bool {
        if newest.record.snapshotFile != current.record.snapshotFile {
            return newest.record.snapshotFile > current.record.snapshotFile
        }
        guard newest.record.committedLength > current.record.committedLength else { return false }
        return try newest.file.storedChecksum(at: current.record.commitPage)
            == current.file.chainValue(of: current.record)
    }

    /// ``refresh()`` of a writer: between its turns, adopts the root the slots name if
    /// another writer process wrote them, reporting each commit to the generation listener
    /// and queueing it for observers (the catch-up's adoption, Store+CatchUp.swift).
    ///
    /// Why this is safe without the store's lock: it writes nothing (no slot, no sync, no
    /// run is followed: a reader's view, where only what a slot names is known durable), and
    /// it runs in exclusive mode, taken only if no turn is held, so no transaction of this
    /// process begins on the tip while it moves. The next turn's catch-up reads the slots
    /// again and follows the runs after them, from the adopted root. A root older than this
    /// writer's (a slot read while another writer rewrote it, or another history after
    /// damage that is still behind this writer) is left to that catch-up; another history
    /// ahead of it is adopted as replaced, as the catch-up adopts one.
    func followOtherWritersBetweenTurns() throws(StorageError) -> BetweenTurnsFollow {
        // A poisoned writer adopts nothing more; a held turn adopted everything at its start.
        // Checked before the root file lock, which a commit of the turn holds across its sync.
        let settled = try state.withLock { (state) throws(StorageError) -> BetweenTurnsFollow? in
            if state.closed { throw .closed(path: path) }
            guard let writer = state.writer else { return .nothingNew }
            if writer.poisoned != nil || writer.holdsLock { return .nothingNew }
            // In exclusive use (a turn starting, another follow): it holds the root file lock
            // across its syncs and replay, and what it adopts a later look sees.
            return writer.exclusive ? .busy : nil
        }
        if let settled { return settled }
        // Then a look with the root file lock alone: the watch fires on this writer's own
        // slot writes too, and those must not make a beginning transaction wait for exclusive
        // mode. (A slot written after this look fires the watch again.)
        let known = try rootFileLock.withLock { (slots) throws(StorageError) -> Bool in
            guard slots != nil else { throw StorageError.closed(path: path) }
            guard let roots = try slots!.currentRoots() else { return true }
            return slots!.areKnown(roots)
        }
        if known { return .nothingNew }
        let idle = try state.withLock { (state) throws(StorageError) -> BetweenTurnsFollow? in
            if state.closed { throw .closed(path: path) }
            // The first look's checks again: a turn or exclusive use may have begun since.
            guard var writer = state.writer, writer.poisoned == nil, !writer.holdsLock else { return .nothingNew }
            guard !writer.exclusive, writer.activeTransactions == 0 else { return .busy }
            writer.exclusive = true
            state.writer = writer
            return nil
        }
        if let idle { return idle }
        defer {
            endExclusive()
            deliverQueued()
        }
        return try writeSection.withLock { _ throws(StorageError) -> BetweenTurnsFollow in
            try rootFileLock.withLock { (slots) throws(StorageError) -> BetweenTurnsFollow in
                guard slots != nil else { throw StorageError.closed(path: path) }
                // A version 1 root file is left to the next turn.
                guard let roots = try slots!.currentRoots(), !slots!.areKnown(roots) else { return .nothingNew }
                let known = state.withLock { $0.current }
                let newest = try Store.loadRoot(
                    layout, fileSystem: fileSystem, cache: cache, counters: counters, writable: true,
                    log: options.log, reusing: known.file, glance: rootGlance)
                guard !Self.sameCommit(newest.record, known.record),
                    newest.record.generation > known.record.generation
                else {
                    slots!.noteFollowed(roots)
                    return .nothingNew
                }
                try adopt(newest, replacing: known)
                slots!.noteFollowed(roots)
                return .adopted
            }
        }
    }

    /// What a writer's follow between turns did.
    enum BetweenTurnsFollow {
        /// It adopted a newer root.
        case adopted
        /// It looked, and there was nothing newer to adopt (or only a version 1 root file,
        /// or a root this writer is ahead of, which its next turn settles).
        case nothingNew
        /// It did not look: the writer is in exclusive use (another thread following, a turn
        /// starting, a compaction catching up), or a transaction is open.
        case busy
    }
}
