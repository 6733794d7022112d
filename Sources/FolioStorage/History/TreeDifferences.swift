/// One key whose value differs between two generations of a tree.
public struct KeyDifference: Sendable, Equatable {
    /// The key.
    public var key: [UInt8]
    /// Its value in the first generation (nil: the key was not there).
    public var before: [UInt8]?
    /// Its value in the second generation (nil: the key is not there).
    public var after: [UInt8]?

    /// `key`, with its value `before` and `after` (nil: absent).
    public init(key: [UInt8], before: [UInt8]?, after: [UInt8]?) {
        self.key = key
        self.before = before
        self.after = after
    }
}

/// The keys of one tree whose values differ between two generations, in key order: what
/// ``Store/differences(in:from:to:)`` returns. Read with ``next()``.
///
/// Found one of two ways, with the same answer: from the change records of the commits
/// between the two (the keys they name, each looked up in both generations), or, where
/// those do not name every key (a commit changed the tree wholesale or dropped it, or the
/// chain between the two is not in the store any more), by reading both generations of the
/// tree side by side. A key whose value is the same in both is not a difference, whatever
/// the commits in between did to it.
public struct TreeDifferences {
    let tree: String
    let from: ReadView
    let to: ReadView
    private var source: Source

    private enum Source {
        /// The keys the change records name, in key order, and the next one to look up.
        case named([[UInt8]], next: Int)
        /// Both generations read in key order, with the entry each cursor is at.
        case sideBySide(Cursor, Cursor, before: Cursor.Entry??, after: Cursor.Entry??)
    }

    init(tree: String, from: ReadView, to: ReadView, named keys: [[UInt8]]?) throws(StorageError) {
        self.tree = tree
        self.from = from
        self.to = to
        if let keys {
            source = .named(keys, next: 0)
        } else {
            source = .sideBySide(
                try from.cursor(in: tree), try to.cursor(in: tree), before: .none, after: .none)
        }
    }

    /// Whether the differences come from the change records (true) or from reading both
    /// generations whole (false).
    public var followsChangeRecords: Bool {
        if case .named = source { return true }
        return false
    }

    /// The next difference in key order, or nil after the last.
    public mutating func next() throws(StorageError) -> KeyDifference? {
        switch source {
        case .named(let keys, var position):
            defer { source = .named(keys, next: position) }
            while position < keys.count {
                let key = keys[position]
                position += 1
                let before = try from.get(key, in: tree)
                let after = try to.get(key, in: tree)
                if before != after { return KeyDifference(key: key, before: before, after: after) }
            }
            return nil
        case .sideBySide(var a, var b, var pendingA, var pendingB):
            defer { source = .sideBySide(a, b, before: pendingA, after: pendingB) }
            while true {
                if pendingA == nil { pendingA = .some(try a.next()) }
                if pendingB == nil { pendingB = .some(try b.next()) }
                switch (pendingA!, pendingB!) {
                case (nil, nil):
                    return nil
                case (let old?, nil):
                    pendingA = nil
                    return KeyDifference(key: old.key, before: old.value, after: nil)
                case (nil, let new?):
                    pendingB = nil
                    return KeyDifference(key: new.key, before: nil, after: new.value)
                case (let old?, let new?):
                    let order = ByteOrder.compare(old.key[...], new.key[...])
                    if order < 0 {
                        pendingA = nil
                        return KeyDifference(key: old.key, before: old.value, after: nil)
                    }
                    if order > 0 {
                        pendingB = nil
                        return KeyDifference(key: new.key, before: nil, after: new.value)
                    }
                    pendingA = nil
                    pendingB = nil
                    if old.value != new.value {
                        return KeyDifference(key: old.key, before: old.value, after: new.value)
                    }
                }
            }
        }
    }
}
