// Retention of replaced snapshot files: which are kept or removed when a writer opens, and
// when kept ones go (by time, count and bytes; Docs/Durability.md §3, Docs/Format.md §17).

extension Store {
    /// At writer open: what to do with the snapshot files other than the current one.
    ///
    /// Files numbered above the current one are an interrupted compaction's copy (a crash
    /// before its root switch) or, after an open that fell back to an older root slot, the
    /// file the unusable slot named. One a slot names (as read at this open, `namedAtOpen`)
    /// is kept and logged. One no slot names is reclaimed (``reclaimNewerSnapshot(_:)``),
    /// except at an open that fell back from an unusable slot, which keeps it and says so:
    /// the slot it may belong to is what the log reports, so the file stays for a look
    /// until the next writer open. A file whose header does not name it (a compaction
    /// killed before writing its header; no root can ever have opened it) is removed.
    ///
    /// Of the older files, the newest (the file the last compaction replaced, which a
    /// version 1 store's slot 1 may name) is kept for the retention grace period, for
    /// readers in other processes and for history replay; older ones go at once, so that
    /// short-lived writers (a `folio compact`) do not leave replaced files behind. Readers
    /// pinned to a removed file keep reading it through their open descriptor; a reader
    /// opening a removed file re-reads the root.
    ///
    /// Files above the current one are handled only holding the compaction lock: while
    /// another process holds it, one of them is its copy in progress, and all stay for the
    /// next writer open. Older files are never a copy in progress: a compaction's number is
    /// above every file on disk, and the current file cannot change while it copies (a
    /// root switch needs the compaction lock too).
    func retireStaleSnapshots(
        current: UInt64, namedAtOpen: Set<UInt64>, openedFromPreviousSlot: Bool
    ) throws(StorageError) {
        let deadline = ContinuousClock.now + options.retention.gracePeriod
        var retired: [RetiredSnapshot] = []
        var older: [UInt64] = []
        let list = { () throws(StorageError) -> [UInt64] in
            try self.fileSystem.contentsOfDirectory(self.layout.snapshots).compactMap(
                StoreLayout.snapshotNumber(fromName:))
        }
        var numbers = try list()
        // A file above the current one may be another process's compaction copying now,
        // without the store's lock (Durability.md §1.6): touched only holding the compaction
        // lock (CompactionLock.swift), tried once (this holds the store's lock, which that
        // compaction waits for at its catch-up: waiting here could deadlock). Listed again
        // once held, so what is acted on is what the directory holds with no copy going on.
        // So are files below the current one beyond the newest of them: another process's
        // compaction unlinks the file it replaced after its last turn, still holding the
        // compaction lock, so the newest one listed here may be on its way out, and an older
        // one still within its grace period must not go at once in its place.
        var exclusion: (any LockFile)?
        let olderCount = numbers.filter { $0 < current }.count
        if numbers.contains(where: { $0 > current }) || olderCount > 1 {
            exclusion = try takeCompactionLock(waitingUpTo: nil, stop: nil)
            if exclusion != nil {
                numbers = try list()
            } else if numbers.contains(where: { $0 > current }) {
                options.log(
                    "leaving the snapshot files above \(StoreLayout.snapshotName(current)) to the next writer open: "
                        + "another process is compacting into one of them")
            }
        }
        defer { exclusion?.close() }
        let newestOlder = newestReplacedSnapshot(among: numbers, below: current)
        for number in numbers where number != current {
            let name = StoreLayout.snapshotName(number)
            if number > current {
                guard exclusion != nil else { continue }
                if namedAtOpen.contains(number) {
                    options.log(
                        "keeping \(name), newer than the current file \(StoreLayout.snapshotName(current)): "
                            + "a root slot names it, but it could not be used")
                    continue
                }
                guard let header = snapshotHeader(number) else {
                    options.log("removing \(name), left by an interrupted compaction before its header")
                    try fileSystem.remove(layout.snapshot(number))
                    continue
                }
                if openedFromPreviousSlot {
                    options.log(
                        "keeping \(name) until the next writer open: it may hold the generation of the unusable root slot"
                    )
                } else if header.length > UInt64(SnapshotHeader.size) {
                    options.log("reclaiming \(name), an interrupted compaction's copy that no root slot names")
                    try reclaimNewerSnapshot(number, header: header.bytes)
                }
            } else if number == newestOlder || exclusion == nil {
                // Its length is not known without opening it (no stat at open): it counts
                // as 0 against the byte limit, and goes by time and by count. (Without the
                // compaction lock, an older file is kept as well: see above.)
                retired.append(RetiredSnapshot(number: number, removeAfter: deadline, bytes: 0))
            } else {
                older.append(number)
            }
        }
        // The older files go at once unless the store declares history: then the removal
        // check below decides which it keeps (Store+HistoryRetention.swift). That walks the
        // chain down to the oldest generation kept, holding the store's lock, which other
        // processes' writes wait for (about 3 µs a commit, the first time): done here all
        // the same, since a short-lived writer (a command-line tool, an extension) may
        // never make a check later, and its files would pile up.
        if !older.isEmpty && declaresHistory() {
            let now = ContinuousClock.now
            retired += older.map { RetiredSnapshot(number: $0, removeAfter: now, bytes: 0, keptForHistory: true) }
            retired.sort { $0.number < $1.number }
        } else {
            for number in older { try fileSystem.remove(layout.snapshot(number)) }
        }
        state.withLock { $0.writer?.retired = retired }
        removeExpiredSnapshots()
    }

