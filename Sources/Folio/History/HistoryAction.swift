import Foundation
import FolioStorage

/// A transaction as undo and redo see it: the commit that made it, its name, and when.
public struct HistoryAction: Sendable, Equatable {
    /// The commit's token.
    public var token: ObservationToken
    /// The name it was performed with (``Persistence/perform(named:_:)``), if any.
    public var name: String?
    /// When it was committed.
    public var date: Date
}

/// The actions undo and redo would take, read from the commits along the chain.
enum ActionHistory {
    /// What a commit was, for undo and redo.
    enum Role {
        /// A transaction of the app's (or a redo, which acts again): undo reverts it.
        case action
        /// It reverted the action of this generation.
        case undo(UInt64)
        /// It reverted the undo commit of this generation.
        case redo(UInt64)
        /// A datastore's preparation (its catalog entry, index builds and drops, in a
        /// transaction of its own or in the first transaction that used the datastore):
        /// no action, and no commit before it can be reverted by writing back bytes (its
        /// indexes were built from them).
        case preparation
        /// The store's creation, or a compaction: passed by.
        case other
    }

    static func role(of commit: LoggedCommit, in store: Store, from view: ReadView?) throws(StorageError) -> Role {
        guard commit.kind == .transaction else { return .other }
        if commit.changes.trees.contains(where: { $0.tree == DatastoreLayout.catalogTree })
            || !commit.changes.droppedTrees.isEmpty
        {
            return .preparation
        }
        // Declaring history or a checkpoint changes no data: nothing to undo.
        if commit.changes.trees.contains(where: { $0.tree == RetentionLayout.tree }),
            commit.changes.trees.allSatisfy({ $0.tree == RetentionLayout.tree || $0.tree == HistoryLayout.tree })
        {
            return .other
        }
        for (key, role) in [(HistoryLayout.undo, Role.undo), (HistoryLayout.redo, Role.redo)]
        where commit.changed(key, in: HistoryLayout.tree) {
            let past = try Self.generation(commit.generation, in: store, from: view)
            if let target = HistoryLayout.decode(try past.get(key, in: HistoryLayout.tree)) { return role(target) }
        }
        return .action
    }

    /// Generation `generation` along the chain of `view` (the newest published if nil).
    static func generation(_ generation: UInt64, in store: Store, from view: ReadView?) throws(StorageError) -> ReadView
    {
        if let view { return try store.read(at: generation, in: view) }
        return try store.read(at: generation)
    }

    /// The action `commit` made, with its name.
    static func action(
        _ commit: LoggedCommit, in store: Store, from view: ReadView?
    ) throws(StorageError)
        -> HistoryAction
    {
        var name: String?
        if commit.changed(HistoryLayout.name, in: HistoryLayout.tree),
            let bytes = try Self.generation(commit.generation, in: store, from: view).get(
                HistoryLayout.name, in: HistoryLayout.tree)
        {
            name = String(decoding: bytes, as: UTF8.self)
        }
        return HistoryAction(
            token: ObservationToken(generation: commit.generation), name: name,
            date: Date(timeIntervalSince1970: Double(commit.timestamp) / 1_000_000))
    }

    /// The newest action not undone: what `undo()` reverts. Nil if there is none in the
    /// history the store holds; `blockedBy` is the preparation commit found first, if any
    /// (the action cannot be reverted past it).
    static func undoable(
        in store: Store, from view: ReadView? = nil, scope: UndoScope
    ) throws(StorageError) -> (
        action: HistoryAction, blockedBy: UInt64?
    )? {
        var undone = Set<UInt64>()
        var found: LoggedCommit?
        var preparation: UInt64?
        try store.forEachCommit(from: view) { (commit) throws(StorageError) -> Bool in
            switch try role(of: commit, in: store, from: view) {
            case .undo(let target): undone.insert(target)
            case .action where scope == .namedActions && !commit.changed(HistoryLayout.name, in: HistoryLayout.tree),
                .redo where scope == .namedActions && !commit.changed(HistoryLayout.name, in: HistoryLayout.tree):
                break  // not an action of this scope: it stays, and may conflict
            case .action, .redo:
                if !undone.contains(commit.generation) {
                    found = commit
                    return false
                }
            case .preparation: preparation = preparation ?? commit.generation
            case .other: break
            }
            return true
        }
        guard let found else { return nil }
        return (try action(found, in: store, from: view), preparation)
    }

    /// The newest undo not redone, if no action came after it: what `redo()` reverts (the
    /// undo commit; its name is the undone action's). `blockedBy` as in ``undoable(in:)``.
    static func redoable(
        in store: Store, from view: ReadView? = nil, scope: UndoScope
    ) throws(StorageError) -> (
        action: HistoryAction, blockedBy: UInt64?
    )? {
        var redone = Set<UInt64>()
        var found: LoggedCommit?
        var preparation: UInt64?
        try store.forEachCommit(from: view) { (commit) throws(StorageError) -> Bool in
            switch try role(of: commit, in: store, from: view) {
            case .redo(let undo): redone.insert(undo)
            case .undo:
                if !redone.contains(commit.generation) {
                    found = commit
                    return false
                }
            case .action where scope == .namedActions && !commit.changed(HistoryLayout.name, in: HistoryLayout.tree):
                break
            case .action: return false  // a new action ends what can be redone
            case .preparation: preparation = preparation ?? commit.generation
            case .other: break
            }
            return true
        }
        guard let found else { return nil }
        return (try action(found, in: store, from: view), preparation)
    }
}

/// Which transactions ``Persistence/undo(_:forcing:)`` and ``Persistence/redo(_:forcing:)`` take as actions.
public enum UndoScope: Sendable, Equatable {
    /// Transactions performed with a name (``Persistence/perform(named:_:)``): what an app's
    /// Edit menu offers. Other transactions are not undone; one that changed what the
    /// action changed makes its undo a conflict.
    case namedActions
    /// Every transaction, named or not.
    case transactions
}
