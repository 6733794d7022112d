import Foundation
import FolioStorage

/// Queries in the vocabulary of Foundation: a `#Predicate` over the instance type, sort
/// descriptors, a limit and an offset, planned over the declared indexes
/// (``QueryPlanner``). Like every read, each runs in the enclosing transaction or snapshot
/// if there is one, else in a snapshot of its own.
///
/// The results are always those of filtering every instance with the predicate and
/// sorting by the descriptors (ties, and no descriptors, in identifier order): an index
/// only decides how few records are read. ``explain(where:sortBy:limit:offset:)`` says
/// which.
extension Datastore {
    /// The instances matching `predicate` (every instance if nil), sorted by `sortBy` (ties
    /// and no descriptors: identifier order), after skipping `offset`, at most `limit`.
    ///
    /// ```swift
    /// let recent = try await books.fetch(where: #Predicate { $0.year >= 1990 },
    ///                                    sortBy: [SortDescriptor(\.title)], limit: 20).collect()
    /// ```
    public func fetch(where predicate: Predicate<Instance>? = nil, sortBy: [SortDescriptor<Instance>] = [],
                      limit: Int? = nil, offset: Int = 0) -> Records<Instance> {
        let datastore = self
        return Records(limit: limit) { () async throws(FolioError) -> RecordStream<Instance> in
            let (source, usable) = try await datastore.readSource()
            let plan = datastore.plan(predicate, sortBy: sortBy, limit: limit, offset: offset, usable: usable)
            var matches = try datastore.matches(of: plan, predicate: predicate, source: source)
            if plan.sorts {
                let sorted = try datastore.sorted(&matches, by: sortBy, keeping: limit.map { $0 + offset })
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
        let (source, usable) = try await readSource()
        let plan = plan(predicate, sortBy: [], limit: nil, offset: 0, usable: usable)
        let matches = try matches(of: plan, predicate: predicate, source: source)
        var count = 0
        while try matches() != nil { count += 1 }
        return count
    }

    /// The first instance matching `predicate` in the order of `sortBy` (identifier order
    /// without descriptors), or nil.
    nonisolated(nonsending) public func first(where predicate: Predicate<Instance>,
                                              sortBy: [SortDescriptor<Instance>] = []) async throws(FolioError) -> Instance? {
        var iterator = fetch(where: predicate, sortBy: sortBy, limit: 1).makeAsyncIterator()
        return try await iterator.next()
    }

    /// Whether any instance matches `predicate` (reads until the first match).
    nonisolated(nonsending) public func contains(where predicate: Predicate<Instance>) async throws(FolioError) -> Bool {
        try await first(where: predicate) != nil
    }

    /// How ``fetch(where:sortBy:limit:offset:)`` would run this query now (which indexes are
    /// built decides), without running it.
    nonisolated(nonsending) public func explain(where predicate: Predicate<Instance>? = nil, sortBy: [SortDescriptor<Instance>] = [],
                                                limit: Int? = nil, offset: Int = 0) async throws(FolioError) -> QueryPlan {
        let (_, usable) = try await readSource()
        return plan(predicate, sortBy: sortBy, limit: limit, offset: offset, usable: usable).description
    }

    // MARK: Machinery

    func plan(_ predicate: Predicate<Instance>?, sortBy: [SortDescriptor<Instance>], limit: Int?, offset: Int,
              usable: Set<String>?) -> QueryPlanner<Format>.Plan {
        QueryPlanner(schema: schema, usable: usable)
            .plan(predicate.map(QueryCondition.of), hasPredicate: predicate != nil, sortBy: sortBy, limit: limit, offset: offset)
    }

    /// The matching instances, each with its identifier's key, in the plan's access order:
    /// a producer that reads the plan's scans one after the other, drops records seen
    /// already (a union, a many-to-many index) and those the predicate rejects.
    func matches(of plan: QueryPlanner<Format>.Plan, predicate: Predicate<Instance>?,
                 source: ReadSource) throws(FolioError) -> () throws(FolioError) -> (key: [UInt8], instance: Instance)? {
        typealias Scan = (tree: String, index: SchemaIndex<Instance>?, range: KeyRange)
        var scans: [Scan]
        if let index = plan.fullIndex {
            scans = [(index.tree, index, .all)]
        } else if plan.parts.isEmpty {
            scans = [(schema.recordsTree, nil, .all)]
        } else {
            scans = plan.parts.map { part in
                (part.index?.tree ?? schema.recordsTree, part.index, part.range.keyRange(part.index?.suffixedRanges ?? false))
            }
        }
        let direction = plan.direction
        let deduplicates = plan.deduplicates
        let datastore = self
        var cursor: Cursor?
        var current: Scan?
        var seen = Set<[UInt8]>()
        return { () throws(FolioError) -> (key: [UInt8], instance: Instance)? in
            while true {
                if cursor == nil {
                    guard !scans.isEmpty else { return nil }
                    let scan = scans.removeFirst()
                    current = scan
                    cursor = try FolioError.wrap { () throws(StorageError) in
                        try source.cursor(in: scan.tree, range: scan.range, direction: direction)
                    }
                }
                guard let entry = try FolioError.wrap({ () throws(StorageError) in try cursor!.next() }) else {
                    cursor = nil
                    continue
                }
                let key: [UInt8], instance: Instance
                if let index = current?.index {
                    guard let (identifier, _) = IndexEntry.decode(entry.value) else {
                        throw .corruptRecord(datastore: datastore.key, detail: "an entry of index \(index.name) is malformed")
                    }
                    if deduplicates && seen.contains(identifier) { continue }
                    key = identifier
                    instance = try datastore.instance(fromEntry: entry.value, of: index, source: source)
                } else {
                    if deduplicates && seen.contains(entry.key) { continue }
                    key = entry.key
                    instance = try datastore.schema.decode(entry.value, identifier: entry.key, core: datastore.core)
                }
                if deduplicates { seen.insert(key) }
                if let predicate {
                    let matches: Bool
                    do {
                        matches = try predicate.evaluate(instance)
                    } catch {
                        throw .predicateFailed(datastore: datastore.key, reason: "\(error)")
                    }
                    if !matches { continue }
                }
                return (key, instance)
            }
        }
    }

    /// Every match, sorted by `descriptors` then by identifier key. With `keeping`, only
    /// that many are kept while sorting (the first ones), so memory is bounded by the
    /// limit rather than by the number of matches.
    func sorted(_ matches: inout () throws(FolioError) -> (key: [UInt8], instance: Instance)?,
                by descriptors: [SortDescriptor<Instance>], keeping: Int?) throws(FolioError) -> [Instance] {
        func precedes(_ a: (key: [UInt8], instance: Instance), _ b: (key: [UInt8], instance: Instance)) -> Bool {
            for descriptor in descriptors {
                switch descriptor.compare(a.instance, b.instance) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return KeyBytes.compare(a.key, b.key) < 0
        }
        var kept: [(key: [UInt8], instance: Instance)] = []
        if let keeping {
            guard keeping > 0 else { return [] }
            // A bounded insertion: the array stays sorted and at most `keeping` long.
            while let match = try matches() {
                if kept.count == keeping, let last = kept.last, !precedes(match, last) { continue }
                var low = 0, high = kept.count
                while low < high {
                    let middle = (low + high) / 2
                    if precedes(match, kept[middle]) { high = middle } else { low = middle + 1 }
                }
                kept.insert(match, at: low)
                if kept.count > keeping { kept.removeLast() }
            }
        } else {
            while let match = try matches() { kept.append(match) }
            kept.sort(by: precedes)
        }
        return kept.map(\.instance)
    }
}
