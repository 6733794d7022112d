import Foundation
import FolioStorage

/// Runs a ``QueryPlanner`` plan: reads its scans, checks every record against the whole
/// predicate, drops duplicates, and sorts when the plan says so. Shared by the datastore's
/// queries (Datastore+Query.swift) and the live queries over predicates
/// (PredicateQueryObserver.swift).
struct QueryExecution<Format: DatastoreFormat> {
    typealias Instance = Format.Instance
    let schema: DatastoreSchema<Format>
    let core: PersistenceCore

    /// The matching instances, each with its identifier's key: a producer that reads the
    /// plan's scans, drops records seen already (a union, a many-to-many index) and those the
    /// predicate rejects. A merge-join plan (``QueryPlanner/Plan/merges``) yields them in
    /// identifier order, any other in its access order.
    func matches(
        of plan: QueryPlanner<Format>.Plan, predicate: CompiledPredicate<Instance>?,
        source: ReadSource
    ) throws(FolioError) -> () throws(FolioError) -> (key: [UInt8], instance: Instance)? {
        if let single = try pointLookup(of: plan, predicate: predicate, source: source) { return single }
        let next = plan.merges ? try mergedEntries(of: plan, source: source) : entries(of: plan, source: source)
        let exact = plan.exact
        // The records side of the join: one forward cursor over the records tree, made at
        // the first record an index entry refers to.
        var records: Cursor?
        return { () throws(FolioError) -> (key: [UInt8], instance: Instance)? in
            while let (identifier, record, index) = try next() {
                let instance: Instance
                if let record {
                    instance = try schema.decode(record, identifier: identifier, source: source, core: core)
                } else {
                    instance = try schema.read(
                        identifier, referencedBy: index, through: &records, source: source, core: core)
                }
                if let predicate, !exact {
                    let matches: Bool
                    do {
                        matches = try predicate.evaluate(instance)
                    } catch {
                        throw .predicateFailed(datastore: schema.key, reason: "\(error)")
                    }
                    if !matches { continue }
                }
                return (identifier, instance)
            }
            return nil
        }
    }

    /// The identifier keys of every match, without reading or decoding a record, when the
    /// plan's scans read exactly the matches (no predicate, or an exact plan): what
    /// `delete(where:)` needs, since a delete uses the index keys stored with each record.
    /// Nil when records must be decoded and checked against the predicate.
    func exactIdentifiers(
        of plan: QueryPlanner<Format>.Plan, hasPredicate: Bool,
        source: ReadSource
    ) throws(FolioError) -> [[UInt8]]? {
        guard plan.exact || !hasPredicate else { return nil }
        let next = entries(of: plan, source: source)
        var identifiers: [[UInt8]] = []
        while let named = try next() { identifiers.append(named.identifier) }
        return identifiers
    }

    /// What a scan names: a record's identifier, the record's bytes when the entry holds
    /// them (the records tree, a covering index; nil: read the record by identifier), and
    /// the index the entry came from (nil: the records tree).
    typealias Named = (identifier: [UInt8], record: ArraySlice<UInt8>?, index: SchemaIndex<Instance>?)

    /// The entries a plan's scans read, one after the other; with `deduplicates` (the
    /// plan's, by default) an identifier seen already (a union, a many-to-many index) is
    /// dropped. Nothing is decoded beyond the index entry's identifier.
    func entries(
        of plan: QueryPlanner<Format>.Plan, source: ReadSource, deduplicates: Bool? = nil
    ) -> () throws(FolioError) -> Named? {
        var scans = scans(of: plan)
        let direction = plan.direction
        let deduplicates = deduplicates ?? plan.deduplicates
        let identifierRanges = plan.identifierRanges
        var cursor: Cursor?
        var current: Scan?
        var seen = Set<[UInt8]>()
        return { () throws(FolioError) -> Named? in
            while true {
                if cursor == nil {
                    guard !scans.isEmpty else { return nil }
                    let scan = scans.removeFirst()
                    current = scan
                    cursor = try FolioError.wrap { () throws(StorageError) in
                        try source.cursor(in: scan.tree, range: scan.range, direction: direction)
                    }
                }
                guard let entry = try FolioError.wrap({ () throws(StorageError) in try cursor!.nextSlices() }) else {
                    cursor = nil
                    continue
                }
                var identifier = Array(entry.key)
                var record: ArraySlice<UInt8>? = entry.value
                if let index = current?.index {
                    guard let (referenced, held) = IndexEntry.decode(entry.value) else {
                        throw .corruptRecord(
                            datastore: schema.key, detail: "an entry of index \(index.name) is malformed")
                    }
                    identifier = referenced
                    record = held
                }
                // Outside an identifier condition every match must meet: not a match.
                if !identifierRanges.isEmpty, !identifierRanges.allSatisfy({ $0.contains(identifier) }) { continue }
                if deduplicates, !seen.insert(identifier).inserted { continue }
                return (identifier, record, current?.index)
            }
        }
    }

