// A predicate live query's result set.

/// A predicate live query's results in result order, as parallel arrays: the identifier
/// keys, their ``KeyTable/hash(_:)`` hashes (computed once per result, so matching a
/// commit's changed identifiers against the results hashes nothing), and the instances,
/// which publishing shares (copy on write) instead of building a new array each commit.
struct IdentifiedResults<Instance: Sendable>: Sendable {
    /// A slice: results that are one run of a commit's entries share that commit's
    /// identifiers (``init(sharing:_:hashes:instances:)``).
    private var keys: ArraySlice<[UInt8]> = []
    private(set) var hashes: [Int] = []
    private(set) var instances: [Instance] = []

    var count: Int { instances.count }

    init() {}

    init(keys: [[UInt8]], hashes: [Int], instances: [Instance]) {
        self.keys = keys[...]
        self.hashes = hashes
        self.instances = instances
    }

    /// The results `identifiers[positions]` with their `hashes` and `instances`, sharing
    /// `identifiers` when the run is at least a sixteenth of it (so results never keep
    /// alive more than sixteen times their own keys), else copying the run.
    init(sharing identifiers: [[UInt8]], _ positions: Range<Int>, hashes: [Int], instances: [Instance]) {
        keys =
            positions.count * 16 >= identifiers.count ? identifiers[positions] : Array(identifiers[positions])[...]
        self.hashes = hashes
        self.instances = instances
    }

    /// The identifier key of the result at `position` (0 is the first).
    func key(_ position: Int) -> [UInt8] {
        keys[keys.startIndex + position]
    }

    /// Results found by a query, in its order.
    init(_ found: [(key: [UInt8], instance: Instance)]) {
        keys = found.map(\.key)[...]
        hashes = keys.map(KeyTable.hash)
        instances = found.map(\.instance)
    }

    subscript(position: Int) -> (key: [UInt8], instance: Instance) {
        (key(position), instances[position])
    }

    mutating func append(contentsOf other: IdentifiedResults, _ positions: Range<Int>) {
        let start = other.keys.startIndex
        keys.append(contentsOf: other.keys[(start + positions.lowerBound)..<(start + positions.upperBound)])
        hashes.append(contentsOf: other.hashes[positions])
        instances.append(contentsOf: other.instances[positions])
    }

    mutating func append(_ key: [UInt8], hash: Int, _ instance: Instance) {
        keys.append(key)
        hashes.append(hash)
        instances.append(instance)
    }

    mutating func append(_ other: IdentifiedResults, at position: Int) {
        keys.append(other.key(position))
        hashes.append(other.hashes[position])
        instances.append(other.instances[position])
    }

    mutating func reserve(_ capacity: Int) {
        keys.reserveCapacity(capacity)
        hashes.reserveCapacity(capacity)
        instances.reserveCapacity(capacity)
    }

    /// The results in the order of `positions` (a permutation of theirs).
    func reordered(_ positions: [Int]) -> IdentifiedResults {
        IdentifiedResults(
            keys: positions.map { key($0) }, hashes: positions.map { hashes[$0] },
            instances: positions.map { instances[$0] })
    }

    mutating func reverse() {
        keys.reverse()
        hashes.reverse()
        instances.reverse()
    }

    mutating func removeLast(_ count: Int) {
        keys.removeLast(count)
        hashes.removeLast(count)
        instances.removeLast(count)
    }

    /// Removes the results whose identifier is in `table`; returns whether any went. Runs
    /// between removed results are copied whole.
    mutating func remove(in table: KeyTable) -> Bool {
        if table.isEmpty { return false }
        var kept = IdentifiedResults()
        var start = 0, removedAny = false
        for position in 0..<count where table.contains(key(position), hash: hashes[position]) {
            if !removedAny { kept.reserve(count) }
            removedAny = true
            if start < position { kept.append(contentsOf: self, start..<position) }
            start = position + 1
        }
        guard removedAny else { return false }
        if start < count { kept.append(contentsOf: self, start..<count) }
        self = kept
        return true
    }
}
