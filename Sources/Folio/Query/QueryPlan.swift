/// How a query runs, as ``Datastore/explain(where:sortBy:limit:offset:)`` reports it: which
/// records it reads (an index's ranges, the identifier order, or every record), whether it
/// then filters and sorts them, and its limit. In the spirit of SQLite's
/// `EXPLAIN QUERY PLAN`: enough to see which index a query uses and why.
public struct QueryPlan: Sendable, Equatable, CustomStringConvertible {
    /// Where the records come from.
    public enum Access: Sendable, Equatable {
        /// Every record, in identifier order.
        case everyRecord
        /// The records whose identifiers lie in a range (the predicate bounds the identifier).
        case identifierRange(String)
        /// The records an index's entries in these ranges refer to (several ranges: a union
        /// of `||` sides, without duplicates).
        case index(name: String, ranges: [String])
    }

    /// One key range a plan reads, as a value: the index it reads (nil: the records tree,
    /// by identifier) and the condition the range stands for.
    ///
    /// ```swift
    /// let plan = try await books.explain(where: #Predicate { $0.year >= 1990 })
    /// let readsYear = plan.scans.map(\.index) == ["year"]
    /// ```
    public struct Scan: Sendable, Equatable {
        /// The index read, by its declared name; nil for a range of identifiers.
        public var index: String?
        /// The condition the range stands for, as ``QueryPlan/description`` prints it:
        /// `year >= 1990`.
        public var condition: String

        /// A scan of `index` (nil: of identifiers) for `condition`.
        public init(index: String?, condition: String) {
            self.index = index
            self.condition = condition
        }
    }

    /// One key of a sort step, as a value: the property sorted by, and the direction.
    ///
    /// ```swift
    /// let sorted = try await books.explain(sortBy: [SortDescriptor(\.title)], limit: 20)
    /// let byTitle = sorted.sortKeys == [QueryPlan.SortKey(property: "title", descending: false)]
    /// ```
    public struct SortKey: Sendable, Equatable {
        /// The property, as a key path prints without its root (`title`); nil for a
        /// descriptor with a comparator of its own and no key path.
        public var property: String?
        /// Whether the sort is descending (`SortOrder.reverse`).
        public var descending: Bool

        /// A key sorting by `property`, descending or not.
        public init(property: String?, descending: Bool) {
            self.property = property
            self.descending = descending
        }
    }

    /// Where the records come from.
    public var access: Access
    /// The key ranges the plan reads, in order: empty when it reads every record in
    /// identifier order; a whole index read in its order (for a sort it gives) is one scan
    /// whose condition is `every value`.
    public var scans: [Scan]
    /// The indexes the plan reads, each once, in the order it first reads them: what a test
    /// checks to see that a query uses an index.
    ///
    /// ```swift
    /// let plan = try await books.explain(where: #Predicate { $0.year >= 1990 })
    /// let usesYear = plan.indexes == ["year"]
    /// ```
    public var indexes: [String] {
        var names: [String] = []
        for name in scans.compactMap(\.index) where !names.contains(name) { names.append(name) }
        return names
    }
    /// Whether records are checked against the predicate after they are read: always, unless
    /// the predicate is empty or the access answers it exactly. Never wrong either way:
    /// every result satisfies the predicate.
    public var filters: Bool
    /// The sort step, if the access order is not the requested one: the descriptors it
    /// sorts by (identifier order when the query has none). Nil when results stream in
    /// the requested order with no sort step.
    public var sort: [String]?
    /// The sort step's keys as values (``sort`` as text); nil when results stream in the
    /// requested order, empty when the sort step restores identifier order.
    public var sortKeys: [SortKey]?
    /// Results skipped before the first returned.
    public var offset: Int
    /// At most this many results; with a sort step, only that many are kept while sorting.
    public var limit: Int?

    /// One line: `index year (year >= 1990), then filter, sort by title, limit 20`.
    public var description: String {
        var parts: [String] = []
        switch access {
        case .everyRecord: parts.append("scan every record")
        case .identifierRange(let range): parts.append("identifier range (\(range))")
        case .index(let name, let ranges): parts.append("index \(name) (\(ranges.joined(separator: " or ")))")
        }
        if filters { parts.append("filter by the predicate") }
        if let sort { parts.append("sort by \(sort.isEmpty ? "identifier" : sort.joined(separator: ", "))") }
        if offset > 0 { parts.append("skip \(offset)") }
        if let limit { parts.append("limit \(limit)") }
        return parts.joined(separator: ", then ")
    }
}
