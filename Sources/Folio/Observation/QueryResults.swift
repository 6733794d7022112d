import FolioStorage

// A live query's result set and how a commit's changes merge into it.

/// A live query's results in ascending sort-key order (their index entry keys, or
/// identifier keys), as parallel arrays: publishing shares `instances` (copy on write)
/// instead of building a new array each commit. No identifiers: a commit's changes are
/// matched by sort key (``replacing(_:with:)``).
struct QueryResults<Instance: Sendable>: Sendable {
    /// A slice: results that are one run of a commit's entries share that commit's keys
    /// (``init(sharing:_:instances:)``) instead of copying a reference per result.
    private var sortKeys: ArraySlice<[UInt8]> = []
    private(set) var instances: [Instance] = []

    var count: Int { instances.count }

    init() {}

    /// Results from parallel arrays of one length, in ascending sort-key order.
    init(sortKeys: [[UInt8]], instances: [Instance]) {
        self.sortKeys = sortKeys[...]
        self.instances = instances
    }

    /// The results `keys[positions]` with their `instances`, in ascending sort-key order,
    /// sharing `keys` when the run is at least a sixteenth of it (so results never keep
    /// alive more than sixteen times their own keys), else copying the run.
    init(sharing keys: [[UInt8]], _ positions: Range<Int>, instances: [Instance]) {
        sortKeys = positions.count * 16 >= keys.count ? keys[positions] : Array(keys[positions])[...]
        self.instances = instances
    }

    /// The sort key of the result at `position` (0 is the first).
    func sortKey(_ position: Int) -> [UInt8] {
        sortKeys[sortKeys.startIndex + position]
    }

    mutating func append(_ sortKey: [UInt8], _ instance: Instance) {
        sortKeys.append(sortKey)
        instances.append(instance)
    }

    mutating func reverse() {
        sortKeys.reverse()
        instances.reverse()
    }

    /// The results with those whose sort key is in `removed` taken out and `additions`
    /// merged in; nil if neither changes anything. Both inputs are sorted by sort key, as
    /// the results are. Each removed key must be one result's (index entries are unique,
    /// and the caller removes only what was in the range before: the results then).
    func replacing(_ removed: ArraySlice<[UInt8]>, with additions: QueryResults) -> QueryResults? {
        let kept = removing(removed)
        if additions.count == 0 { return kept }
        return (kept ?? self).merged(with: additions)
    }

    /// Whether one of the sorted `keys` is a result's sort key (binary searches).
    func containsAny(_ keys: ArraySlice<[UInt8]>) -> Bool {
        keys.contains { key in
            let position = partitionPoint(count) { KeyBytes.compare(sortKey($0), key) >= 0 }
            return position < count && sortKey(position) == key
        }
    }

    /// The position of each of the sorted `keys` that is a result's sort key.
    private func positions(of keys: ArraySlice<[UInt8]>) -> [Int] {
        var positions: [Int] = []
        if keys.count * (Int.bitWidth - count.leadingZeroBitCount) < count {
            // Few keys: a binary search each.
            for key in keys {
                let position = partitionPoint(count) { KeyBytes.compare(sortKey($0), key) >= 0 }
                if position < count && sortKey(position) == key { positions.append(position) }
            }
        } else {
            // Many: one walk over both sorted sequences.
            var next = keys.startIndex
            for position in 0..<count {
                let sortKey = sortKey(position)
                while next < keys.endIndex && KeyBytes.compare(keys[next], sortKey) < 0 { next += 1 }
                guard next < keys.endIndex else { break }
                if keys[next] == sortKey {
                    positions.append(position)
                    next += 1
                }
            }
        }
        return positions
    }

    /// The results without those whose sort key is in `removed` (sorted; each of them one
    /// result's, the caller's invariant); nil if there are none.
    private func removing(_ removed: ArraySlice<[UInt8]>) -> QueryResults? {
        if removed.isEmpty || count == 0 { return nil }
        // Every removed key is a result's, so as many as there are results is all of them: a
        // commit that replaced the whole result set costs no comparison.
        if removed.count >= count { return QueryResults() }
        let positions = positions(of: removed)
        if positions.isEmpty { return nil }
        // Copy the runs between removed positions whole.
        var kept = QueryResults()
        kept.reserve(count - positions.count)
        var start = 0
        for position in positions + [count] {
            if start < position { kept.append(contentsOf: self, start..<position) }
            start = position + 1
        }
        return kept
    }

    private mutating func reserve(_ capacity: Int) {
        sortKeys.reserveCapacity(capacity)
        instances.reserveCapacity(capacity)
    }

    private mutating func append(contentsOf other: QueryResults, _ positions: Range<Int>) {
        let start = other.sortKeys.startIndex
        sortKeys.append(contentsOf: other.sortKeys[(start + positions.lowerBound)..<(start + positions.upperBound)])
        instances.append(contentsOf: other.instances[positions])
    }

    /// Both sorted result sets in one, sorted (a merge: both inputs are ascending). Runs
    /// of one side that come before the other's next result are copied whole.
    func merged(with other: QueryResults) -> QueryResults {
        if count == 0 { return other }
        if other.count == 0 { return self }
        var result = QueryResults()
        result.reserve(count + other.count)
        var mine = 0, theirs = 0
        while mine < count && theirs < other.count {
            // The run of mine at or before their next key, found by binary search.
            let key = other.sortKey(theirs)
            let end = mine + partitionPoint(count - mine) { KeyBytes.compare(sortKey(mine + $0), key) > 0 }
            if mine < end { result.append(contentsOf: self, mine..<end) }
            mine = end
            guard mine < count else { break }
            let mineKey = sortKey(mine)
            let theirEnd =
                theirs
                + partitionPoint(other.count - theirs) { KeyBytes.compare(other.sortKey(theirs + $0), mineKey) >= 0 }
            result.append(contentsOf: other, theirs..<theirEnd)
            theirs = theirEnd
        }
        if mine < count { result.append(contentsOf: self, mine..<count) }
        if theirs < other.count { result.append(contentsOf: other, theirs..<other.count) }
        return result
    }
}
