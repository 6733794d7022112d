import Synchronization

/// A write transaction: reads see its own writes; ``commit()`` makes them durable as one
/// generation; ``rollback()`` (or dropping it) discards them without a trace, since nothing
/// is written to disk before commit.
///
/// Several may run at once (optimistic concurrency, Docs/Architecture.md invariant 7). Each
/// reads the commit it began on (its base) and remembers every tree it read or wrote
/// (`TreeReads`). Its commit is appended after every commit made since, onto the newest
/// one, if none of them changed one of those trees; otherwise ``commit()`` throws
/// `StorageError.writeConflict(trees:)`, keeps nothing, and the work may be retried in a
/// new transaction. Transactions over disjoint trees therefore never conflict, and the
/// result of every set of committed transactions is that of running them one at a time in
/// commit order (serializable).
///
/// Trees are created by the first write into them and removed by ``dropTree(_:)``.
/// Reading a tree that does not exist finds nothing. The transaction is safe to use from
/// several threads, but its operations run one at a time.
///
/// Inside a transaction, ``savepoint()`` marks a state to return to with
/// ``rollback(to:)`` (SQL's SAVEPOINT), and ``atomically(_:)`` runs a group of operations
/// as one statement: all of it or, if it throws, none of it
/// (`WriteTransaction+Savepoint.swift`). Cursors iterate the state as of their creation
/// (``cursor(in:range:direction:)``, ``snapshot()``).
public final class WriteTransaction: @unchecked Sendable {
    // @unchecked: every access to `contents` happens inside `guarded.withLock`.
    let store: Store
    let guarded = Mutex<Void>(())
    /// Held for a whole statement (``atomically(_:)``), a savepoint operation and the
    /// commit, so that statements of concurrent tasks sharing this transaction never
    /// interleave. Always taken before `guarded`, never after.
    let statementLock = Mutex<Void>(())
    /// The thread holding `statementLock` for a statement or `exclusively` (0: none). A
    /// write from any other thread waits for the statement to end, so it never becomes part
    /// of another thread's statement (nor of its undo).
    let statementThread = Atomic<UInt>(0)
    let contents: Contents
    /// Every tree read or written, with the catalog entry the base has for it: what the
    /// commit checks against the tip.
    let reads = TreeReads()

    init(store: Store, base: CommittedRoot) {
        self.store = store
        contents = Contents(base: base)
    }

    /// The commit this transaction reads, apart from its writes: the one it began on, or a
    /// newer one it advanced to (``advanceToTip()``). Caller holds `guarded`.
    var base: CommittedRoot { contents.base }

    deinit {
        if !contents.finished {
            store.endTransaction(ObjectIdentifier(self), abandoningSpill: contents.spill.end != nil)
        }
    }

    /// The generation this transaction would create if it committed on the commit it began
    /// on. With other transactions committing meanwhile, its commit takes the next
    /// generation after theirs: the generation it created is the committed
    /// ``CommitNotification/generation``.
    public var generation: UInt64 { guarded.withLock { _ in base.record.generation } + 1 }

    /// The generation this transaction began on: what its reads see, apart from its writes.
    public var baseGeneration: UInt64 { guarded.withLock { _ in base.record.generation } }

    /// A view of the generation the transaction began on (its tip, which in full durability
    /// may be newer than the store's published generation while its sync is pending).
    package var baseView: ReadView { guarded.withLock { _ in ReadView(root: base) } }

    /// Whether a spill found the end of the file held by another transaction: this one can
    /// only be rolled back, and its work retried (`StorageError.writeConflict(trees:)`).
    package var hasConflicted: Bool { guarded.withLock { _ in contents.conflicted } }

    func editor(_ contents: Contents) -> TreeEditor {
        TreeEditor(reader: base.reader, epoch: contents.freezing.epoch, mutableFrom: contents.freezing.mutableFrom)
    }

    func withContents<R>(_ body: (Contents) throws(StorageError) -> R) throws(StorageError) -> R {
        try guarded.withLock { _ throws(StorageError) -> R in
            if contents.finished { throw StorageError.transactionFinished }
            if let cause = contents.broken { throw StorageError.transactionAborted(cause: cause) }
            if contents.conflicted { throw StorageError.writeConflict(trees: []) }
            return try body(contents)
        }
    }

    /// The state of `tree` in this transaction, touched for a read or a write (`blind`: a
    /// blind write, which is no read: TreeReads).
    func tree(_ name: String, in contents: Contents, blind: Bool = false) throws(StorageError) -> TreeState {
        // A datastore write looks its trees up several times per record: compared as bytes
        // in place, without a generic walk over `String.UTF8View` or a copy of the name.
        var probe = name
        let recent = probe.withUTF8 { bytes -> TreeState? in
            for tree in contents.recent where tree.isNamed(bytes) { return tree }
            return nil
        }
        if let recent {
            if !blind && !recent.isRead { noteRead(recent) }
            return recent
        }
        let key = Array(name.utf8)
        let tree: TreeState
        if let known = contents.trees[key] {
            tree = known
            if !blind && !tree.isRead { noteRead(tree) }
        } else {
            let descriptor = try base.descriptor(of: name)
            tree = TreeState(name: name, descriptor: descriptor)
            tree.spillFloor = base.record.committedLength
            tree.changeRecordKeyLimit = max(1, store.options.changeRecordKeyLimit)
            tree.isRead = !blind
            contents.trees[key] = tree
            // Read or written from here on: the commit checks that no commit since the base
            // changed it, or replays it if it was only written blind (serializability,
            // TreeReads).
            reads.note(key, descriptor, read: !blind)
        }
        if contents.recent.count == 8 { contents.recent.removeFirst() }
        contents.recent.append(tree)
        return tree
    }

