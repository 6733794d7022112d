import Synchronization

/// The store's one write transaction: reads see its own writes; ``commit()`` makes them
/// durable as one generation; ``rollback()`` (or dropping it) discards them without a
/// trace, since nothing is written to disk before commit.
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
    let base: CommittedRoot
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

    final class Contents {
        /// Keyed by the name's UTF-8 bytes, as the catalog compares names (see CommittedRoot).
        var trees: [[UInt8]: TreeState] = [:]
        /// The trees used most recently, checked before `trees`: a datastore write touches
        /// the same few trees over and over, and comparing a name's UTF-8 in place is
        /// cheaper than allocating and hashing its bytes.
        var recent: [TreeState] = []
        let catalog: TreeState
        var finished = false
        /// The epoch new mutable nodes are created in; bumped by every savepoint and cursor.
        var epoch: UInt64 = 0
        /// Nodes older than this epoch may be referenced by a cursor: frozen for good.
        var cursorFloor: UInt64 = 0
        /// Live savepoints, oldest first (their levels increase).
        var savepoints: [SavedState] = []
        var nextSavepoint: UInt64 = 1
        /// Set when an edit failed part-way (a page could not be read): the trees may be
        /// inconsistent, so nothing but a rollback is allowed until one restores a state
        /// from before the failure.
        var broken: String?
        /// The statement running (``atomically(_:)``): how to undo it.
        var statement: StatementUndo?
        /// The log `statement` points at while one runs.
        let statementLog = StatementUndo()
        /// Pages spilled so far (see WriteTransaction+Spill.swift).
        var spill = SpillState()

        /// The change logs may be compacted: no savepoint or statement counts their entries.
        var mayCompactChanges: Bool { savepoints.isEmpty && statement == nil }

        init(catalog: TreeState) { self.catalog = catalog }

        /// Mutable nodes below this epoch are frozen: a live savepoint or a cursor may
        /// reference them, so an edit copies them first.
        var mutableFrom: UInt64 { max(cursorFloor, savepoints.last?.level ?? 0) }
    }

    init(store: Store, base: CommittedRoot) {
        self.store = store
        self.base = base
        let catalogDescriptor = TreeDescriptor(root: base.record.catalogRoot, depth: 0, count: 0, bytes: 0)
        contents = Contents(catalog: TreeState(name: "", descriptor: catalogDescriptor))
    }

    deinit {
        if !contents.finished { store.endTransaction() }
    }

    /// The generation this transaction creates when it commits.
    public var generation: UInt64 { base.record.generation + 1 }

    func editor(_ contents: Contents) -> TreeEditor {
        TreeEditor(reader: base.reader, epoch: contents.epoch, mutableFrom: contents.mutableFrom)
    }

    func withContents<R>(_ body: (Contents) throws(StorageError) -> R) throws(StorageError) -> R {
        try guarded.withLock { _ throws(StorageError) -> R in
            if contents.finished { throw StorageError.transactionFinished }
            if let cause = contents.broken { throw StorageError.transactionAborted(cause: cause) }
            return try body(contents)
        }
    }

    /// Runs an edit of `tree`. If it throws after changing a node, the tree may be
    /// half-edited, so the transaction refuses everything but a rollback (to a savepoint
    /// from before, or whole); if it throws before, nothing changed (the page copies it made
    /// are dropped, and so is their count in `freedBytes`).
    private func edit<R>(
        _ contents: Contents, _ tree: TreeState, _ body: () throws(StorageError) -> R
    ) throws(StorageError) -> R {
        let freed = tree.freedBytes, spilled = tree.spilledLiveBytes
        tree.editChangedANode = false
        do throws(StorageError) {
            return try body()
        } catch {
            if tree.editChangedANode {
                contents.broken = "an edit of \(tree.name) failed part-way: \(error)"
            } else {
                tree.freedBytes = freed
                tree.spilledLiveBytes = spilled
            }
            throw error
        }
    }

    func tree(_ name: String, in contents: Contents) throws(StorageError) -> TreeState {
        for tree in contents.recent where tree.name.utf8.elementsEqual(name.utf8) { return tree }
        let key = Array(name.utf8)
        let tree: TreeState
        if let known = contents.trees[key] {
            tree = known
        } else {
            tree = TreeState(name: name, descriptor: try base.descriptor(of: name))
            tree.spillFloor = base.record.committedLength
            contents.trees[key] = tree
        }
        if contents.recent.count == 8 { contents.recent.removeFirst() }
        contents.recent.append(tree)
        return tree
    }

    /// Runs a write. On the thread running the current statement, at once (it is part of
    /// that statement); on any other thread, once no statement runs, holding the statement
    /// lock, so that it is neither interleaved with another thread's statement nor undone
    /// by its failure.
    private func outsideOtherStatements<R>(_ body: () throws(StorageError) -> R) throws(StorageError) -> R {
        if statementThread.load(ordering: .acquiring) == currentThreadIdentity() { return try body() }
        return try statementLock.withLock { _ throws(StorageError) -> R in try body() }
    }

    private static func validate(treeName name: String) throws(StorageError) {
        let length = name.utf8.count
        guard length > 0, length <= 255 else { throw .invalidTreeName(name: name) }
    }

    // MARK: Reads

    /// The value under `key` in `tree`, including this transaction's writes.
    public func get(_ key: [UInt8], in tree: String) throws(StorageError) -> [UInt8]? {
        try withContents { (contents) throws(StorageError) -> [UInt8]? in
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

    // MARK: Writes

    /// Stores `value` under `key` in `tree` (creating the tree if needed). Returns true if
    /// the key already existed (its value is replaced).
    @discardableResult
    public func put(_ value: [UInt8], for key: [UInt8], in tree: String) throws(StorageError) -> Bool {
        try Self.validate(treeName: tree)
        guard key.count <= StorageLimits.maximumKeyLength else {
            throw .keyTooLarge(length: key.count, maximum: StorageLimits.maximumKeyLength)
        }
        guard value.count <= StorageLimits.maximumValueLength else {
            throw .valueTooLarge(length: value.count, maximum: StorageLimits.maximumValueLength)
        }
        let stored: LeafValue = value.count > StorageLimits.inlineValueLimit ? .pendingOverflow(value) : .inline(value)
        return try outsideOtherStatements { () throws(StorageError) -> Bool in try putNow(stored, for: key, in: tree) }
    }

    private func putNow(_ stored: LeafValue, for key: [UInt8], in tree: String) throws(StorageError) -> Bool {
        try withContents { (contents) throws(StorageError) -> Bool in
            let state = try self.tree(tree, in: contents)
            let editor = self.editor(contents)
            contents.statement?.touch(state)
            let previous = try edit(contents, state) { () throws(StorageError) in try editor.put(key, stored, in: state)
            }
            contents.statement?.log(.put(state, key: key, previous: previous))
            state.exists = true
            state.isModified = true
            if let previous {
                editor.release(previous, in: state)
            } else {
                state.count += 1
            }
            state.recordChange(key, existed: previous != nil, existsNow: true)
            if contents.mayCompactChanges { state.compactChangesIfLarge() }
            try spillIfOverBudget(contents, adding: key.count + stored.byteCount)
            return previous != nil
        }
    }

    /// Removes `key` from `tree`. Returns true if it was there.
    @discardableResult
    public func remove(_ key: [UInt8], from tree: String) throws(StorageError) -> Bool {
        try outsideOtherStatements { () throws(StorageError) -> Bool in try removeNow(key, from: tree) }
    }

    private func removeNow(_ key: [UInt8], from tree: String) throws(StorageError) -> Bool {
        try withContents { (contents) throws(StorageError) -> Bool in
            let state = try self.tree(tree, in: contents)
            let editor = self.editor(contents)
            contents.statement?.touch(state)
            guard
                let removed = try edit(
                    contents, state, { () throws(StorageError) in try editor.remove(key, in: state) })
            else { return false }
            contents.statement?.log(.remove(state, key: key, removed: removed))
            editor.release(removed, in: state)
            state.count -= 1
            state.isModified = true
            state.recordChange(key, existed: true, existsNow: false)
            if contents.mayCompactChanges { state.compactChangesIfLarge() }
            try spillIfOverBudget(contents, adding: key.count)
            return true
        }
    }

    /// Removes every key of `tree` in `range`; returns how many were removed.
    @discardableResult
    public func removeAll(in range: KeyRange, from tree: String) throws(StorageError) -> Int {
        var cursor = self.cursor(in: tree, range: range)
        var removed = 0
        while let key = try cursor.nextKey() {
            if try remove(key, from: tree) { removed += 1 }
        }
        return removed
    }

    /// Removes `tree` and all its keys. Returns true if it existed.
    @discardableResult
    public func dropTree(_ tree: String) throws(StorageError) -> Bool {
        try outsideOtherStatements { () throws(StorageError) -> Bool in try dropTreeNow(tree) }
    }

    private func dropTreeNow(_ tree: String) throws(StorageError) -> Bool {
        try withContents { (contents) throws(StorageError) -> Bool in
            let state = try self.tree(tree, in: contents)
            guard state.exists else { return false }
            contents.statement?.touch(state)
            contents.statement?.log(.drop(state, before: state.saved()))
            state.root = nil
            state.count = 0
            // Every committed page of the tree becomes dead, whatever this transaction
            // already replaced of it.
            state.freedBytes = state.committedBytes
            state.spilledLiveBytes = 0
            state.exists = false
            state.wasDropped = true
            state.isModified = true
            state.forgetChanges()
            return true
        }
    }

    /// Names of the trees that exist, including this transaction's changes, in order.
    public func treeNames() throws(StorageError) -> [String] {
        try withContents { (contents) throws(StorageError) -> [String] in
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
    package func commitAppending() throws(StorageError) -> AppendedCommit {
        let notification: CommitNotification
        do throws(StorageError) {
            // The statement lock first: a statement of another task sharing this transaction
            // is never committed half-done.
            notification = try statementLock.withLock { _ throws(StorageError) -> CommitNotification in
                try withContents { (contents) throws(StorageError) -> CommitNotification in
                    contents.finished = true
                    TreeState.checkInvariants(of: contents.trees.values)
                    return try store.commit(
                        trees: Array(contents.trees.values), catalog: contents.catalog, base: base,
                        spill: contents.spill)
                }
            }
        } catch {
            // A transaction that was already finished never held the writer slot.
            if case .transactionFinished = error { throw error }
            guarded.withLock { _ in contents.finished = true }
            store.endTransaction()
            throw error
        }
        store.compactIfNeeded()
        store.endTransaction()
        return AppendedCommit(store: store, notification: notification)
    }

    /// Discards every change. Rolling back a finished transaction does nothing.
    public func rollback() {
        let wasActive = guarded.withLock { _ -> Bool in
            defer { contents.finished = true }
            return !contents.finished
        }
        if wasActive { store.endTransaction() }
    }
}