    /// How long a file the declared history keeps stays before it is checked again: the
    /// grace period, at least a second, so that a commit does not read the declaration and
    /// walk the chain each time. A commit that changes the declaration checks at once.
    var historyRecheckInterval: Duration { max(options.retention.gracePeriod, .seconds(1)) }

    /// Makes the next removal check decide again about every file the declared history
    /// keeps: the declaration changed (a checkpoint released, a shorter retention).
    func recheckHistoryRetention() {
        let now = ContinuousClock.now
        state.withLock { state in
            guard let retired = state.writer?.retired else { return }
            state.writer?.retired = retired.map { file in
                var file = file
                if file.keptForHistory { file.removeAfter = now }
                return file
            }
        }
    }

    /// Replaces snapshot file `number`, newer than the current one and named by no root
    /// slot, with a file holding only its header: its space is reclaimed, its number stays
    /// taken.
    ///
    /// Why no commit is lost. Commits go into the file the newest root names, and a
    /// compaction writes its root into both slots, each write synced (Docs/Durability.md
    /// §1.3 steps 5-6), before any commit can go into its file; every later root names that
    /// file or a newer one. So a file above the current one that no slot names never
    /// received a commit: it is a copy of a generation whose contents the current file
    /// holds. (A version 1 root file names the root before the newest in slot 1; a slot 1
    /// in an older file means slot 0 is that file's compaction root, with no commit after
    /// it. An unusable slot that might have named the file leaves the other slot naming an
    /// older file, which by the same argument means no commit went into this one.)
    ///
    /// Why no reader is hurt. Readers in other processes open only files a slot names (and
    /// older ones along the chain of commits), so none opened a copy that was never
    /// switched to. One that did open this file (a slot named it, then was lost: a damaged
    /// slot, or a root file sync at the compaction's switch that failed and dropped the slot
    /// write) keeps reading it through its descriptor: the file is replaced by a rename,
    /// not truncated. The number stays taken, at every instant, by the header-only file
    /// that replaces it, so that no later compaction gives another file the number such a
    /// reader, and its page cache, know this one by. A read-only open never gets here: it
    /// deletes nothing.
    private func reclaimNewerSnapshot(_ number: UInt64, header: [UInt8]) throws(StorageError) {
        // Renamed over the copy, never removed first: at no instant is the number free for
        // a compaction to take, even if this process dies here.
        try fileSystem.replaceAtomically(layout.snapshot(number), with: header, temporaryPath: layout.reclaimTemporary)
    }

    /// The newest file below `current` that holds pages (the file the last compaction
    /// replaced), skipping header-only files: a reclaimed copy (``reclaimNewerSnapshot(_:)``)
    /// that a later compaction numbered its file above holds nothing and keeps no number
    /// taken any more, so it must not take the replaced file's place in retention. Opens
    /// older files newest first until one holds pages: usually one.
    private func newestReplacedSnapshot(among numbers: [UInt64], below current: UInt64) -> UInt64? {
        for number in numbers.filter({ $0 < current }).sorted(by: >) {
            guard let header = snapshotHeader(number), header.length == UInt64(SnapshotHeader.size) else {
                return number
            }
        }
        return nil
    }

    /// The header bytes and length of snapshot file `number`, if it starts with a valid
    /// header naming it. I/O errors count as a header of unknown length (kept): only a file
    /// read and found wrong is provably no snapshot.
    func snapshotHeader(_ number: UInt64) -> (bytes: [UInt8], length: UInt64)? {
        do throws(StorageError) {
            let file = try Store.openSnapshot(number, layout: layout, fileSystem: fileSystem, writable: false)
            defer { file.handle.close() }
            return (try file.handle.read(at: 0, count: SnapshotHeader.size), try file.handle.size())
        } catch {
            if case .corruption = error { return nil }
            return ([], 0)
        }
    }