    /// Records that `tree`, touched already, is read through this transaction.
    private func noteRead(_ tree: TreeState) {
        tree.isRead = true
        reads.noteRead(Array(tree.name.utf8))
    }

    // MARK: Reads

    /// The value under `key` in `tree`, including this transaction's writes.
    public func get(_ key: [UInt8], in tree: String) throws(StorageError) -> [UInt8]? {
        try getInPlace(key, in: tree).map { Array($0) }
    }

    /// The value under `key` in `tree`, including this transaction's writes, as a slice of
    /// the bytes that hold it (no copy), or nil.
    package func getInPlace(_ key: [UInt8], in tree: String) throws(StorageError) -> ArraySlice<UInt8>? {
        try withContents { (contents) throws(StorageError) -> ArraySlice<UInt8>? in
            let state = try self.tree(tree, in: contents)
            guard let value = try base.reader.get(root: state.root, key: key) else { return nil }
            return try base.reader.resolve(value)
        }
    }

    /// Number of keys in `tree`, including this transaction's writes.
    public func count(in tree: String) throws(StorageError) -> UInt64 {
        try withContents { (contents) throws(StorageError) in try self.tree(tree, in: contents).count }
    }

    /// True if `tree` exists, including this transaction's creations and drops.
    public func treeExists(_ tree: String) throws(StorageError) -> Bool {
        try withContents { (contents) throws(StorageError) in try self.tree(tree, in: contents).exists }
    }

    /// A cursor over `range` of `tree` as it is now, with this transaction's writes so far.
    /// Later writes do not change what it returns: it iterates the state as of its
    /// creation (so a loop that updates the keys it iterates visits each key once). An
    /// error taking it (a finished transaction) is thrown by the cursor's first step.
    public func cursor(in tree: String, range: KeyRange = .all, direction: ScanDirection = .forward) -> Cursor {
        do throws(StorageError) {
            return try snapshot().cursor(in: tree, range: range, direction: direction)
        } catch {
            return Cursor(
                fetch: { _ throws(StorageError) in throw error }, resolve: { _ throws(StorageError) in throw error },
                range: range, direction: direction)
        }
    }

    /// Names of the trees that exist, including this transaction's changes, in order.
    public func treeNames() throws(StorageError) -> [String] {
        try withContents { (contents) throws(StorageError) -> [String] in
            reads.noteCatalog()
            var names = Set(try base.allDescriptors().map { Array($0.name.utf8) })
            for (name, state) in contents.trees {
                if state.exists { names.insert(name) } else { names.remove(name) }
            }
            return names.sorted { ByteOrder.compare($0, $1) < 0 }.map { String(decoding: $0, as: UTF8.self) }
        }
    }

    // MARK: Ending

    /// Commits the transaction as one new generation, durable before this returns (in
    /// ``Durability/full`` mode). On failure the store stays at its previous generation.
    @discardableResult
    public func commit() throws(StorageError) -> CommitNotification {
        try commitAppending().waitUntilDurable()
    }

    /// Step 1 of the commit: appends the run and frees the writer slot, so the next
    /// transaction can begin while this one's sync is pending (group commit). The commit
    /// is acknowledged only by ``AppendedCommit/waitUntilDurable()``.
    ///
    /// `generationAssigned` is called with the generation the commit creates (the next
    /// after every commit appended before it), under the store's write section, once the
    /// commit cannot fail and before anyone can see it: a caller keeping things in memory by
    /// generation (the key-value store's values) labels them exactly.
    package func commitAppending(
        generationAssigned: (UInt64) -> Void = { _ in }
    ) throws(StorageError) -> AppendedCommit {
        let notification: CommitNotification
        var changesRetention = false
        do throws(StorageError) {
            // The statement lock first: a statement of another task sharing this transaction
            // is never committed half-done.
            notification = try statementLock.withLock { _ throws(StorageError) -> CommitNotification in
                try withContents { (contents) throws(StorageError) -> CommitNotification in
                    contents.finished = true
                    TreeState.checkInvariants(of: contents.trees.values)
                    changesRetention = contents.trees[Self.retentionTree] != nil
                    return try store.commit(
                        trees: Array(contents.trees.values), base: base, reads: reads,
                        transaction: ObjectIdentifier(self), spill: contents.spill,
                        generationAssigned: generationAssigned)
                }
            }
        } catch {
            // A transaction that was already finished was ended already.
            if case .transactionFinished = error { throw error }
            let spilled = guarded.withLock { _ -> Bool in
                contents.finished = true
                return contents.spill.end != nil
            }
            store.endTransaction(ObjectIdentifier(self), abandoningSpill: spilled)
            throw error
        }
        // A commit that changed the declared history decides again which replaced files
        // it keeps (in startCompactionIfNeeded's removal check).
        if changesRetention { store.recheckHistoryRetention() }
        store.startCompactionIfNeeded()
        store.endTransaction(ObjectIdentifier(self))
        return AppendedCommit(store: store, notification: notification)
    }

    /// The tree that declares the store's history, as `contents.trees` names it.
    private static let retentionTree = Array(RetentionLayout.tree.utf8)

    /// Discards every change. Rolling back a finished transaction does nothing.
    public func rollback() {
        let (wasActive, spilled) = guarded.withLock { _ -> (Bool, Bool) in
            defer { contents.finished = true }
            return (!contents.finished, contents.spill.end != nil)
        }
        if wasActive { store.endTransaction(ObjectIdentifier(self), abandoningSpill: spilled) }
    }
}
