/// Savepoints and statements: rolling back part of a write transaction.
///
/// Statements (``WriteTransaction/atomically(_:)``) and savepoints undo differently,
/// because they are used differently. A statement is one datastore call, run thousands of
/// times in a loop and almost always successful, so it must cost next to nothing: it
/// keeps a logical undo log (each key's previous value, `StatementUndo`) and, if it
/// throws, writes the previous values back. That needs the trees to be consistent, which
/// every error but one leaves them: a page that cannot be read in the middle of an edit
/// (I/O error, corruption). Then, as SQLite does for I/O errors inside a statement, the
/// transaction refuses everything but a rollback (`StorageError.transactionAborted(cause:)`):
/// to a savepoint taken before, or whole.
///
/// How a rollback to a savepoint is exact whatever failed: taking a
/// savepoint records each touched tree's root reference and counters, and bumps the
/// transaction's *epoch*. Every mutable node created before that is now frozen: an edit
/// copies it (as it copies a committed page) instead of changing it in place
/// (`TreeEditor.makeMutable`). So the nodes a savepoint references are never changed
/// while it lives, and rolling back is putting its root references back, whatever failed
/// part-way through an edit. Releasing a savepoint lowers the frozen boundary again, so a
/// loop of statements copies each node on its path at most once per statement.
///
/// Cursors freeze the same way, for good (``WriteTransaction/snapshot()``): what they iterate never changes.
public struct Savepoint: Sendable, Hashable {
    let id: UInt64
    /// The transaction it belongs to: a savepoint of another transaction is not one of ours.
    let transaction: ObjectIdentifier
}

/// One live savepoint: what each tree looked like when it was taken.
struct SavedState {
    let id: UInt64
    /// Nodes created before this epoch are frozen while the savepoint lives.
    let level: UInt64
    let trees: [[UInt8]: TreeState.Saved]
    let broken: String?
}

extension WriteTransaction {
    /// Marks the transaction's current state, to return to with ``rollback(to:)`` (SQL's
    /// SAVEPOINT). Savepoints nest; release one with ``release(_:)`` when it is no longer
    /// needed (keeping one alive makes later edits copy the nodes it references).
    public func savepoint() throws(StorageError) -> Savepoint {
        try savepoint { _ in }
    }

    /// ``savepoint()``, then `registered` with it before any statement of another task can
    /// run: a caller that must know of every write after the savepoint (to tell whether
    /// rolling back to it would undo another task's) records the savepoint there.
    public func savepoint(_ registered: (Savepoint) -> Void) throws(StorageError) -> Savepoint {
        try statementLock.withLock { _ throws(StorageError) -> Savepoint in
            let savepoint = try withContents { (contents) throws(StorageError) -> Savepoint in takeSavepoint(contents) }
            registered(savepoint)
            return savepoint
        }
    }

    /// Puts the transaction back as it was when `savepoint` was taken: every write since is
    /// undone, even one that failed part-way, whichever thread made it. The savepoint and
    /// any taken after it are gone. Returns false, doing nothing, if the savepoint is gone
    /// (a rollback to an earlier one removed it), belongs to another transaction, or the
    /// transaction is finished: then the writes since it cannot be undone alone, and a
    /// caller that needed that should ``abort(because:)``.
    @discardableResult
    public func rollback(to savepoint: Savepoint) -> Bool {
        rollback(to: savepoint, after: {})
    }

    /// ``rollback(to:)``, with `first` run just before it, with no statement of another
    /// task in between (what `first` finds about the writes since the savepoint is then
    /// exactly what the rollback undoes).
    @discardableResult
    public func rollback(to savepoint: Savepoint, after first: () -> Void) -> Bool {
        statementLock.withLock { _ in
            first()
            return guarded.withLock { _ in
                guard !contents.finished, savepoint.transaction == ObjectIdentifier(self) else { return false }
                return restore(savepoint, in: contents)
            }
        }
    }

    /// Makes the transaction refuse everything but a rollback
    /// (`StorageError.transactionAborted(cause:)`), to a savepoint taken before now or
    /// whole: for a caller that finds it cannot undo part of it exactly.
    public func abort(because cause: String) {
        guarded.withLock { _ in
            if !contents.finished && contents.broken == nil { contents.broken = cause }
        }
    }

    /// Forgets `savepoint`, keeping every write. Savepoints taken after it stay (a task
    /// sharing the transaction may still roll back to its own). Does nothing if it is gone.
    public func release(_ savepoint: Savepoint) {
        statementLock.withLock { _ in
            guarded.withLock { _ in
                if let position = contents.freezing.savepoints.firstIndex(where: { $0.id == savepoint.id }) {
                    contents.freezing.savepoints.remove(at: position)
                }
            }
        }
    }

