import FolioStorage

// A live query's result set and how a commit's changes merge into it.

/// A live query's results in ascending sort-key order, as parallel arrays: publishing
/// shares `instances` (copy on write) instead of building a new array each commit.
struct QueryResults<Instance: Sendable>: Sendable {
    private(set) var sortKeys: [[UInt8]] = []
    private(set) var identifiers: [[UInt8]] = []
    private(set) var instances: [Instance] = []

    var count: Int { instances.count }

    mutating func append(_ sortKey: [UInt8], _ identifier: [UInt8], _ instance: Instance) {
        sortKeys.append(sortKey)
        identifiers.append(identifier)
        instances.append(instance)
    }

    mutating func reverse() {
        sortKeys.reverse()
        identifiers.reverse()
        instances.reverse()
    }

    /// Removes the results whose identifier `shouldRemove` names; returns whether any went.
    mutating func removeAll(where shouldRemove: ([UInt8]) -> Bool) -> Bool {
        var kept = QueryResults()
        for position in identifiers.indices where !shouldRemove(identifiers[position]) {
            kept.append(sortKeys[position], identifiers[position], instances[position])
        }
        guard kept.count != count else { return false }
        self = kept
        return true
    }

    /// Both sorted result sets in one, sorted (a merge: both inputs are ascending).
    func merged(with other: QueryResults) -> QueryResults {
        var result = QueryResults()
        result.sortKeys.reserveCapacity(count + other.count)
        result.identifiers.reserveCapacity(count + other.count)
        result.instances.reserveCapacity(count + other.count)
        var mine = 0, theirs = 0
        while mine < count || theirs < other.count {
            if theirs == other.count || (mine < count && KeyBytes.compare(sortKeys[mine], other.sortKeys[theirs]) <= 0)
            {
                result.append(sortKeys[mine], identifiers[mine], instances[mine])
                mine += 1
            } else {
                result.append(other.sortKeys[theirs], other.identifiers[theirs], other.instances[theirs])
                theirs += 1
            }
        }
        return result
    }
}
