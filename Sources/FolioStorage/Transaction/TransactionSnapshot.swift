/// A write transaction's state at one moment, for reading while the transaction goes on
/// writing: what ``WriteTransaction/cursor(in:range:direction:)`` iterates, and what a
/// datastore range read inside a transaction uses for both its index and its records.
///
/// Its nodes are frozen (`WriteTransaction+Savepoint.swift`): later writes copy them
/// instead of changing them, so the snapshot never changes, even after the transaction
/// commits or rolls back.
public final class TransactionSnapshot: @unchecked Sendable {
    // @unchecked: the captured nodes are frozen (never mutated again) and the base is immutable.
    private let base: CommittedRoot
    /// Trees the transaction had touched, as they were: root (nil when empty or absent) and count.
    private let touched: [[UInt8]: (root: NodeRef?, count: UInt64)]
    /// The transaction's read set: a read of a tree it had not touched is one of its reads.
    private let reads: TreeReads

    init(base: CommittedRoot, touched: [[UInt8]: (root: NodeRef?, count: UInt64)], reads: TreeReads) {
        self.base = base
        self.touched = touched
        self.reads = reads
    }

    /// The base's catalog entry of a tree the transaction had not touched, noted as read.
    private func untouched(_ tree: String) throws(StorageError) -> TreeDescriptor? {
        let descriptor = try base.descriptor(of: tree)
        reads.note(Array(tree.utf8), descriptor)
        return descriptor
    }

    /// The state of a tree the transaction had touched, noted as read (it may have been
    /// written blind only, until now).
    private func touchedState(_ tree: String) -> (root: NodeRef?, count: UInt64)? {
        let name = Array(tree.utf8)
        guard let state = touched[name] else { return nil }
        reads.noteRead(name)
        return state
    }

    private func root(of tree: String) throws(StorageError) -> NodeRef? {
        if let state = touchedState(tree) { return state.root }
        return try untouched(tree).flatMap { $0.root.isNone ? nil : .stored($0.root) }
    }

    /// The value under `key` in `tree`, or nil.
    public func get(_ key: [UInt8], in tree: String) throws(StorageError) -> [UInt8]? {
        try getInPlace(key, in: tree).map { Array($0) }
    }

    /// The value under `key` in `tree` as a slice of the bytes that hold it (no copy), or nil.
    package func getInPlace(_ key: [UInt8], in tree: String) throws(StorageError) -> ArraySlice<UInt8>? {
        let reader = base.reader
        guard let value = try reader.get(root: try root(of: tree), key: key) else { return nil }
        return try reader.resolve(value)
    }

    /// A cursor over `range` of `tree`.
    public func cursor(
        in tree: String, range: KeyRange = .all, direction: ScanDirection = .forward
    ) throws(StorageError) -> Cursor {
        let treeRoot = try root(of: tree)
        return Cursor(reader: base.reader, root: { treeRoot }, range: range, reverse: direction == .reverse)
    }

    /// Number of keys in `tree`.
    public func count(in tree: String) throws(StorageError) -> UInt64 {
        if let state = touchedState(tree) { return state.count }
        return try untouched(tree)?.count ?? 0
    }
}

extension WriteTransaction {
    /// The transaction's state now, including its writes so far, unchanged by later ones.
    /// Inside a statement it sees the statement's writes so far; from a task sharing the
    /// transaction with others, take it inside ``exclusively(_:)`` to see whole statements.
    public func snapshot() throws(StorageError) -> TransactionSnapshot {
        try withContents { (contents) throws(StorageError) -> TransactionSnapshot in
            freezeForReaders(contents)
            var touched: [[UInt8]: (root: NodeRef?, count: UInt64)] = [:]
            for (name, tree) in contents.trees { touched[name] = (tree.exists ? tree.root : nil, tree.count) }
            return TransactionSnapshot(base: base, touched: touched, reads: reads)
        }
    }
}
