// Reading the store as it was at a past generation: the commit chain names every earlier
// generation's commit page, and each commit page names its catalog, so a past generation
// reads like the current one once its commit page is found.

extension Store {
    /// A view of the store as it was at `generation`: every read through it sees exactly what
    /// a reader of that generation saw when it was the newest.
    ///
    /// The past generations a store holds are those its commit chain still reaches: every
    /// commit since the last compaction, and the commits before it while the file that
    /// compaction replaced is kept (Docs/Format.md §17). The first read of a generation
    /// walks back along the chain from the newest commit, a commit page per generation read
    /// in blocks; the walk is remembered, so a later read of the same or a newer past
    /// generation finds its root at once, and a read of an older one walks on from where
    /// the last walk ended.
    ///
    /// ```swift
    /// let before = try store.read(at: token)
    /// let old = try before.get(key, in: "books")
    /// ```
    ///
    /// Walks hold one lock of the store's: reads of past generations wait for a walk in
    /// progress (reads of the newest generation do not).
    ///
    /// - Throws: `StorageError.generationUnavailable(requested:oldest:newest:)` when the store
    ///   does not hold `generation` (older than the oldest it holds, or newer than the
    ///   newest); `StorageError.corruption` if a commit page on the way is damaged.
    public func read(at generation: UInt64) throws(StorageError) -> ReadView {
        try read(at: generation, below: try read().root)
    }

    /// ``read(at:)`` along the chain of `view`'s generation instead of the newest published
    /// one: for a write transaction, whose base may be a commit not yet published.
    package func read(at generation: UInt64, in view: ReadView) throws(StorageError) -> ReadView {
        try read(at: generation, below: view.root)
    }

    private func read(at generation: UInt64, below newest: CommittedRoot) throws(StorageError) -> ReadView {
        let now = newest.record.generation
        if generation == now { return ReadView(root: newest) }
        return try past.withLock { (past) throws(StorageError) -> ReadView in
            past.follow(newest)
            var history = HistoryReader(store: self, newest: newest, generation: generation, held: nil)
            let unavailable = { (past: inout PastGenerations) throws(StorageError) -> StorageError in
                .generationUnavailable(
                    requested: generation, oldest: try self.oldest(&past, newest: newest, reading: &history),
                    newest: now)
            }
            guard generation < now else { throw try unavailable(&past) }
            if let root = past.recentRoot(of: generation) {
                // Retention may have removed its file since (the open file still reads, but
                // the store no longer holds the generation).
                guard root.file.number != newest.file.number, !snapshotExists(root.file.number) else {
                    return ReadView(root: root, isPast: true)
                }
                past.forgetRecentRoot(of: generation)
                past.forgetFiles(below: root.file.number + 1)
                throw try unavailable(&past)
            }
            var previous: CommitLocation?
            let commit: PastCommit
            if let found = try find(generation, in: &past, newest: newest, reading: &history) {
                (commit, previous) = (found, past.previous(of: generation))
            } else if let found = try checkpointed(generation, newest: newest, reading: &history) {
                (commit, previous) = found
            } else {
                throw try unavailable(&past)
            }
            let file: SnapshotFile
            do throws(StorageError) {
                file = try history.file(commit.location.fileNumber)
            } catch .historyUnavailable {
                // Its file was removed since the walk found it (retention).
                past.forgetFiles(below: commit.location.fileNumber + 1)
                throw try unavailable(&past)
            }
            let root = CommittedRoot(
                record: commit.record(generation: generation, previous: previous),
                pages: PageSource(file: file, cache: cache, counters: counters))
            past.remember(root)
            return ReadView(root: root, isPast: true)
        }
    }

