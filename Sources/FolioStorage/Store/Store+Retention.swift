// Retention of replaced snapshot files: which are kept or removed when a writer opens, and
// when kept ones go (by time, count and bytes; Docs/Durability.md §3, Docs/Format.md §17).

extension Store {
    /// At writer open: snapshot files numbered above the current one are kept, never
    /// removed, unless they are provably an abandoned compaction's output: a file whose
    /// header does not name it (a compaction killed before its header was written; no root
    /// can ever have opened it). A newer complete file is either an interrupted compaction's
    /// copy or, after an open at root slot 1 (slot 0 damaged), the file holding slot 0's
    /// generation: the two cannot be told apart once a commit has rewritten the root file,
    /// so each open keeps it and says so in the log (Docs/Durability.md §3). Compaction
    /// numbers its file above all of them. Of the older files, the newest (the file the
    /// last compaction replaced, which root slot 1 may name) is kept for the retention
    /// grace period, for readers in other processes and for history replay; older ones go
    /// at once, so that short-lived writers (a `folio compact`) do not leave replaced files
    /// behind. Readers pinned to a removed file keep reading it through their open
    /// descriptor; a reader opening a removed file re-reads the root.
    func retireStaleSnapshots(current: UInt64, openedFromPreviousSlot: Bool) throws(StorageError) {
        let deadline = ContinuousClock.now + options.retention.gracePeriod
        var retired: [RetiredSnapshot] = []
        let numbers = try fileSystem.contentsOfDirectory(layout.snapshots).compactMap(StoreLayout.snapshotNumber(fromName:))
        let newestOlder = numbers.filter { $0 < current }.max()
        for number in numbers where number != current {
            let name = StoreLayout.snapshotName(number)
            if number > current && openedFromPreviousSlot {
                options.log("keeping \(name): it may hold the generation of the damaged root slot")
            } else if number > current {
                if hasSnapshotHeader(number) {
                    options.log("keeping \(name), newer than the current file \(StoreLayout.snapshotName(current)): "
                                + "an interrupted compaction's copy or the generation of a damaged root slot; remove it by hand once checked")
                } else {
                    options.log("removing \(name), left by an interrupted compaction before its header")
                    try fileSystem.remove(layout.snapshot(number))
                }
            } else if number == newestOlder {
                // Its length is not known without opening it (no stat at open): it counts
                // as 0 against the byte limit, and goes by time and by count.
                retired.append(RetiredSnapshot(number: number, removeAfter: deadline, bytes: 0))
            } else {
                try fileSystem.remove(layout.snapshot(number))
            }
        }
        state.withLock { $0.writer?.retired = retired }
        removeExpiredSnapshots()
    }

    /// True if snapshot file `number` starts with a valid header naming it. I/O errors
    /// count as true: only a file read and found wrong is provably no snapshot.
    private func hasSnapshotHeader(_ number: UInt64) -> Bool {
        do throws(StorageError) {
            let file = try Store.openSnapshot(number, layout: layout, fileSystem: fileSystem, writable: false)
            file.handle.close()
            return true
        } catch {
            if case .corruption = error { return false }
            return true
        }
    }

    /// Removes retired snapshot files whose grace period has passed, then the oldest beyond
    /// the retention's file limit and beyond its byte limit. `retired` is in retirement
    /// order, so the newest (the file root slot 1 may name) is the last to go: see
    /// Docs/Format.md §17.
    func removeExpiredSnapshots() {
        let now = ContinuousClock.now
        let retention = options.retention
        // Every commit calls this while it holds the writer slot: when nothing is due (no
        // retired file, or none past its grace period or the limits) it returns without the
        // root file lock, which a sync in flight holds. Waiting for it would keep the next
        // transaction from appending while the previous one's sync runs (group commit,
        // Docs/Durability.md §1.4). Only writer-slot holders change `retired`.
        let due = state.withLock { state -> Bool in
            guard let writer = state.writer, !writer.retired.isEmpty else { return false }
            let waiting = writer.retired.filter { $0.removeAfter > now }
            let bytes = waiting.reduce(UInt64(0)) { $0.addingReportingOverflow($1.bytes).partialValue }
            return waiting.count < writer.retired.count || waiting.count > retention.maximumRetainedFiles
                || bytes > retention.maximumRetainedBytes
        }
        guard due else { return }
        // Taken before `state` (lock order: rootFileLock, then state).
        let namedBySlots = rootFileLock.withLock { $0?.namedFiles ?? [] }
        let expired = state.withLock { state -> [UInt64] in
            guard var writer = state.writer else { return [] }
            var expired = writer.retired.filter { $0.removeAfter <= now }.map(\.number)
            writer.retired.removeAll { $0.removeAfter <= now }
            // Beyond the count limit, the oldest go, except a file a root slot names (below).
            var excess = writer.retired.count - retention.maximumRetainedFiles
            if excess > 0 {
                writer.retired.removeAll { file in
                    guard excess > 0, !namedBySlots.contains(file.number) else { return false }
                    excess -= 1
                    expired.append(file.number)
                    return true
                }
            }
            // Invariant: a file a root slot names is never removed by the count or byte limit:
            // recovery may start from either slot (a fallback from a damaged newest slot
            // opens it). Format version 2 compaction writes its root into both slots, so this
            // protects a version 1 store's slot 1 and a compaction interrupted between its two
            // slot writes.
            var total = writer.retired.reduce(UInt64(0)) { $0.addingReportingOverflow($1.bytes).partialValue }
            var kept: [RetiredSnapshot] = []
            for file in writer.retired {  // oldest first
                if total > retention.maximumRetainedBytes && !namedBySlots.contains(file.number) {
                    total -= file.bytes
                    expired.append(file.number)
                } else {
                    kept.append(file)
                }
            }
            writer.retired = kept
            state.writer = writer
            return expired
        }
        removeRetiredSnapshots(expired)
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
