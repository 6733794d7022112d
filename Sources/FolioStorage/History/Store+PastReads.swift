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
    /// - Throws: `StorageError.generationUnavailable(requested:oldest:newest:)` when the store
    ///   does not hold `generation` (older than the oldest it holds, or newer than the
    ///   newest); `StorageError.corruption` if a commit page on the way is damaged.
    public func read(at generation: UInt64) throws(StorageError) -> ReadView {
        let newest = try read().root
        let now = newest.record.generation
        if generation == now { return ReadView(root: newest) }
        return try past.withLock { (past) throws(StorageError) -> ReadView in
            past.follow(newest)
            if generation < now, let root = past.recentRoot(of: generation) { return ReadView(root: root) }
            var history = HistoryReader(store: self, newest: newest, generation: generation, held: nil)
            guard generation < now, let commit = try find(generation, in: &past, newest: newest, reading: &history)
            else {
                throw .generationUnavailable(
                    requested: generation, oldest: try oldest(&past, newest: newest, reading: &history), newest: now)
            }
            let file: SnapshotFile
            do throws(StorageError) {
                file = try history.file(commit.location.fileNumber)
            } catch .historyUnavailable {
                // Its file was removed since the walk found it (retention).
                past.forgetFiles(below: commit.location.fileNumber + 1)
                throw .generationUnavailable(
                    requested: generation, oldest: try oldest(&past, newest: newest, reading: &history), newest: now)
            }
            let root = CommittedRoot(
                record: commit.record(generation: generation, previous: past.previous(of: generation)),
                pages: PageSource(file: file, cache: cache, counters: counters))
            past.remember(root)
            return ReadView(root: root)
        }
    }

    /// The oldest generation ``read(at:)`` can read now: the store's first commit, or the
    /// oldest the commit chain still reaches (compaction's retention removes the files of
    /// older ones). Walks the whole chain the first time; what it found is remembered.
    public func oldestReadableGeneration() throws(StorageError) -> UInt64 {
        let newest = try read().root
        return try past.withLock { (past) throws(StorageError) -> UInt64 in
            past.follow(newest)
            var history = HistoryReader(store: self, newest: newest, generation: 1, held: nil)
            return try oldest(&past, newest: newest, reading: &history)
        }
    }

    /// The oldest generation the chain reaches from `newest`, walking to it if no walk has.
    private func oldest(
        _ past: inout PastGenerations, newest: CommittedRoot, reading history: inout HistoryReader
    ) throws(StorageError) -> UInt64 {
        if let oldest = past.oldest { return oldest }
        if try find(1, in: &past, newest: newest, reading: &history) != nil { past.oldest = 1 }
        return past.oldest ?? newest.record.generation
    }

    /// The commit of past `generation` (below `newest`'s), walking the chain as far as
    /// needed; nil if the chain does not reach it (then `past.oldest` says how far it does).
    private func find(
        _ generation: UInt64, in past: inout PastGenerations, newest: CommittedRoot,
        reading history: inout HistoryReader
    ) throws(StorageError) -> PastCommit? {
        let now = newest.record.generation
        if let oldest = past.oldest, generation < oldest { return nil }
        if let known = past.location(of: generation) { return known }
        if past.last.map({ generation > $0 }) ?? true {
            // Newer than every generation found (or nothing found yet): walk down from the
            // newest commit to just above what was found, or to `generation`.
            let target = past.last.map { min($0 + 1, generation) } ?? generation
            let walk = try walkDown(from: newest.record.previous, below: now, to: target, history: &history)
            if let last = past.last, walk.bottom != nil || walk.continues != past.location(of: last)?.location {
                // What was found before is not reachable along this chain any more: start over.
                past.forget()
            }
            past.append(newestFirst: walk.walked, newest: now - 1, below: walk.continues)
            if let bottom = walk.bottom { past.oldest = bottom }
            return past.location(of: generation)
        }
        // Older than every generation found: walk on down from the oldest found.
        let walk = try walkDown(from: past.belowFirst, below: past.first, to: generation, history: &history)
        past.prepend(newestFirst: walk.walked, below: walk.continues)
        if let bottom = walk.bottom { past.oldest = bottom }
        return past.location(of: generation)
    }

    /// Walks the chain from `start`, the commit page of generation `above - 1`, down to the
    /// commit of `target` or as far as the chain goes. Returns the commits found, newest
    /// first; the predecessor of the oldest found (nil if the walk stopped there); and the
    /// oldest generation the chain reaches, when the walk found the chain's end before
    /// `target`: no predecessor, a gap in generations (not a consecutive predecessor), or a
    /// predecessor whose file is gone.
    private func walkDown(
        from start: CommitLocation?, below above: UInt64, to target: UInt64, history: inout HistoryReader
    ) throws(StorageError) -> (walked: [PastCommit], continues: CommitLocation?, bottom: UInt64?) {
        var walked: [PastCommit] = []
        var next = start
        var expected = above - 1
        while expected >= max(target, 1) {
            guard let location = next else { return (walked, nil, expected + 1) }
            let commit: CommitRecord
            do throws(StorageError) {
                commit = try history.root(at: location).commit
            } catch .historyUnavailable {
                return (walked, nil, expected + 1)
            }
            guard commit.generation == expected else { return (walked, nil, expected + 1) }
            walked.append(PastCommit(commit, at: location))
            next = commit.previous
            expected -= 1
        }
        // Generation 1 is a store's first; nothing is below it.
        return (walked, next, expected == 0 ? 1 : nil)
    }
}