    /// The commit of `generation` if a checkpoint of `newest`'s declared history names it
    /// and its page is still there (Docs/Format.md §17.1): the chain may not reach it any
    /// more, the files between it and the newest having been let go. Nil if its file is
    /// gone, was created after the generation (a backup's copy of the checkpoint), or the
    /// page is the commit page of another generation; a damaged page throws
    /// `StorageError.corruption`.
    private func checkpointed(
        _ generation: UInt64, newest: CommittedRoot, reading history: inout HistoryReader
    ) throws(StorageError) -> (commit: PastCommit, previous: CommitLocation?)? {
        let declared = try RetentionLayout.read(in: ReadView(root: newest))
        guard let checkpoint = declared.checkpoints.first(where: { $0.generation == generation }) else { return nil }
        do throws(StorageError) {
            guard try holds(checkpoint, reading: &history) else { return nil }
            let page = try history.commitPage(at: checkpoint.location)
            guard page.commit.generation == generation else { return nil }
            return (PastCommit(page.commit, at: checkpoint.location, chain: page.chain), page.commit.previous)
        } catch .historyUnavailable {
            return nil
        }
    }

    /// Whether `checkpoint`'s file is still there and could hold its commit: a file holds no
    /// commit older than the generation its header says it was created at. A checkpoint
    /// copied with the rest of a backup (whose only file was created at the generation
    /// copied) names a page of the source's files, not of this store's.
    func holds(_ checkpoint: StoredCheckpoint, reading history: inout HistoryReader) throws(StorageError) -> Bool {
        let file: SnapshotFile
        do throws(StorageError) {
            file = try history.file(checkpoint.location.fileNumber)
        } catch .historyUnavailable {
            return false
        }
        let header = try SnapshotHeader.decode(
            try file.handle.read(at: 0, count: SnapshotHeader.size), file: file.path)
        return header.createdGeneration <= checkpoint.generation
    }

    /// The checkpoints `view`'s generation declares whose commits this store holds (not
    /// those a backup copied from its source, nor those whose file is gone).
    package func heldCheckpoints(in view: ReadView) throws(StorageError) -> [StoredCheckpoint] {
        var history = HistoryReader(store: self, newest: view.root, generation: 1, held: nil)
        var held: [StoredCheckpoint] = []
        for checkpoint in try RetentionLayout.read(in: view).checkpoints {
            if checkpoint.generation == view.generation {
                held.append(checkpoint)
            } else if try holds(checkpoint, reading: &history) {
                held.append(checkpoint)
            }
        }
        return held
    }

    /// The oldest generation ``read(at:)`` can read now: the store's first commit, or the
    /// oldest the commit chain still reaches (compaction's retention removes the files of
    /// older ones). A checkpoint may keep an older generation readable apart from the
    /// chain: it is not counted here. Walks the whole chain the first time; what it found is remembered, and
    /// checked again against the files on disk each time.
    public func oldestReadableGeneration() throws(StorageError) -> UInt64 {
        let newest = try read().root
        return try past.withLock { (past) throws(StorageError) -> UInt64 in
            past.follow(newest)
            var history = HistoryReader(store: self, newest: newest, generation: 1, held: nil)
            return try oldest(&past, newest: newest, reading: &history)
        }
    }

    /// The oldest generation the chain reaches from `newest`, walking to it if no walk has.
    func oldest(
        _ past: inout PastGenerations, newest: CommittedRoot, reading history: inout HistoryReader
    ) throws(StorageError) -> UInt64 {
        // What a walk found may have lost its file since: retention removes replaced files
        // after commits, and the commits after a compaction keep the file the store reads.
        // Several files may be gone (a declared history released): each step forgets a file
        // and everything below it, and the files along the chain only grow.
        while let oldest = past.oldest, let commit = past.location(of: oldest),
            commit.location.fileNumber != newest.file.number, !snapshotExists(commit.location.fileNumber)
        {
            past.forgetFiles(below: commit.location.fileNumber + 1)
        }
        if let oldest = past.oldest { return oldest }
        if try find(1, in: &past, newest: newest, reading: &history) != nil { past.oldest = 1 }
        return past.oldest ?? newest.record.generation
    }

    /// Whether snapshot file `number` is still on disk.
    private func snapshotExists(_ number: UInt64) -> Bool {
        fileSystem.itemKind(at: layout.snapshot(number)) != nil
    }

