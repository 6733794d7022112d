/// Point lookups through a cursor, for keys asked in ascending order: the records side of a
/// merge join, where a query has collected and sorted the identifiers an index names and
/// reads their records. A key inside the span of the leaf the cursor holds is found by a
/// binary search of that leaf, with no descent; only a key past the leaf's last key
/// descends again. Keys that are neighbours in the tree therefore cost one descent per
/// leaf rather than one per key (a positioned cursor's seek in SQLite and LMDB works the
/// same way).
///
/// Works for every source a cursor has (a read view, a write transaction's snapshot): it
/// reuses the cursor's own leaf fetch, so it sees exactly what the cursor sees.
extension Cursor {
    /// The value stored under `key`, or nil if the tree has no such key or `key` lies
    /// outside the cursor's range. Keys may come in any order and the answers are right;
    /// ascending keys are what makes it cheap. Afterwards ``next()`` continues with the
    /// first key after `key` in the cursor's direction.
    package mutating func value(at key: [UInt8]) throws(StorageError) -> ArraySlice<UInt8>? {
        guard range.contains(key) else { return nil }
        let held: LeafBatch
        if let batch, Self.spans(batch, key) {
            // The leaf holds every key between its first and last: `key` is here or nowhere.
            held = batch
        } else {
            descents += 1
            guard let fetched = try fetch(.forward(from: key[...], inclusive: true)) else {
                // No key at or after `key`.
                position(after: key, in: nil, at: 0, found: false)
                return nil
            }
            held = fetched
        }
        let index = held.entries.lowerBound(key)
        let found = index < held.entries.count && held.entries.compareKey(index, with: key[...]) == 0
        position(after: key, in: held, at: index, found: found)
        return found ? try resolveValue(held.entries.value(index)) : nil
    }

    /// Whether `key` lies between the first and the last key of a leaf.
    private static func spans(_ batch: LeafBatch, _ key: [UInt8]) -> Bool {
        let entries = batch.entries
        guard !entries.isEmpty else { return false }
        return entries.compareKey(0, with: key[...]) <= 0 && entries.compareKey(entries.count - 1, with: key[...]) >= 0
    }

    /// Leaves the cursor where ``next()`` returns the first key after `key` in its
    /// direction: `index` is where `key` is (or would be) in `held`, nil when no key is at
    /// or after `key`.
    private mutating func position(after key: [UInt8], in held: LeafBatch?, at index: Int, found: Bool) {
        finished = false
        var next = held
        switch direction {
        case .forward:
            let following = index + (found ? 1 : 0)
            if var leaf = next, following < leaf.entries.count {
                leaf.index = following
                next = leaf
            } else {
                next = nil
            }
            nextTarget = .forward(from: key[...], inclusive: false)
        case .reverse:
            // Keys before `index` are all below `key`; with no leaf, every key is.
            if var leaf = next, index > 0 {
                leaf.index = index - 1
                next = leaf
            } else {
                next = nil
            }
            nextTarget = .backward(from: key[...], inclusive: false)
        }
        batch = next
    }
}