    /// Removes retired snapshot files whose grace period has passed, then the oldest beyond
    /// the retention's file limit and beyond its byte limit, except those the store's
    /// declared history keeps (Store+HistoryRetention.swift), which stay until their next
    /// check and count against neither limit. `retired` is in retirement order, so the
    /// newest (the file a version 1 store's slot 1 may name) is the last to go: see
    /// Docs/Format.md §17.
    func removeExpiredSnapshots() {
        let now = ContinuousClock.now
        let retention = options.retention
        // Every commit calls this while it holds the writer slot: when nothing is due (no
        // retired file, or none past its grace period, its next check or the limits) it
        // returns without the root file lock, which a sync in flight holds. Waiting for it
        // would keep the next transaction from appending while the previous one's sync runs
        // (group commit, Docs/Durability.md §1.4). `retired` changes only under `state`, so
        // two calls at once (a commit's and a compaction's after its catch-up) never remove
        // a file twice: what one takes out of the list, the other does not see.
        let due = state.withLock { state -> Bool in
            guard let writer = state.writer, !writer.retired.isEmpty else { return false }
            if writer.retired.contains(where: { $0.removeAfter <= now }) { return true }
            let waiting = writer.retired.filter { !$0.keptForHistory }
            let bytes = waiting.reduce(UInt64(0)) { $0.addingReportingOverflow($1.bytes).partialValue }
            return waiting.count > retention.maximumRetainedFiles || bytes > retention.maximumRetainedBytes
        }
        guard due else { return }
        // Taken before `state` (lock order: rootFileLock, then state).
        let namedBySlots = rootFileLock.withLock { $0?.namedFiles ?? [] }
        let (expired, all) = state.withLock { state -> ([RetiredSnapshot], [RetiredSnapshot]) in
            guard var writer = state.writer else { return ([], []) }
            let all = writer.retired
            var expired = writer.retired.filter { $0.removeAfter <= now }
            writer.retired.removeAll { $0.removeAfter <= now }
            // Beyond the count limit, the oldest go, except a file a root slot names (below).
            var excess = writer.retired.filter { !$0.keptForHistory }.count - retention.maximumRetainedFiles
            if excess > 0 {
                writer.retired.removeAll { file in
                    guard excess > 0, !file.keptForHistory, !namedBySlots.contains(file.number) else { return false }
                    excess -= 1
                    expired.append(file)
                    return true
                }
            }
            // Invariant: a file a root slot names is never removed by the count or byte limit:
            // recovery may start from either slot (a fallback from a damaged newest slot
            // opens it). Format version 2 compaction writes its root into both slots, so this
            // protects a version 1 store's slot 1 and a compaction interrupted between its two
            // slot writes.
            var total = writer.retired.filter { !$0.keptForHistory }.reduce(UInt64(0)) {
                $0.addingReportingOverflow($1.bytes).partialValue
            }
            var kept: [RetiredSnapshot] = []
            for file in writer.retired {  // oldest first
                if !file.keptForHistory && total > retention.maximumRetainedBytes
                    && !namedBySlots.contains(file.number)
                {
                    total -= file.bytes
                    expired.append(file)
                } else {
                    kept.append(file)
                }
            }
            writer.retired = kept
            state.writer = writer
            return (expired, all)
        }
        guard !expired.isEmpty else { return }
        // Decided over every retired file, so that the byte budget counts the kept ones too.
        let (history, sized) = filesKeptForHistory(all, now: Clock.microsecondsSince1970())
        let keptForHistory = expired.filter { history.contains($0.number) }
        if !keptForHistory.isEmpty {
            // From now, not from before the decision: a long walk must not leave them due.
            let recheck = ContinuousClock.now + historyRecheckInterval
            state.withLock { state in
                guard state.writer != nil else { return }
                for var file in keptForHistory {
                    file.bytes = sized[file.number] ?? file.bytes
                    (file.keptForHistory, file.removeAfter) = (true, recheck)
                    state.writer?.retired.append(file)
                }
                state.writer?.retired.sort { $0.number < $1.number }
            }
        }
        removeRetiredSnapshots(expired.filter { !history.contains($0.number) }.map(\.number))
    }

    func removeRetiredSnapshots(_ numbers: [UInt64]) {
        for (index, number) in numbers.enumerated() {
            do {
                try fileSystem.remove(layout.snapshot(number))
            } catch {
                if case .io(_, _, let code) = error, code == SystemError.notFound { continue }
                options.log("could not remove retired snapshot file \(layout.snapshot(number)): \(error)")
            }
            if index == 0 { CrashPoint.compactMidRemove.reach() }
        }
    }
}
