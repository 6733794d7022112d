/// One named tree as a write transaction sees and changes it.
final class TreeState {
    /// How a key's existence changed inside the transaction.
    struct KeyChange {
        var existedBefore: Bool
        var existsNow: Bool
    }

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
    /// Per key, whether it existed at first touch and whether it exists now.
    var changes: [[UInt8]: KeyChange] = [:]

    init(name: String, descriptor: TreeDescriptor?) {
        self.name = name
        root = descriptor.flatMap { $0.root.isNone ? nil : .stored($0.root) }
        count = descriptor?.count ?? 0
        committedBytes = descriptor?.bytes ?? 0
        existedBefore = descriptor != nil
        exists = descriptor != nil
    }

    func recordChange(_ key: [UInt8], existed: Bool, existsNow: Bool) {
        if var change = changes[key] {
            change.existsNow = existsNow
            changes[key] = change
        } else {
            changes[key] = KeyChange(existedBefore: existed, existsNow: existsNow)
        }
    }

    /// The key changes relative to the previous generation, in key order.
    func changeEntries() -> [ChangeRecord.Entry] {
        var entries: [ChangeRecord.Entry] = []
        entries.reserveCapacity(changes.count)
        for (key, change) in changes {
            switch (change.existedBefore, change.existsNow) {
            case (false, true): entries.append(.init(key: key, kind: .created))
            case (true, true): entries.append(.init(key: key, kind: .updated))
            case (true, false): entries.append(.init(key: key, kind: .deleted))
            case (false, false): continue
            }
        }
        entries.sort { ByteOrder.compare($0.key, $1.key) < 0 }
        return entries
    }
}