    /// Runs `body` as one statement: if it throws, every write it made is undone and the
    /// transaction is exactly as before the call (SQLite's statement rollback); if it
    /// returns, its writes stay. Statements of tasks that share the transaction run one at
    /// a time, never interleaved. `body` must not call ``atomically(_:)``,
    /// ``exclusively(_:)``, ``savepoint()``, ``rollback(to:)``, ``release(_:)`` or
    /// ``commit()``: they wait for the statement to end.
    ///
    /// If `body` fails because a page could not be read in the middle of an edit, its
    /// writes cannot be undone key by key: the transaction then refuses everything but a
    /// rollback (`StorageError.transactionAborted(cause:)`), to a savepoint taken before
    /// the statement, or whole.
    public func atomically<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try exclusively { () throws(Failure) -> Result in
            guarded.withLock { _ in
                compactChangeLogsIfAllowed(contents)
                // One undo log per transaction, emptied and reused (keeping its capacity).
                contents.statementLog.reset()
                contents.statement = contents.statementLog
            }
            do throws(Failure) {
                let result = try body()
                guarded.withLock { _ in contents.statement = nil }
                return result
            } catch {
                guarded.withLock { _ in undoStatement(contents) }
                throw error
            }
        }
    }

    /// Runs `body` while no statement of another task runs (reads that must see whole
    /// statements). The same restrictions as ``atomically(_:)`` apply to `body`.
    public func exclusively<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try statementLock.withLock { _ throws(Failure) -> Result in
            statementThread.store(currentThreadIdentity(), ordering: .releasing)
            defer { statementThread.store(0, ordering: .releasing) }
            return try body()
        }
    }

    // MARK: Machinery (callers hold `guarded`)

    /// Compacts the trees' change logs if they doubled, when no savepoint or statement
    /// remembers their lengths: at the start of a statement or of a savepoint (inside
    /// `perform`, the only moments when none is live).
    private func compactChangeLogsIfAllowed(_ contents: Contents) {
        guard contents.mayCompactChanges else { return }
        for tree in contents.trees.values { tree.compactChangesIfLarge() }
    }

    private func takeSavepoint(_ contents: Contents) -> Savepoint {
        compactChangeLogsIfAllowed(contents)
        contents.freezing.epoch += 1
        let id = contents.freezing.nextSavepoint
        contents.freezing.nextSavepoint += 1
        var trees: [[UInt8]: TreeState.Saved] = [:]
        trees.reserveCapacity(contents.trees.count)
        for (name, tree) in contents.trees { trees[name] = tree.saved() }
        contents.freezing.savepoints.append(
            SavedState(id: id, level: contents.freezing.epoch, trees: trees, broken: contents.broken))
        return Savepoint(id: id, transaction: ObjectIdentifier(self))
    }

    @discardableResult
    private func restore(_ savepoint: Savepoint, in contents: Contents) -> Bool {
        guard let position = contents.freezing.savepoints.firstIndex(where: { $0.id == savepoint.id }) else {
            return false
        }
        let saved = contents.freezing.savepoints[position]
        contents.freezing.savepoints.removeSubrange(position...)
        for (name, tree) in contents.trees {
            if let state = saved.trees[name] {
                tree.restore(state)
            } else {
                // First touched after the savepoint: as it was in the base generation.
                contents.trees[name] = nil
            }
        }
        contents.recent = []
        contents.broken = saved.broken
        return true
    }

    /// Writes back what the failed statement changed, newest first, then its trees'
    /// counters. Caller holds `guarded`.
    private func undoStatement(_ contents: Contents) {
        guard let statement = contents.statement else { return }
        contents.statement = nil
        guard !contents.finished, contents.broken == nil else { return }
        let editor = self.editor(contents)
        do throws(StorageError) {
            for entry in statement.entries.reversed() {
                switch entry {
                case .put(let tree, let key, let previous?), .remove(let tree, let key, let previous):
                    // The value the statement wrote goes: a page once a spill wrote it.
                    if let written = try editor.put(key, previous, in: tree) { editor.release(written, in: tree) }
                    // A committed (or spilled) value put back is live again (its release counted it).
                    if case .overflow(let address) = previous { tree.reclaim(address) }
                case .put(let tree, let key, nil):
                    if let written = try editor.remove(key, in: tree) { editor.release(written, in: tree) }
                case .drop(let tree, let before):
                    tree.root = before.root
                    tree.freedBytes = before.freedBytes
                    tree.spilledLiveBytes = before.spilledLiveBytes
                }
            }
        } catch {
            contents.broken = "undoing a failed statement failed: \(error)"
            return
        }
        // Pages the statement copied stay replaced by their copies (the trees reference the
        // copies now), so `freedBytes` keeps counting them; everything else is as before.
        for (tree, saved) in statement.touched { tree.restoreCounters(saved) }
    }

    /// Freezes every node that exists now, for good, so a reader of the current state
    /// never sees a later write. Caller holds `guarded`.
    func freezeForReaders(_ contents: Contents) {
        contents.freezing.epoch += 1
        contents.freezing.cursorFloor = contents.freezing.epoch
    }
}

/// How to undo the running statement: the previous value of every key it changed, in
/// order, and the counters of every tree it touched as they were before it.
///
/// Its stored properties are `@exclusivity(unchecked)`, as TreeState's are and for the same
/// reason: only the thread holding the transaction's lock touches them.
final class StatementUndo {
    enum Entry {
        /// `key` was put; `previous` is the value it replaced (nil: it was new).
        case put(TreeState, key: [UInt8], previous: LeafValue?)
        /// `key` was removed; `removed` was its value.
        case remove(TreeState, key: [UInt8], removed: LeafValue)
        /// The tree was dropped; `before` is how it was just before.
        case drop(TreeState, before: TreeState.Saved)
    }

    @exclusivity(unchecked) private(set) var entries: [Entry] = []
    @exclusivity(unchecked) private(set) var touched: [(TreeState, TreeState.Saved)] = []

    /// Empties the log for the next statement, keeping its storage.
    func reset() {
        entries.removeAll(keepingCapacity: true)
        touched.removeAll(keepingCapacity: true)
    }

    /// Records `tree`'s counters the first time the statement touches it.
    func touch(_ tree: TreeState) {
        // A statement touches few trees (a record tree and its indexes): a scan is cheapest.
        for (known, _) in touched where known === tree { return }
        touched.append((tree, tree.saved()))
    }

    func log(_ entry: Entry) { entries.append(entry) }
}