    /// The commit of past `generation` (below `newest`'s), walking the chain as far as
    /// needed; nil if the chain does not reach it (then `past.oldest` says how far it does).
    func find(
        _ generation: UInt64, in past: inout PastGenerations, newest: CommittedRoot,
        reading history: inout HistoryReader
    ) throws(StorageError) -> PastCommit? {
        let now = newest.record.generation
        if let oldest = past.oldest, generation < oldest { return nil }
        if let known = past.location(of: generation) { return known }
        let walk: Walk
        if past.last.map({ generation > $0 }) ?? true {
            // Newer than every generation found (or nothing found yet): walk down from the
            // newest commit to just above what was found, or to `generation`.
            let target = past.last.map { min($0 + 1, generation) } ?? generation
            walk = try walkDown(from: newest.record.previous, below: now, to: target, history: &history)
            if let last = past.last,
                walk.bottom != nil || walk.newest != now - 1 || walk.continues != past.location(of: last)?.location
            {
                // What was found before is not joined to this walk: start over from it.
                past.forget()
            }
            past.append(newestFirst: walk.walked, newest: walk.newest, below: walk.continues)
        } else {
            // Older than every generation found: walk on down from the oldest found.
            walk = try walkDown(from: past.belowFirst, below: past.first, to: generation, history: &history)
            past.prepend(newestFirst: walk.walked, newest: walk.newest, below: walk.continues)
        }
        if let bottom = walk.bottom { past.oldest = bottom }
        // From the walk itself: what is kept of it may not hold the generation (capacity).
        guard generation <= walk.newest, walk.newest - generation < UInt64(walk.walked.count) else { return nil }
        return walk.walked[Int(walk.newest - generation)]
    }

    /// What ``walkDown(from:below:to:history:)`` found.
    private struct Walk {
        /// The commits found, newest first: at most ``PastGenerations/capacity``, the oldest
        /// the walk reached.
        var walked: [PastCommit] = []
        /// The generation of `walked[0]`.
        var newest: UInt64
        /// The predecessor of the oldest commit found (nil if the walk stopped there).
        var continues: CommitLocation?
        /// The oldest generation the chain reaches, when the walk found the chain's end
        /// before its target.
        var bottom: UInt64?
    }

    /// Walks the chain from `start`, the commit page of generation `above - 1`, down to the
    /// commit of `target` or as far as the chain goes: it ends early at no predecessor, a
    /// gap in generations (not a consecutive predecessor), or a predecessor whose file is
    /// gone. A damaged commit page on the way throws.
    private func walkDown(
        from start: CommitLocation?, below above: UInt64, to target: UInt64, history: inout HistoryReader
    ) throws(StorageError) -> Walk {
        var walk = Walk(newest: above - 1, continues: start)
        var expected = above - 1
        // Bounded: past the capacity, the newest commits found are let go (the target is the
        // oldest), so that a walk of any length holds at most that many.
        let bound = PastGenerations.capacity
        while expected >= max(target, 1) {
            guard let location = walk.continues else {
                walk.bottom = expected + 1
                return walk
            }
            let page: (commit: CommitRecord, chain: UInt32)
            do throws(StorageError) {
                page = try history.commitPage(at: location)
            } catch .historyUnavailable {
                walk.bottom = expected + 1
                walk.continues = nil
                return walk
            }
            guard page.commit.generation == expected else {
                walk.bottom = expected + 1
                walk.continues = nil
                return walk
            }
            if walk.walked.count == 2 * bound {
                walk.walked.removeFirst(bound)
                walk.newest -= UInt64(bound)
            }
            walk.walked.append(PastCommit(page.commit, at: location, chain: page.chain))
            walk.continues = page.commit.previous
            expected -= 1
        }
        if walk.walked.count > bound {
            walk.newest -= UInt64(walk.walked.count - bound)
            walk.walked.removeFirst(walk.walked.count - bound)
        }
        // Generation 1 is a store's first; nothing is below it.
        if expected == 0 { walk.bottom = 1 }
        return walk
    }
}
