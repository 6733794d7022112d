/// One named tree as a write transaction sees and changes it.
final class TreeState {
    let name: String
    /// The root: committed page, changed node, or nil for an empty tree.
    var root: NodeRef?
    /// Keys in the tree now.
    var count: UInt64
    /// Bytes of committed pages this tree owned when the transaction began.
    let committedBytes: UInt64
    /// Bytes of those committed pages this transaction replaced or removed (dead once it
    /// commits; still readable by older roots until compaction).
    var freedBytes: UInt64 = 0
    /// The tree was in the catalog when the transaction began.
    let existedBefore: Bool
    /// The tree is in the catalog now (false after a drop, until the next write recreates it).
    var exists: Bool
    /// The tree was dropped at some point in this transaction.
    var wasDropped = false
    /// Changed since the transaction began.
    var isModified = false
    /// Every key operation in order: whether the key existed before it and after it.
    /// Appending is cheaper than hashing byte-array keys on every put; the log is resolved
    /// once, at commit, by a stable sort (first operation's "before", last one's "after").
    var changes: [(key: [UInt8], existedBefore: Bool, existsAfter: Bool)] = []

    init(name: String, descriptor: TreeDescriptor?) {
        self.name = name
        root = descriptor.flatMap { $0.root.isNone ? nil : .stored($0.root) }
        count = descriptor?.count ?? 0
        committedBytes = descriptor?.bytes ?? 0
        existedBefore = descriptor != nil
        exists = descriptor != nil
    }

    func recordChange(_ key: [UInt8], existed: Bool, existsNow: Bool) {
        changes.append((key, existed, existsNow))
    }

    /// The key changes relative to the previous generation, in key order.
    func changeEntries() -> [ChangeRecord.Entry] {
        // Stable: operations on one key keep their order.
        let sorted = changes.enumerated().sorted { a, b in
            let order = ByteOrder.compare(a.element.key, b.element.key)
            return order != 0 ? order < 0 : a.offset < b.offset
        }
        var entries: [ChangeRecord.Entry] = []
        entries.reserveCapacity(sorted.count)
        var index = 0
        while index < sorted.count {
            let key = sorted[index].element.key
            let before = sorted[index].element.existedBefore
            var end = index
            while end + 1 < sorted.count && sorted[end + 1].element.key == key { end += 1 }
            let after = sorted[end].element.existsAfter
            switch (before, after) {
            case (false, true): entries.append(.init(key: key, kind: .created))
            case (true, true): entries.append(.init(key: key, kind: .updated))
            case (true, false): entries.append(.init(key: key, kind: .deleted))
            case (false, false): break
            }
            index = end + 1
        }
        return entries
    }
}
