import Foundation
import Synchronization
import FolioStorage

// The observer behind a live query over a predicate.

/// A live query over a predicate: its results, kept up to date from each commit's changes
/// by evaluating the changed records against the predicate (Dflat's approach), never by
/// re-running the query, except in one case: with a limit, when a commit removes one of a
/// full page of results, what should take its place is unknown, and the query re-runs.
///
/// Which changed records to evaluate comes from the query's plan (``QueryPlanner``): only
/// those whose identifier, or whose new entry in the plan's index, falls in the plan's key
/// ranges, found by binary search among the commit's sorted changes (shared with the
/// other live queries of the datastore), as the index live queries do. Without an access
/// range every changed record is evaluated. With an exact plan none is evaluated at all.
///
/// The results are kept sorted by the descriptors, ties by identifier key: exactly the
/// order `fetch(where:sortBy:limit:)` returns.
final class PredicateQueryObserver<Format: DatastoreFormat>: HubObserver {
    typealias Instance = Format.Instance
    typealias Result = (key: [UInt8], instance: Instance)
    let schema: DatastoreSchema<Format>
    let core: PersistenceCore
    let predicate: Predicate<Instance>
    /// `predicate`, compiled once for the life of the live query: every reload and every
    /// commit's changed records are checked with it.
    let compiled: CompiledPredicate<Instance>
    let sortBy: [SortDescriptor<Instance>]
    let limit: Int?
    /// How changed records are picked (see the type's comment). `nonisolated(unsafe)`: made
    /// once in `init` and never changed; its ranges and their closures hold only immutable
    /// values (encoded keys, key paths), and it is read on the hub's serial queue only.
    nonisolated(unsafe) let plan: QueryPlanner<Format>.Plan
    let channel = EventChannel<Swift.Result<[Instance], FolioError>>(policy: .keepLatest)
    /// Queue-confined state (the hub's serial queue): the results in order.
    private let results = Mutex<[(key: [UInt8], instance: Instance)]>([])

    /// `usable`: the indexes built when the query starts (nil: all declared ones); `gaps`:
    /// the records they leave out then.
    init(
        schema: DatastoreSchema<Format>, core: PersistenceCore, predicate: Predicate<Instance>,
        sortBy: [SortDescriptor<Instance>], limit: Int?, usable: Set<String>?, gaps: IndexGaps
    ) {
        self.schema = schema
        self.core = core
        self.predicate = predicate
        compiled = CompiledPredicate(predicate)
        self.sortBy = sortBy
        self.limit = limit
        plan = QueryPlanner(schema: schema, usable: usable, gaps: gaps)
            .plan(QueryCondition.of(predicate), hasPredicate: true, sortBy: sortBy, limit: nil, offset: 0)
        // One scan that streams in the requested order: its changed entries, read in key
        // order, are in result order too. Not a merge join's scan: its results are in
        // identifier order, not in the order of the index entries it reads.
        inScanOrder = !plan.sorts && plan.parts.count == 1 && !plan.merges
    }

    /// Whether candidates come in result order (see ``merged(_:with:)``).
    private let inScanOrder: Bool

    var observedTree: String { schema.recordsTree }

    func start(at view: ReadView, hub: ObservationHub) {
        reload(at: view)
    }

    func reload(at view: ReadView) {
        do throws(FolioError) {
            // Through the plan made at start, over the indexes built then.
            let found = try QueryExecution(schema: schema, core: core)
                .run(plan, predicate: compiled, sortBy: sortBy, limit: limit, source: .view(view))
            results.withLock { $0 = found }
            channel.push(.success(found.map(\.instance)))
        } catch {
            channel.push(.failure(error))
            channel.finish()
        }
    }