    /// One tree range a plan reads, and the index it belongs to (nil: the records tree).
    typealias Scan = (tree: String, index: SchemaIndex<Instance>?, range: KeyRange)

    /// The ranges a plan reads, in order.
    func scans(of plan: QueryPlanner<Format>.Plan) -> [Scan] {
        if let index = plan.fullIndex { return [(index.tree, index, .all)] }
        if plan.parts.isEmpty { return [(schema.recordsTree, nil, .all)] }
        return plan.parts.map { part in
            (
                part.index?.tree ?? schema.recordsTree, part.index,
                part.range.keyRange(part.index?.suffixedRanges ?? false)
            )
        }
    }

    /// Every match, sorted by `descriptors` then by identifier key. With `keeping`, only
    /// that many are kept while sorting (the first ones), so memory is bounded by the
    /// limit rather than by the number of matches.
    func sorted(
        _ matches: inout () throws(FolioError) -> (key: [UInt8], instance: Instance)?,
        by descriptors: [SortDescriptor<Instance>], keeping: Int?
    ) throws(FolioError) -> [(key: [UInt8], instance: Instance)] {
        func precedes(_ a: (key: [UInt8], instance: Instance), _ b: (key: [UInt8], instance: Instance)) -> Bool {
            Self.precedes(a, b, by: descriptors)
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
        return kept
    }

    /// Every match of a query, sorted by `descriptors` (ties by identifier), at most `limit`:
    /// what a live query over a predicate holds.
    func run(
        _ plan: QueryPlanner<Format>.Plan, predicate: CompiledPredicate<Instance>,
        sortBy descriptors: [SortDescriptor<Instance>],
        limit: Int?, source: ReadSource
    ) throws(FolioError) -> [(key: [UInt8], instance: Instance)] {
        var matches = try self.matches(of: plan, predicate: predicate, source: source)
        return try sorted(&matches, by: descriptors, keeping: limit)
    }

    /// The order of query results: by the descriptors, then by identifier key (what every
    /// query and live query returns; no descriptors is identifier order).
    static func precedes(
        _ a: (key: [UInt8], instance: Instance), _ b: (key: [UInt8], instance: Instance),
        by descriptors: [SortDescriptor<Instance>]
    ) -> Bool {
        for descriptor in descriptors {
            switch descriptor.compare(a.instance, b.instance) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: continue
            }
        }
        return KeyBytes.compare(a.key, b.key) < 0
    }

    /// A plan that is one identifier (`id == x`): one `get`, as `load` does, instead of a
    /// cursor (a seek and a leaf batch for one record). Nil for any other plan.
    private func pointLookup(
        of plan: QueryPlanner<Format>.Plan, predicate: CompiledPredicate<Instance>?,
        source: ReadSource
    ) throws(FolioError) -> (() throws(FolioError) -> (key: [UInt8], instance: Instance)?)? {
        guard plan.fullIndex == nil, plan.parts.count == 1, plan.parts[0].index == nil,
            plan.parts[0].range.kind == .equal,
            case .included(let key)? = plan.parts[0].range.bounds?.lower
        else { return nil }
        var match: (key: [UInt8], instance: Instance)?
        if let instance = try schema.read(key, from: source, core: core) {
            var matches = true
            if let predicate, !plan.exact {
                do {
                    matches = try predicate.evaluate(instance)
                } catch {
                    throw .predicateFailed(datastore: schema.key, reason: "\(error)")
                }
            }
            if matches { match = (key, instance) }
        }
        return { () throws(FolioError) -> (key: [UInt8], instance: Instance)? in
            defer { match = nil }
            return match
        }
    }
}
