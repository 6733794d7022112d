import Foundation
import FolioStorage

/// Queries in the vocabulary of Foundation: a `#Predicate` over the instance type, sort
/// descriptors, a limit and an offset, planned over the declared indexes
/// (``QueryPlanner``). Like every read, each runs in the enclosing transaction or snapshot
/// if there is one, else in a snapshot of its own.
///
/// The results are always those of evaluating the predicate on every decoded record and
/// sorting by the descriptors (ties, and no descriptors, in identifier order): an index
/// only decides how few records are read. ``explain(where:sortBy:limit:offset:)`` says
/// which. (A record that no longer decodes throws its decoding error from a query that
/// reads it; which records a query reads depends on its plan.)
extension Datastore {
    /// The instances matching `predicate` (every instance if nil), sorted by `sortBy` (ties
    /// and no descriptors: identifier order), after skipping `offset`, at most `limit`. A
    /// negative `limit` or `offset` throws ``FolioError/invalidArgument(name:reason:)`` when
    /// the sequence is iterated.
    ///
    /// ```swift
    /// let recent = try await books.fetch(
    ///     where: #Predicate { $0.year >= 1990 }, sortBy: [SortDescriptor(\.title)], limit: 20
    /// ).collect()
    /// ```
    public func fetch(
        where predicate: Predicate<Instance>? = nil, sortBy: [SortDescriptor<Instance>] = [],
        limit: Int? = nil, offset: Int = 0
    ) -> Records<Instance> {
        let datastore = self
        return Records(limit: limit, offset: offset) { () async throws(FolioError) -> RecordStream<Instance> in
            let window = try ResultWindow(limit: limit, offset: offset)
            let (source, usable) = try await datastore.readSource()
            let plan = try datastore.plan(
                predicate, sortBy: sortBy, limit: limit, offset: offset, source: source, usable: usable)
            let execution = QueryExecution(schema: datastore.schema, core: datastore.core)
            var matches = try execution.matches(of: plan, predicate: predicate, source: source)
            if plan.sorts {
                let sorted = try execution.sorted(&matches, by: sortBy, keeping: window.end).map(\.instance)
                var position = offset
                return RecordStream { () throws(FolioError) -> Instance? in
                    guard position < sorted.count else { return nil }
                    defer { position += 1 }
                    return sorted[position]
                }
            }
            var skipped = 0
            return RecordStream { () throws(FolioError) -> Instance? in
                while let match = try matches() {
                    if skipped < offset {
                        skipped += 1
                        continue
                    }
                    return match.instance
                }
                return nil
            }
        }
    }

    /// How many instances match `predicate`.
    nonisolated(nonsending) public func count(where predicate: Predicate<Instance>) async throws(FolioError) -> Int {
        try await withRead { (source, usable) throws(FolioError) -> Int in
            let plan = try plan(predicate, sortBy: [], limit: nil, offset: 0, source: source, usable: usable)
            let execution = QueryExecution(schema: schema, core: core)
            // An exact plan counts index entries (or identifiers): no record is decoded.
            if let identifiers = try execution.exactIdentifiers(of: plan, hasPredicate: true, source: source) {
                return identifiers.count
            }
            let matches = try execution.matches(of: plan, predicate: predicate, source: source)
            var count = 0
            while try matches() != nil { count += 1 }
            return count
        }
    }

    /// The first instance matching `predicate` in the order of `sortBy` (identifier order
    /// without descriptors), or nil. An equality on the identifier, or on an index the
    /// planner can use, reads one entry.
    ///
    /// ```swift
    /// let eldest = try await authors.first(where: #Predicate { $0.born < 1900 }, sortBy: [SortDescriptor(\.born)])
    /// ```
    nonisolated(nonsending) public func first(
        where predicate: Predicate<Instance>,
        sortBy: [SortDescriptor<Instance>] = []
    ) async throws(FolioError) -> Instance? {
        // Read in place, as `load` does: no stream to open (a stream's first read starts on
        // another thread, which costs more than a point lookup).
        let point = schema.identifierEqualityKey(predicate)
        if let point, let cached = cachedNewest(point) { return cached }
        return try await withRead { (source, usable) throws(FolioError) -> Instance? in
            // At most one record: the sort does not matter.
            if let point { return try schema.read(point, from: source, core: core) }
            let plan = try plan(predicate, sortBy: sortBy, limit: 1, offset: 0, source: source, usable: usable)
            let execution = QueryExecution(schema: schema, core: core)
            var matches = try execution.matches(of: plan, predicate: predicate, source: source)
            if plan.sorts { return try execution.sorted(&matches, by: sortBy, keeping: 1).first?.instance }
            return try matches()?.instance
        }
    }

    /// Whether any instance matches `predicate` (reads until the first match).
    nonisolated(nonsending) public func contains(where predicate: Predicate<Instance>) async throws(FolioError) -> Bool
    {
        try await first(where: predicate) != nil
    }

    /// How ``fetch(where:sortBy:limit:offset:)`` would run this query now (which indexes are
    /// built decides), without running it. A negative `limit` or `offset` throws
    /// ``FolioError/invalidArgument(name:reason:)``.
    nonisolated(nonsending) public func explain(
        where predicate: Predicate<Instance>? = nil, sortBy: [SortDescriptor<Instance>] = [],
        limit: Int? = nil, offset: Int = 0
    ) async throws(FolioError) -> QueryPlan {
        _ = try ResultWindow(limit: limit, offset: offset)
        return try await withRead { (source, usable) throws(FolioError) -> QueryPlan in
            try plan(predicate, sortBy: sortBy, limit: limit, offset: offset, source: source, usable: usable)
                .description
        }
    }

    // MARK: Machinery

    /// The plan of a query over `source`, whose index availability is `usable`.
    func plan(
        _ predicate: Predicate<Instance>?, sortBy: [SortDescriptor<Instance>], limit: Int?, offset: Int,
        source: ReadSource, usable: Set<String>?
    ) throws(FolioError) -> QueryPlanner<Format>.Plan {
        QueryPlanner(schema: schema, usable: usable, gaps: try indexGaps(in: source, usable: usable))
            .plan(
                predicate.map(QueryCondition.of), hasPredicate: predicate != nil, sortBy: sortBy, limit: limit,
                offset: offset)
    }
}
