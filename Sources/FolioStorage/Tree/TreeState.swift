/// One named tree as a write transaction sees and changes it.
///
/// Its stored properties are `@exclusivity(unchecked)`, which drops the runtime's check that
/// two accesses to one property never overlap (about 5 % of a record insert's instructions,
/// with MutableNode's and StatementUndo's). Why none can: the state is touched only by the
/// thread holding the transaction's lock (`guarded`, WriteTransaction.swift), one call at a
/// time, and no method holds an access to a property across a call that reaches it again.
final class TreeState {
    let name: String
    /// `name`'s UTF-8 bytes, which name the tree in the catalog: trees are told apart by
    /// bytes, not by `String`'s canonical equivalence.
    let nameBytes: [UInt8]
    /// The root: committed page, changed node, or nil for an empty tree.
    @exclusivity(unchecked) var root: NodeRef?
    /// Keys in the tree now.
    @exclusivity(unchecked) var count: UInt64
    /// Keys in the tree when the transaction began.
    let committedCount: UInt64
    /// Bytes of committed pages this tree owned when the transaction began.
    let committedBytes: UInt64
    /// Bytes of those committed pages this transaction replaced or removed (dead once it
    /// commits; still readable by older roots until compaction).
    @exclusivity(unchecked) var freedBytes: UInt64 = 0
    /// Where this transaction's spilled pages begin (the base's committed length): a page
    /// at or past it was written by this transaction (see ``WriteTransaction`` spilling).
    @exclusivity(unchecked) var spillFloor: UInt64 = .max
    /// Bytes of this transaction's spilled pages the tree still reaches (part of its live
    /// bytes at the commit; a spilled page replaced again is dead, like any other).
    @exclusivity(unchecked) var spilledLiveBytes: UInt64 = 0
    /// The tree was in the catalog when the transaction began.
    let existedBefore: Bool
    /// The tree is in the catalog now (false after a drop, until the next write recreates it).
    @exclusivity(unchecked) var exists: Bool
    /// The tree was dropped at some point in this transaction.
    @exclusivity(unchecked) var wasDropped = false
    /// Changed since the transaction began.
    @exclusivity(unchecked) var isModified = false
    /// Every key operation in order: whether the key existed before it and after it.
    /// Appending is cheaper than hashing byte-array keys on every put; the log is resolved
    /// at commit by a stable sort (first operation's "before", last one's "after"), and
    /// also whenever it has doubled since it was last resolved (``compactChangesIfLarge()``),
    /// so it stays within about twice the number of distinct keys changed.
    @exclusivity(unchecked) var changes: [(key: [UInt8], existedBefore: Bool, existsAfter: Bool)] = []
    /// Where the log starts counting: a drop forgets the operations before it (the commit
    /// lists the tree as dropped), without shrinking the log a savepoint may remember.
    @exclusivity(unchecked) var changesFrom = 0
    /// Set by an edit when it changes its first node in place (the leaf): before that, a
    /// failed edit has changed nothing but `freedBytes` (copies it never linked).
    @exclusivity(unchecked) var editChangedANode = false
    /// The log's length that triggers the next compaction.
    @exclusivity(unchecked) private var compactAt = 4_096
    /// The most distinct keys the commit's change record lists for this tree
    /// (``StoreOptions/changeRecordKeyLimit``); past it the tree changed wholesale.
    @exclusivity(unchecked) var changeRecordKeyLimit = Int.max
    /// The transaction changed more keys than the change record lists: the log is dropped
    /// and no longer kept, and the commit records the tree as changed wholesale. Never
    /// undone, not even by a rollback to a savepoint: "may have changed anything" stays
    /// true of fewer changes, and the dropped log could not be rebuilt.
    @exclusivity(unchecked) private(set) var isChangedWholesale = false
    /// Bytes of pages this transaction copied into mutable nodes since the spill budget last
    /// took them (``takeCopiedPageBytes()``): a copied node keeps its page's bytes.
    @exclusivity(unchecked) private var copiedPageBytes = 0
    /// Read through the transaction (TreeReads knows it too; this spares its lock).
    @exclusivity(unchecked) var isRead = false
    /// Keys this transaction put or removed blind (``WriteTransaction/putBlind(_:for:in:)``),
    /// in the order first written, with `blindKeySet` for membership: what a commit replays
    /// onto a newer version of the tree (TreeState+Replay.swift). An undo cuts the list
    /// back to a saved length, so it is exact after any rollback.
    @exclusivity(unchecked) private(set) var blindKeys: [[UInt8]] = []
    @exclusivity(unchecked) private var blindKeySet: Set<[UInt8]> = []
    /// More keys were written blind than ``blindKeyLimit``: the list was dropped, and the
    /// tree can no longer be replayed (a commit over a newer version of it conflicts).
    @exclusivity(unchecked) private(set) var blindKeysLost = false
    /// The most keys a tree remembers as written blind: bounds the memory of a transaction
    /// that writes many keys this way (past it, it conflicts as a read-write would).
    static let blindKeyLimit = 65_536

