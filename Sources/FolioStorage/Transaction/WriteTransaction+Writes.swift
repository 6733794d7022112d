// The writes of a write transaction: puts, removes and drops, each run outside other
// threads' statements, and an edit that fails part-way refusing all but a rollback.
extension WriteTransaction {
    /// Stores `value` under `key` in `tree` (creating the tree if needed). Returns true if
    /// the key already existed (its value is replaced).
    @discardableResult
    public func put(_ value: [UInt8], for key: [UInt8], in tree: String) throws(StorageError) -> Bool {
        let stored = try Self.stored(value, for: key, in: tree)
        return try outsideOtherStatements { () throws(StorageError) -> Bool in try putNow(stored, for: key, in: tree) }
    }

    /// Stores `value` under `key` in `tree` *blind*: the caller learns nothing of the tree
    /// (not even whether the key existed), so the write is no read of it. If only blind
    /// writes touch `tree` in this transaction, a commit made meanwhile that changed the
    /// tree does not conflict: this transaction's writes are replayed onto the newer tree
    /// at its commit, and win (they commit later). A read of the tree through this
    /// transaction, before or after, makes every write of it count as read-write again.
    package func putBlind(_ value: [UInt8], for key: [UInt8], in tree: String) throws(StorageError) {
        let stored = try Self.stored(value, for: key, in: tree)
        _ = try outsideOtherStatements { () throws(StorageError) -> Bool in
            try putNow(stored, for: key, in: tree, blind: true)
        }
    }

    /// Removes `key` from `tree` blind (see ``putBlind(_:for:in:)``).
    package func removeBlind(_ key: [UInt8], from tree: String) throws(StorageError) {
        _ = try outsideOtherStatements { () throws(StorageError) -> Bool in try removeNow(key, from: tree, blind: true)
        }
    }

    /// `value` as a leaf stores it, once the tree's name and the sizes are checked.
    private static func stored(_ value: [UInt8], for key: [UInt8], in tree: String) throws(StorageError) -> LeafValue {
        try Self.validate(treeName: tree)
        guard key.count <= StorageLimits.maximumKeyLength else {
            throw .keyTooLarge(length: key.count, maximum: StorageLimits.maximumKeyLength)
        }
        guard value.count <= StorageLimits.maximumValueLength else {
            throw .valueTooLarge(length: value.count, maximum: StorageLimits.maximumValueLength)
        }
        return value.count > StorageLimits.inlineValueLimit ? .pendingOverflow(value) : .inline(value[...])
    }

    private func putNow(
        _ stored: LeafValue, for key: [UInt8], in tree: String, blind: Bool = false
    ) throws(StorageError) -> Bool {
        try withContents { (contents) throws(StorageError) -> Bool in
            let state = try self.tree(tree, in: contents, blind: blind)
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
            if blind { state.noteBlindWrite(key) }
            if contents.mayCompactChanges { state.compactChangesIfLarge() }
            try spillIfOverBudget(contents, tree: state, keys: 1, bytes: key.count + stored.byteCount)
            return previous != nil
        }
    }

    /// Removes `key` from `tree`. Returns true if it was there.
    @discardableResult
    public func remove(_ key: [UInt8], from tree: String) throws(StorageError) -> Bool {
        try outsideOtherStatements { () throws(StorageError) -> Bool in try removeNow(key, from: tree) }
    }

    private func removeNow(_ key: [UInt8], from tree: String, blind: Bool = false) throws(StorageError) -> Bool {
        try withContents { (contents) throws(StorageError) -> Bool in
            let state = try self.tree(tree, in: contents, blind: blind)
            let editor = self.editor(contents)
            contents.statement?.touch(state)
            // Noted even when the key is absent: at a commit replayed onto a newer tree, the
            // key may be there, and the removal must remove it.
            if blind { state.noteBlindWrite(key) }
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
            try spillIfOverBudget(contents, tree: state, keys: 1, bytes: key.count)
            return true
        }
    }

    /// Removes every key of `tree` in `range`; returns how many were removed.
    ///
    /// The keys are read with a cursor and removed in batches (the engine's sorted batch
    /// write): one pass over the tree per batch, each emptied page dropped rather than merged.
    @discardableResult
    public func removeAll(in range: KeyRange, from tree: String) throws(StorageError) -> Int {
        var cursor = self.cursor(in: tree, range: range)
        var removed = 0
        var batch: [(key: [UInt8], value: [UInt8]?)] = []
        // Bounded, so a huge range never holds all its keys in memory at once.
        let batchSize = 4_096
        while true {
            let key = try cursor.nextKey()
            if let key { batch.append((key, nil)) }
            if batch.count == batchSize || (key == nil && !batch.isEmpty) {
                removed += try apply(batch, to: tree).existed.count(where: { $0 })
                batch.removeAll(keepingCapacity: true)
            }
            if key == nil { return removed }
        }
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

    /// Runs an edit of `tree`. If it throws after changing a node, the tree may be
    /// half-edited, so the transaction refuses everything but a rollback (to a savepoint
    /// from before, or whole); if it throws before, nothing changed (the page copies it made
    /// are dropped, and so is their count in `freedBytes`).
    func edit<R>(
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

    /// Runs a write. On the thread running the current statement, at once (it is part of
    /// that statement); on any other thread, once no statement runs, holding the statement
    /// lock, so that it is neither interleaved with another thread's statement nor undone
    /// by its failure.
    func outsideOtherStatements<R>(_ body: () throws(StorageError) -> R) throws(StorageError) -> R {
        if statementThread.load(ordering: .acquiring) == currentThreadIdentity() { return try body() }
        return try statementLock.withLock { _ throws(StorageError) -> R in try body() }
    }

    static func validate(treeName name: String) throws(StorageError) {
        let length = name.utf8.count
        guard length > 0, length <= 255 else { throw .invalidTreeName(name: name) }
    }
}
