// Which replaced snapshot files the history a store declares keeps (Docs/Format.md §17.1).
//
// A file is kept whole or removed whole, and the commit chain runs through the files in the
// order of their numbers (a compaction's file is numbered above every file before it, and
// its first commit follows the last commit of the file it replaced): so the generations a
// count or a duration keeps, a suffix of the chain, are in every file from the one holding
// the oldest of them on.

extension Store {
    /// Whether the newest generation declares any history kept (unreadable: yes).
    func declaresHistory() -> Bool {
        let newest = state.withLock { $0.tip }
        return (try? RetentionLayout.read(in: ReadView(root: newest)).keepsAnything) ?? true
    }

    /// The numbers of the files among `files` (replaced snapshot files, which the caller
    /// would otherwise remove, and their lengths) that the history declared in the newest
    /// generation keeps at `now` (microseconds since 1970); and, for a byte budget, the
    /// lengths of the files whose length was not known (0: retired at open, which reads no
    /// file's length), read from the files.
    ///
    /// If the declaration cannot be read or the chain cannot be walked, every file is kept
    /// and the failure logged: history removed by mistake does not come back, while a file
    /// kept by mistake goes at a later check.
    func filesKeptForHistory(
        _ files: [RetiredSnapshot], now: UInt64
    ) -> (kept: Set<UInt64>, sizes: [UInt64: UInt64]) {
        guard !files.isEmpty else { return ([], [:]) }
        // The tip: this writer's newest commit, durable or about to be (full durability
        // publishes after the sync), so that the commit that changed the declaration acts
        // on it. Should that commit never become durable, what its declaration let go was
        // history its caller asked to let go.
        // The count is of durable generations (the published one and older): a tip whose
        // sync fails, or a power cut before it, must not have let go a generation the store
        // then needs to keep the count.
        let (newest, durable) = state.withLock { ($0.tip, $0.current.record.generation) }
        do throws(StorageError) {
            let history = try RetentionLayout.read(in: ReadView(root: newest))
            guard history.keepsAnything else { return ([], [:]) }
            // Lengths not known (files retired at open): read, for the budget and to pass by
            // header-only files (a reclaimed copy, Store+Retention.swift), which hold no
            // generation.
            var sizes: [UInt64: UInt64] = [:]
            for file in files where file.bytes == 0 { sizes[file.number] = snapshotHeader(file.number)?.length }
            let empty = Set(sizes.filter { $0.value == UInt64(SnapshotHeader.size) }.keys)
            let numbers = Set(files.map(\.number))
            var kept = try past.withLock { (past) throws(StorageError) -> Set<UInt64> in
                past.follow(newest)
                var walk = HistoryWalk(store: self, newest: newest)
                var kept = Set<UInt64>()
                // Every file from `floor` on holds generations a count or a duration keeps.
                var floor: UInt64?
                if let count = history.generations {
                    floor = try walk.file(from: durable > count ? durable - count + 1 : 1, &past)
                }
                if let duration = history.duration {
                    let horizon = try walk.oldestGeneration(committedSince: now > duration ? now - duration : 0, &past)
                    floor = min(floor ?? .max, try walk.file(from: horizon, &past))
                }
                if let floor { kept.formUnion(numbers.filter { $0 >= floor }) }
                return kept
            }
            // A checkpoint names its commit page, which past reads find there however much of
            // the chain between it and the newest is gone.
            kept.formUnion(try heldCheckpoints(in: ReadView(root: newest)).map(\.location.fileNumber))
            if let budget = history.bytes {
                // Newest first, while they fit: the budget keeps the most recent past.
                var total: UInt64 = 0
                for file in files.sorted(by: { $0.number > $1.number }) {
                    let sum = total.addingReportingOverflow(sizes[file.number] ?? file.bytes)
                    guard !sum.overflow, sum.partialValue <= budget else { break }
                    total = sum.partialValue
                    kept.insert(file.number)
                }
            }
            return (kept.intersection(numbers).subtracting(empty), sizes)
        } catch {
            let names = files.map { StoreLayout.snapshotName($0.number) }.joined(separator: ", ")
            options.log("keeping \(names): could not find which the store's declared history keeps: \(error)")
            return (Set(files.map(\.number)), [:])
        }
    }
}

/// The commit chain from one newest root, as retention asks about it.
private struct HistoryWalk {
    let store: Store
    let newest: CommittedRoot
    var reader: HistoryReader

    init(store: Store, newest: CommittedRoot) {
        self.store = store
        self.newest = newest
        reader = HistoryReader(store: store, newest: newest, generation: 1, held: nil)
    }

    /// The file of `generation`'s commit, or nil if the chain does not reach it.
    private mutating func file(
        holding generation: UInt64, _ past: inout PastGenerations
    ) throws(StorageError) -> UInt64? {
        if generation >= newest.record.generation { return newest.file.number }
        return try store.find(generation, in: &past, newest: newest, reading: &reader)?.location.fileNumber
    }

    /// The file of `generation`'s commit, or of the oldest the chain reaches if it does not
    /// reach that one.
    mutating func file(from generation: UInt64, _ past: inout PastGenerations) throws(StorageError) -> UInt64 {
        if let file = try file(holding: generation, &past) { return file }
        let oldest = try store.oldest(&past, newest: newest, reading: &reader)
        return try file(holding: oldest, &past) ?? newest.file.number
    }

    /// When `generation` was committed (nil if the chain does not reach it).
    private mutating func timestamp(
        of generation: UInt64, _ past: inout PastGenerations
    ) throws(StorageError)
        -> UInt64?
    {
        if generation >= newest.record.generation { return newest.record.timestamp }
        return try store.find(generation, in: &past, newest: newest, reading: &reader)?.timestamp
    }

    /// The oldest generation committed at or after `cutoff` (the newest if none is), or the
    /// oldest the chain reaches if all it reaches are. Commit times never decrease along the
    /// chain (a commit's time is at least its predecessor's), so the walk goes down in
    /// doubling steps until it passes the cutoff, then halves the last step: it reads about
    /// as many commits as the duration holds, each once, and remembers them for past reads.
    mutating func oldestGeneration(
        committedSince cutoff: UInt64, _ past: inout PastGenerations
    ) throws(StorageError)
        -> UInt64
    {
        // `above` was committed at or after the cutoff (or is the newest); `below` before it.
        var above = newest.record.generation
        var step: UInt64 = 64
        var below: UInt64
        while true {
            guard above > 1 else { return above }
            let probe = above > step ? above - step : 1
            guard let time = try timestamp(of: probe, &past) else {
                let oldest = try store.oldest(&past, newest: newest, reading: &reader)
                guard oldest < above, let time = try timestamp(of: oldest, &past) else { return above }
                if time >= cutoff { return oldest }
                below = oldest
                break
            }
            if time < cutoff {
                below = probe
                break
            }
            above = probe
            step = step.multipliedReportingOverflow(by: 2).overflow ? step : step * 2
        }
        while above - below > 1 {
            let middle = below + (above - below) / 2
            // Not found although the chain reaches it (a walk keeps at most
            // PastGenerations.capacity commits): the older end, which keeps more.
            guard let time = try timestamp(of: middle, &past) else { return below }
            if time >= cutoff { above = middle } else { below = middle }
        }
        return above
    }
}