    init(name: String, descriptor: TreeDescriptor?) {
        self.name = name
        nameBytes = Array(name.utf8)
        root = descriptor.flatMap { $0.root.isNone ? nil : .stored($0.root) }
        count = descriptor?.count ?? 0
        committedCount = count
        committedBytes = descriptor?.bytes ?? 0
        existedBefore = descriptor != nil
        exists = descriptor != nil
    }

    /// Whether this tree's name has exactly the UTF-8 bytes `name`.
    @inline(__always)
    func isNamed(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        nameBytes.count == name.count
            && nameBytes.withUnsafeBytes { ByteOrder.compare($0, UnsafeRawBufferPointer(name)) == 0 }
    }

    /// Counts a page this edit replaces or removes: a committed page becomes dead at the
    /// commit (`freedBytes`); a page this transaction spilled is no longer reached.
    func release(_ address: PageAddress) {
        copiedPageBytes += Int(address.length)
        if address.offset >= spillFloor {
            spilledLiveBytes -= min(spilledLiveBytes, UInt64(address.length))
        } else {
            freedBytes += UInt64(address.length)
        }
    }

    /// Undoes ``release(_:)`` for a page an undone edit puts back.
    func reclaim(_ address: PageAddress) {
        if address.offset >= spillFloor {
            spilledLiveBytes += UInt64(address.length)
        } else {
            freedBytes -= min(freedBytes, UInt64(address.length))
        }
    }

    /// Takes the bytes of pages copied into memory since the last call (for the spill
    /// budget, which counts what the transaction holds).
    func takeCopiedPageBytes() -> Int {
        defer { copiedPageBytes = 0 }
        return copiedPageBytes
    }

    /// Logs one key operation. Invariant 5 (Docs/Architecture.md): the log never holds more
    /// than twice the change record's key limit; past it the tree changes wholesale.
    func recordChange(_ key: [UInt8], existed: Bool, existsNow: Bool) {
        guard !isChangedWholesale else { return }
        changes.append((key, existed, existsNow))
        // Twice the limit without a compaction (a savepoint or statement is live, or every
        // operation named another key): more than the limit of distinct keys, or a log that
        // may not be compacted yet; either way it must not grow on.
        if changes.count - changesFrom > (changeRecordKeyLimit > Int.max / 2 ? Int.max : changeRecordKeyLimit * 2) {
            changeWholesale()
        }
    }

    /// Drops the change log for good: the commit records the tree as changed wholesale.
    func changeWholesale() {
        isChangedWholesale = true
        changes = []
        changesFrom = 0
    }

    /// What a savepoint keeps of the tree: everything an edit can change, the nodes
    /// included (the root reference: its nodes are frozen while the savepoint lives).
    struct Saved {
        let root: NodeRef?
        let count: UInt64
        let freedBytes: UInt64
        let spilledLiveBytes: UInt64
        let exists: Bool
        let wasDropped: Bool
        let isModified: Bool
        let changeCount: Int
        let changesFrom: Int
        let blindKeyCount: Int
    }

    func saved() -> Saved {
        Saved(
            root: root, count: count, freedBytes: freedBytes, spilledLiveBytes: spilledLiveBytes, exists: exists,
            wasDropped: wasDropped,
            isModified: isModified, changeCount: changes.count, changesFrom: changesFrom,
            blindKeyCount: blindKeys.count)
    }

    func restore(_ saved: Saved) {
        root = saved.root
        freedBytes = saved.freedBytes
        spilledLiveBytes = saved.spilledLiveBytes
        restoreCounters(saved)
    }

