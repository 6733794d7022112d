/// Large transactions keep their changed pages out of memory (Docs/Architecture.md
/// invariant 5): once the memory a transaction took since its last spill passes
/// ``StoreOptions/transactionSpillBytes`` (``SpillState/residentBytes``), every changed node
/// is written to the snapshot file past the committed end, and the trees reference those
/// pages instead of holding the nodes.
///
/// Why it is safe: the spilled pages are the first part of the transaction's run (Docs/
/// Format.md §7): they are written where the commit's run begins, their bytes enter the
/// run checksum (carried in ``SpillState``), and the commit appends the rest of the run
/// after them. Nothing references them until the commit's root slot names the run, so a
/// rollback or a crash leaves bytes past the committed end that no complete run covers,
/// which the next commit writes over (as for any abandoned run). A spilled page that a later
/// edit replaces is dead within the run. Spilling holds `writeSection`, like a commit, so it
/// never writes into a store that was closed (and perhaps opened by another writer).
///
/// Concurrent transactions (Docs/Architecture.md invariant 7): a run must begin at the
/// committed end, and a spill begins one, so the first spill takes the end of the file
/// (the store's `tailOwner`) until the transaction ends. Meanwhile no other transaction
/// may spill or commit: each throws a retryable `writeConflict` rather than wait (the
/// engine never blocks; the `Folio` layer retries it alone, after the spiller). The spill
/// begins at the tip's committed end, not the base's: commits made since the base lie
/// between them.
struct SpillState {
    /// Where the next spilled page goes; nil until the first spill (then the run starts at
    /// the tip's committed length).
    var end: UInt64?
    /// The generation the spilled run follows (the tip at the first spill); the commit
    /// follows it too.
    var over: UInt64?
    /// The run checksum so far (pre-inverted), seeded with the base's chain value.
    var runningChecksum: UInt32 = 0
    /// What the transaction took in memory since the last spill, estimated (``resident(keys:bytes:)``
    /// for the changed keys, plus the pages copied into mutable nodes).
    var residentBytes = 0
    /// Spills so far.
    var count = 0

    /// Memory a changed key holds besides its key and value bytes: its key and value arrays'
    /// headers, its entry in a mutable node (a key slice and a value), and its change-log
    /// entry (measured on 64-bit Linux: about 150 bytes; rounded up).
    static let overheadPerChangedKey = 160

    /// The estimated memory of `keys` changed keys whose keys and values add up to `bytes`.
    static func resident(keys: Int, bytes: Int) -> Int {
        bytes + keys * overheadPerChangedKey
    }
}

extension WriteTransaction {
    /// Counts `keys` more changed keys of `tree`, whose keys and values add up to `bytes`,
    /// and the pages the edits copied into memory, and spills if the budget is passed.
    /// Caller holds `guarded`.
    func spillIfOverBudget(_ contents: Contents, tree: TreeState, keys: Int, bytes: Int) throws(StorageError) {
        contents.spill.residentBytes += SpillState.resident(keys: keys, bytes: bytes) + tree.takeCopiedPageBytes()
        guard let budget = store.options.transactionSpillBytes, contents.spill.residentBytes >= budget else { return }
        try spill(contents)
    }

    /// Writes every changed node of every tree past the committed end (or the last spill)
    /// and makes the trees reference the written pages. Caller holds `guarded`.
    func spill(_ contents: Contents) throws(StorageError) {
        TreeState.checkInvariants(of: contents.trees.values)
        try store.writeSection.withLock { _ throws(StorageError) in
            try store.checkWritable()
            let start: UInt64
            let checksum: UInt32
            let over: UInt64
            if let end = contents.spill.end, let spilledOver = contents.spill.over {
                start = end
                checksum = contents.spill.runningChecksum
                over = spilledOver
            } else {
                let tip: CommittedRoot
                do throws(StorageError) {
                    tip = try store.takeTail(for: ObjectIdentifier(self))
                } catch {
                    contents.conflicted = true
                    throw error
                }
                // The trees reference pages of the base's file; compaction (exclusive use)
                // cannot have switched files while this transaction is active.
                guard tip.file === base.file else { throw StorageError.writeConflict(trees: []) }
                start = tip.record.committedLength
                checksum = RunChecksum.seeded(with: try tip.file.chainValue(of: tip.record))
                over = tip.record.generation
            }
            var appender = PageAppender(
                continuingRunAt: start, runningChecksum: checksum, file: base.file,
                generation: over + 1, collectsCacheEntries: false, preallocates: false)
            // Only the places are needed, not copies of the pages: a spill writes up to the
            // whole budget, and copying it would double the memory it frees.
            appender.recordsPageOffsets = true
            // In name order, as the commit writes them (any order would do).
            for tree in contents.trees.values.sorted(by: {
                ByteOrder.compare(Array($0.name.utf8), Array($1.name.utf8)) < 0
            }) {
                guard case .mutable? = tree.root else { continue }
                let before = appender.bytesAppended
                tree.root = .stored(try appender.writeTree(tree.root))
                tree.spilledLiveBytes += appender.bytesAppended - before
            }
            try appender.flush()
            // A rolled-back transaction may have spilled (and read back) other pages at these
            // places: forget them (PageCache.remove).
            for offset in appender.pageOffsets {
                store.cache.remove(PageCache.Key(file: base.file.cacheIdentity, offset: offset))
            }
            contents.spill.end = start + appender.bytesAppended
            contents.spill.over = over
            contents.spill.runningChecksum = appender.runningChecksum ?? checksum
            contents.spill.count += 1
            base.file.allocatedLength = max(base.file.allocatedLength, start + appender.bytesAppended)
            store.counters.recordPagesWritten(appender.pageCount, bytes: Int(clamping: appender.bytesAppended))
        }
        contents.spill.residentBytes = 0
        for tree in contents.trees.values { _ = tree.takeCopiedPageBytes() }
    }
}

extension Store {
    /// Gives the end of the snapshot file to `transaction`, which is about to spill there,
    /// and returns the tip its run follows; throws a retryable `writeConflict` if another
    /// transaction holds it. Caller holds `writeSection`; the holder keeps it until it ends
    /// (``endTransaction(_:)``).
    func takeTail(for transaction: ObjectIdentifier) throws(StorageError) -> CommittedRoot {
        try state.withLock { (state) throws(StorageError) -> CommittedRoot in
            if let owner = state.writer?.tailOwner, owner != transaction { throw .writeConflict(trees: []) }
            state.writer?.tailOwner = transaction
            state.writer?.spilledSinceCatchUp = true
            return state.tip
        }
    }
}
