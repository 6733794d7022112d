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

    /// Where the records come from.
    public var access: Access
    /// Whether records are checked against the predicate after they are read: always, unless
    /// the predicate is empty or the access answers it exactly. Never wrong either way:
    /// every result satisfies the predicate.
    public var filters: Bool
    /// The sort step, if the access order is not the requested one: the descriptors it
    /// sorts by (identifier order when the query has none). Nil when results stream in
    /// the requested order with no sort step.
    public var sort: [String]?
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