    /// Puts back everything but the root and `freedBytes` (a failed statement's undo
    /// rebuilds the root key by key and keeps counting the pages it copied).
    func restoreCounters(_ saved: Saved) {
        count = saved.count
        exists = saved.exists
        wasDropped = saved.wasDropped
        isModified = saved.isModified
        // Keys first written blind after the saved state are no longer written (a key
        // written before it and again after keeps its place: it is still written).
        if !blindKeysLost && blindKeys.count > saved.blindKeyCount {
            for key in blindKeys[saved.blindKeyCount...] { blindKeySet.remove(key) }
            blindKeys.removeSubrange(saved.blindKeyCount...)
        }
        // A tree that changed wholesale since has no log to cut back (and stays wholesale).
        guard !isChangedWholesale else { return }
        changes.removeSubrange(saved.changeCount...)
        changesFrom = saved.changesFrom
    }

    /// Notes that `key` was put or removed blind.
    func noteBlindWrite(_ key: [UInt8]) {
        guard !blindKeysLost, blindKeySet.insert(key).inserted else { return }
        blindKeys.append(key)
        if blindKeys.count > Self.blindKeyLimit {
            blindKeysLost = true
            blindKeys = []
            blindKeySet = []
        }
    }

    /// Forgets the operations logged so far (the tree was dropped).
    func forgetChanges() {
        changesFrom = changes.count
    }

    /// Resolves the change log to one entry per key once it has doubled. Only while no
    /// savepoint is live (a savepoint remembers the log's length).
    func compactChangesIfLarge() {
        guard !isChangedWholesale, changes.count - changesFrom >= compactAt else { return }
        changes = resolvedChanges()
        changesFrom = 0
        if changes.count > changeRecordKeyLimit {
            changeWholesale()
            return
        }
        compactAt = max(4_096, changes.count * 2)
    }

    /// One entry per key, in key order: whether it existed before the first operation and
    /// after the last (keys created and removed again are left out).
    private func resolvedChanges() -> [(key: [UInt8], existedBefore: Bool, existsAfter: Bool)] {
        // A log already in strictly ascending key order (one batch, or keys written in
        // order) has one operation per key: nothing to sort or fold.
        let log = changes[changesFrom...]
        if zip(log, log.dropFirst()).allSatisfy({ ByteOrder.compare($0.key, $1.key) < 0 }) {
            return log.filter { $0.existedBefore || $0.existsAfter }
        }
        // Stable: operations on one key keep their order.
        let sorted = changes[changesFrom...].enumerated().sorted { a, b in
            let order = ByteOrder.compare(a.element.key, b.element.key)
            return order != 0 ? order < 0 : a.offset < b.offset
        }
        var resolved: [(key: [UInt8], existedBefore: Bool, existsAfter: Bool)] = []
        resolved.reserveCapacity(sorted.count)
        var index = 0
        while index < sorted.count {
            let key = sorted[index].element.key
            let before = sorted[index].element.existedBefore
            var end = index
            while end + 1 < sorted.count && sorted[end + 1].element.key == key { end += 1 }
            let after = sorted[end].element.existsAfter
            if before || after { resolved.append((key, before, after)) }
            index = end + 1
        }
        return resolved
    }

    /// What the commit's change record says of this tree: nil if no key changed, else its
    /// key changes relative to the previous generation in key order, or that it changed
    /// wholesale (more changed keys than the limit).
    func recordedChanges() -> ChangeRecord.TreeChanges? {
        if isChangedWholesale { return .wholesale(name) }
        let entries = changeEntries()
        if entries.count > changeRecordKeyLimit { return .wholesale(name) }
        return entries.isEmpty ? nil : ChangeRecord.TreeChanges(tree: name, entries: entries)
    }

    /// The key changes relative to the previous generation, in key order.
    func changeEntries() -> [ChangeRecord.Entry] {
        resolvedChanges().map { change in
            switch (change.existedBefore, change.existsAfter) {
            case (false, _): return ChangeRecord.Entry(key: change.key, kind: .created)
            case (true, true): return ChangeRecord.Entry(key: change.key, kind: .updated)
            case (true, false): return ChangeRecord.Entry(key: change.key, kind: .deleted)
            }
        }
    }
}
