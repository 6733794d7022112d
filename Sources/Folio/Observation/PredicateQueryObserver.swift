import Foundation
import Synchronization
import FolioStorage

// The observer behind a live query over a predicate.

/// A live query over a predicate: its results, kept up to date from each commit's changes
/// by evaluating the changed records against the predicate (Dflat's approach), never by
/// re-running the query, except in one case: with a limit, when a commit removes one of a
/// full page of results, what should take its place is unknown, and the query re-runs.
///
/// The results are kept sorted by the descriptors, ties by identifier key: exactly the
/// order `fetch(where:sortBy:limit:)` returns.
final class PredicateQueryObserver<Format: DatastoreFormat>: HubObserver {
    typealias Instance = Format.Instance
    typealias Result = (key: [UInt8], instance: Instance)
    let schema: DatastoreSchema<Format>
    let core: PersistenceCore
    let predicate: Predicate<Instance>
    let sortBy: [SortDescriptor<Instance>]
    let limit: Int?
    let channel = EventChannel<Swift.Result<[Instance], FolioError>>(policy: .keepLatest)
    /// Queue-confined state (the hub's serial queue): the results in order.
    private let results = Mutex<[(key: [UInt8], instance: Instance)]>([])

    init(schema: DatastoreSchema<Format>, core: PersistenceCore, predicate: Predicate<Instance>,
         sortBy: [SortDescriptor<Instance>], limit: Int?) {
        self.schema = schema
        self.core = core
        self.predicate = predicate
        self.sortBy = sortBy
        self.limit = limit
    }

    var datastoreKey: String { schema.key }

    func start(at view: ReadView, hub: ObservationHub) {
        reload(at: view)
    }

    func reload(at view: ReadView) {
        do throws(FolioError) {
            // No index: whether each is built is the datastore's to resolve, and a re-run is
            // the rare case (start, a full page losing a result, lost history).
            let found = try QueryExecution(schema: schema, core: core)
                .run(predicate, sortBy: sortBy, limit: limit, source: .view(view), usable: [])
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
            var added = false
            for entry in delta.entries where entry.kind != .deleted {
                switch schema.decodeNew(entry.key, in: delta, cache: cache, core: core) {
                case .success(let instance)?:
                    do {
                        guard try predicate.evaluate(instance) else { continue }
                    } catch {
                        failure = .predicateFailed(datastore: schema.key, reason: "\(error)")
                        return nil
                    }
                    results.insert((entry.key, instance), at: insertionPoint(of: (entry.key, instance), in: results))
                    added = true
                case .failure(let error)?:
                    failure = error
                    return nil
                case nil:
                    break
                }
            }
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

    /// Where `result` goes among the sorted `results` (after every result that precedes it).
    private func insertionPoint(of result: Result, in results: [Result]) -> Int {
        partitionPoint(results.count) { !precedes(results[$0], result) }
    }

    private func precedes(_ a: Result, _ b: Result) -> Bool {
        QueryExecution<Format>.precedes(a, b, by: sortBy)
    }
}