    func apply(_ delta: CommitDelta) {
        let cache = delta.decoded(Format.self)
        var failure: FolioError?
        var rerun = false
        let changed = results.withLock { results -> [Instance]? in
            let wasFull = limit.map { results.count >= $0 } ?? false
            let before = results.count
            results.removeAll { delta.changed($0.key) }
            let removed = results.count < before
            var additions: [Result] = []
            for (key, decoded) in candidates(in: delta, cache: cache) {
                switch decoded {
                case .success(let instance)?:
                    do {
                        guard try plan.exact || compiled.evaluate(instance) else { continue }
                    } catch {
                        failure = .predicateFailed(datastore: schema.key, reason: "\(error)")
                        return nil
                    }
                    additions.append((key: key, instance: instance))
                case .failure(let error)?:
                    failure = error
                    return nil
                case nil:
                    break
                }
            }
            let added = !additions.isEmpty
            if added { results = merged(results, with: additions) }
            if let limit {
                if removed && wasFull {
                    rerun = true
                    return nil
                }
                if results.count > limit { results.removeLast(results.count - limit) }
            }
            return removed || added ? results.map(\.instance) : nil
        }
        if let failure {
            channel.push(.failure(failure))
            channel.finish()
        } else if rerun, let view = delta.after {
            reload(at: view)
        } else if let changed {
            channel.push(.success(changed))
        }
    }

    /// The changed records that may now match, each with its identifier key and new
    /// instance (nil: deleted, which the removal already handled), without duplicates.
    private func candidates(
        in delta: CommitDelta, cache: DecodedChanges<Format>
    )
        -> [(key: [UInt8], decoded: Swift.Result<Instance, FolioError>?)]
    {
        if plan.parts.isEmpty {
            return delta.entries.filter { $0.kind != .deleted }.map {
                ($0.key, schema.decodeNew($0.key, in: delta, cache: cache, core: core))
            }
        }
        var found: [(key: [UInt8], decoded: Swift.Result<Instance, FolioError>?)] = []
        // Only a union or a many-to-many index can name a record twice.
        let deduplicates = plan.deduplicates
        var seen = Set<[UInt8]>()
        for part in plan.parts {
            if let index = part.index {
                let range = part.range.keyRange(index.suffixedRanges)
                let added = delta.added(index: index.name, unique: index.unique)
                var position = partitionPoint(added.count) { range.isAboveLower(added[$0].entryKey) }
                while position < added.count, range.isBelowUpper(added[position].entryKey) {
                    let identifier = added[position].identifier
                    if !deduplicates || seen.insert(identifier).inserted {
                        found.append(
                            (
                                identifier,
                                schema.decodeAdded(
                                    at: position, index: index.name, in: delta, cache: cache,
                                    added: added, core: core)
                            ))
                    }
                    position += 1
                }
            } else {
                let range = part.range.keyRange(false)
                var position = partitionPoint(delta.entries.count) { range.isAboveLower(delta.entries[$0].key) }
                while position < delta.entries.count, range.isBelowUpper(delta.entries[position].key) {
                    let entry = delta.entries[position]
                    if entry.kind != .deleted, !deduplicates || seen.insert(entry.key).inserted {
                        found.append((entry.key, schema.decodeNew(entry.key, in: delta, cache: cache, core: core)))
                    }
                    position += 1
                }
            }
        }
        return found
    }

    /// `results` and `additions` in one sorted array. The additions come in the plan's scan
    /// order, which is the results' order when the plan needs no sort step (a sort the
    /// index already gives, or identifier order): then they are merged as they are, with no
    /// comparison at all when the results are empty (a commit that replaced them all).
    /// Otherwise they are sorted first. One pass either way: inserting one at a time would
    /// move the whole array per insert.
    private func merged(_ results: [Result], with additions: [Result]) -> [Result] {
        var additions = additions
        if inScanOrder {
            if plan.direction == .reverse { additions.reverse() }
        } else {
            additions.sort(by: precedes)
        }
        if results.isEmpty { return additions }
        var merged: [Result] = []
        merged.reserveCapacity(results.count + additions.count)
        var i = 0, j = 0
        while i < results.count && j < additions.count {
            if precedes(additions[j], results[i]) {
                merged.append(additions[j])
                j += 1
            } else {
                merged.append(results[i])
                i += 1
            }
        }
        merged.append(contentsOf: results[i...])
        merged.append(contentsOf: additions[j...])
        return merged
    }

    private func precedes(_ a: Result, _ b: Result) -> Bool {
        QueryExecution<Format>.precedes(a, b, by: sortBy)
    }
}
