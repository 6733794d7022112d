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
    private let results = Mutex(IdentifiedResults<Instance>())

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
        wholeRange =
            plan.exact && plan.parts.count == 1 && !plan.deduplicates && limit == nil
            && plan.identifierRanges.isEmpty
    }

    /// Whether candidates come in result order (see ``merged(_:with:)``).
    private let inScanOrder: Bool
    /// Whether the results are every record with an entry in the plan's one range: one
    /// exact scan, no limit, nothing dropped by identifier.
    private let wholeRange: Bool

    var observedTree: String { schema.recordsTree }

    func start(at view: ReadView, hub: ObservationHub) {
        reload(at: view)
    }

    func reload(at view: ReadView) {
        do throws(FolioError) {
            // Through the plan made at start, over the indexes built then.
            let found = try QueryExecution(schema: schema, core: core)
                .run(plan, predicate: compiled, sortBy: sortBy, limit: limit, source: .view(view))
            let kept = IdentifiedResults(found)
            results.withLock { $0 = kept }
            channel.push(.success(kept.instances))
        } catch {
            channel.push(.failure(error))
            channel.finish()
        }
    }

    func apply(_ delta: CommitDelta) {
        let additions: IdentifiedResults<Instance>
        switch candidates(in: delta, cache: delta.decoded(Format.self)) {
        case .failure(let error):
            channel.push(.failure(error))
            channel.finish()
            return
        case .success(let found):
            additions = found
        }
        var rerun = false
        let changed = results.withLock { results -> [Instance]? in
            let wasFull = limit.map { results.count >= $0 } ?? false
            // Every result whose record changed goes; those that still match come back among
            // the additions.
            let removed = remove(from: &results, delta)
            let added = additions.count > 0
            if added { results = merged(results, with: additions) }
            if let limit {
                if removed && wasFull {
                    rerun = true
                    return nil
                }
                if results.count > limit { results.removeLast(results.count - limit) }
            }
            return removed || added ? results.instances : nil
        }
        if rerun, let view = delta.after {
            reload(at: view)
        } else if let changed {
            channel.push(.success(changed))
        }
    }

    /// Removes the results whose record changed; whether any went. Only the changed records
    /// that were in the plan's ranges before the commit can be results (every result was
    /// found through them), so a commit with none there costs a binary search per range;
    /// otherwise each result is probed (its hash is kept) against those records.
    private func remove(from results: inout IdentifiedResults<Instance>, _ delta: CommitDelta) -> Bool {
        if results.count == 0 { return false }
        // No access range: any changed record may have been a result.
        if plan.parts.isEmpty { return results.remove(in: delta.changedIdentifiers) }
        var runs: [(entries: ChangedEntries, positions: Range<Int>)] = []
        for part in plan.parts {
            if let index = part.index {
                let entries = delta.removed(index: index.name, unique: index.unique)
                // Old entries unknown: match every changed identifier instead.
                guard entries.complete else { return results.remove(in: delta.changedIdentifiers) }
                runs.append((entries, entries.positions(in: part.range.keyRange(index.suffixedRanges))))
            } else {
                let entries = delta.removed(index: nil, unique: false)
                runs.append((entries, entries.positions(in: part.range.keyRange(false))))
            }
        }
        let count = runs.reduce(0) { $0 + $1.positions.count }
        if count == 0 { return false }
        // The results are then exactly the records with an entry in the one range, so as
        // many changed ones there as results is all of them: no probe.
        if wholeRange && count >= results.count {
            results = IdentifiedResults()
            return true
        }
        var keys: [[UInt8]] = [], hashes: [Int] = []
        keys.reserveCapacity(count)
        hashes.reserveCapacity(count)
        for (entries, positions) in runs {
            keys += entries.identifiers[positions]
            hashes += entries.hashes[positions]
        }
        return results.remove(in: KeyTable(keys, hashes: hashes))
    }

    /// The changed records that now match, with their identifier keys, in the plan's scan
    /// order, without duplicates: those whose new entry in the plan's index, or identifier,
    /// falls in the plan's ranges (every changed record, without an access range).
    private func candidates(
        in delta: CommitDelta, cache: DecodedChanges<Format>
    ) -> Swift.Result<IdentifiedResults<Instance>, FolioError> {
        var found = IdentifiedResults<Instance>()
        // Only a union or a many-to-many index can name a record twice.
        let deduplicates = plan.deduplicates
        var seen = Set<HashedKey>()
        /// Adds the matching records of `entries[positions]`; the first failure, if any.
        func take(_ entries: ChangedEntries, _ positions: Range<Int>, index: String?) -> FolioError? {
            guard !positions.isEmpty else { return nil }
            let decoded = schema.decodeAdded(
                positions, index: index, in: delta, cache: cache, added: entries, core: core)
            let instances: [Instance]
            switch decoded.instances {
            case .failure(let error): return error
            case .success(let decoded): instances = decoded
            }
            let complete = instances.count == positions.count
            if plan.exact && !deduplicates && complete && found.count == 0 {
                // Every candidate matches: the run as it is.
                found = IdentifiedResults(
                    sharing: entries.identifiers, positions, hashes: Array(entries.hashes[positions]),
                    instances: instances)
                return nil
            }
            let present = complete ? Array(positions) : positions.filter { decoded.run.isPresent($0) }
            for (offset, position) in present.enumerated() {
                let identifier = entries.identifiers[position]
                if deduplicates && !seen.insert(HashedKey(identifier)).inserted { continue }
                do {
                    guard try plan.exact || compiled.evaluate(instances[offset]) else { continue }
                } catch {
                    return .predicateFailed(datastore: schema.key, reason: "\(error)")
                }
                found.append(identifier, hash: entries.hashes[position], instances[offset])
            }
            return nil
        }
        if plan.parts.isEmpty {
            let entries = delta.added(index: nil, unique: false)
            if let failure = take(entries, 0..<entries.count, index: nil) { return .failure(failure) }
            return .success(found)
        }
        for part in plan.parts {
            let entries: ChangedEntries, range: KeyRange
            if let index = part.index {
                entries = delta.added(index: index.name, unique: index.unique)
                range = part.range.keyRange(index.suffixedRanges)
            } else {
                entries = delta.added(index: nil, unique: false)
                range = part.range.keyRange(false)
            }
            if let failure = take(entries, entries.positions(in: range), index: part.index?.name) {
                return .failure(failure)
            }
        }
        return .success(found)
    }

    /// `results` and `additions` in one sorted array. The additions come in the plan's scan
    /// order, which is the results' order when the plan needs no sort step (a sort the
    /// index already gives, or identifier order): then they are merged as they are, with no
    /// comparison at all when the results are empty (a commit that replaced them all).
    /// Otherwise they are sorted first. One pass either way: inserting one at a time would
    /// move the whole array per insert.
    private func merged(
        _ results: IdentifiedResults<Instance>, with additions: IdentifiedResults<Instance>
    ) -> IdentifiedResults<Instance> {
        var additions = additions
        if inScanOrder {
            if plan.direction == .reverse { additions.reverse() }
        } else {
            additions = additions.reordered(
                Array(0..<additions.count).sorted { precedes(additions[$0], additions[$1]) })
        }
        if results.count == 0 { return additions }
        var merged = IdentifiedResults<Instance>()
        merged.reserve(results.count + additions.count)
        var i = 0, j = 0
        while i < results.count && j < additions.count {
            if precedes(additions[j], results[i]) {
                merged.append(additions, at: j)
                j += 1
            } else {
                merged.append(results, at: i)
                i += 1
            }
        }
        merged.append(contentsOf: results, i..<results.count)
        merged.append(contentsOf: additions, j..<additions.count)
        return merged
    }

    private func precedes(_ a: Result, _ b: Result) -> Bool {
        QueryExecution<Format>.precedes(a, b, by: sortBy)
    }
}
