import Synchronization
import FolioStorage

// The observer behind a live query.

/// A live query: the results of a range, kept up to date from each commit's changes.
///
/// Without a limit it is maintained incrementally from the commit's changes in the range
/// alone: the entries changed records had there are removed (each is a result), and the
/// entries they have there now are added, both found by binary search among the commit's
/// sorted entries and taken as runs (shared by every live query of the datastore, as are
/// the decoded instances), so a commit costs the query what it changed in its range, not a
/// re-run, and a commit that changes nothing there costs two binary searches. With a limit, an affected query is re-run on the new snapshot (what falls
/// past the limit is unknown).
final class LiveQueryObserver<Format: DatastoreFormat>: HubObserver {
    typealias Instance = Format.Instance
    let schema: DatastoreSchema<Format>
    let core: PersistenceCore
    let index: SchemaIndex<Instance>?
    let range: KeyRange
    let order: RangeOrder
    let limit: Int?
    let channel = EventChannel<Result<[Instance], FolioError>>(policy: .keepLatest)
    /// Queue-confined state: the results in ascending sort-key order.
    private let results = Mutex(QueryResults<Instance>())

    init(
        schema: DatastoreSchema<Format>, core: PersistenceCore, index: SchemaIndex<Instance>?, range: KeyRange,
        order: RangeOrder, limit: Int?
    ) {
        self.schema = schema
        self.core = core
        self.index = index
        self.range = range
        self.order = order
        self.limit = limit
    }

    var observedTree: String { schema.recordsTree }

    func start(at view: ReadView, hub: ObservationHub) {
        reload(at: view)
    }

    func reload(at view: ReadView) {
        do throws(FolioError) {
            let found = try query(view)
            results.withLock { $0 = found }
            publish(found.instances)
        } catch {
            channel.push(.failure(error))
            channel.finish()
        }
    }

    /// Runs the query on `view`; results in ascending sort-key order (limited in query order).
    private func query(_ view: ReadView) throws(FolioError) -> QueryResults<Instance> {
        let tree = index?.tree ?? schema.recordsTree
        var cursor = try FolioError.wrap { () throws(StorageError) in
            try view.cursor(in: tree, range: range, direction: order.direction)
        }
        var found = QueryResults<Instance>()
        while found.count < (limit ?? Int.max),
            let entry = try FolioError.wrap({ () throws(StorageError) in try cursor.next() })
        {
            if let index {
                guard let decoded = IndexEntry.decode(entry.value) else {
                    throw .corruptRecord(datastore: schema.key, detail: "an entry of index \(index.name) is malformed")
                }
                var bytes = decoded.record
                if bytes == nil {
                    bytes = try FolioError.wrap { () throws(StorageError) in
                        try view.get(decoded.identifier, in: schema.recordsTree)
                    }
                }
                guard let bytes else {
                    throw .corruptRecord(
                        datastore: schema.key, detail: "index \(index.name) refers to a missing record")
                }
                found.append(entry.key, try schema.decode(bytes[...], identifier: decoded.identifier, core: core))
            } else {
                found.append(entry.key, try schema.decode(entry.value[...], identifier: entry.key, core: core))
            }
        }
        if order == .descending { found.reverse() }
        return found
    }

    func apply(_ delta: CommitDelta) {
        if limit != nil {
            guard affects(delta), let view = delta.after else { return }
            reload(at: view)
            return
        }
        // Only the commit's changes in the range: the entries changed records had there
        // (each one a result: the results were exact) and the entries they have now.
        let name = index?.name, unique = index?.unique ?? false
        let removed = delta.removed(index: name, unique: unique)
        let added = delta.added(index: name, unique: unique)
        if !removed.complete || !added.complete {
            if let view = delta.after { reload(at: view) }
            return
        }
        let gone = removed.keys[removed.positions(in: range)]
        let positions = added.positions(in: range)
        if gone.isEmpty && positions.isEmpty { return }
        var additions = QueryResults<Instance>()
        if !positions.isEmpty {
            let decoded = schema.decodeAdded(
                positions, index: name, in: delta, cache: delta.decoded(Format.self), added: added, core: core)
            switch decoded.instances {
            case .failure(let error):
                channel.push(.failure(error))
                channel.finish()
                return
            case .success(let instances) where instances.count == positions.count:
                additions = QueryResults(sharing: added.keys, positions, instances: instances)
            case .success(let instances):
                // A changed record that is gone after all: leave it out.
                let present = positions.filter { decoded.run.isPresent($0) }
                additions = QueryResults(sortKeys: present.map { added.keys[$0] }, instances: instances)
            }
        }
        let changed = results.withLock { results -> [Instance]? in
            guard let replaced = results.replacing(gone, with: additions) else { return nil }
            results = replaced
            return replaced.instances
        }
        if let changed { publish(changed) }
    }

    /// Whether a commit touches the query: a changed record among the results, or a
    /// changed record with an entry in the range.
    private func affects(_ delta: CommitDelta) -> Bool {
        let name = index?.name, unique = index?.unique ?? false
        let removed = delta.removed(index: name, unique: unique), added = delta.added(index: name, unique: unique)
        if !removed.complete || !added.complete { return true }
        let gone = removed.keys[removed.positions(in: range)]
        if !gone.isEmpty && results.withLock({ $0.containsAny(gone) }) { return true }
        return !added.positions(in: range).isEmpty
    }

    private func publish(_ ascending: [Instance]) {
        // Results are kept in ascending key order; publish them in the query's order.
        channel.push(.success(order == .ascending ? ascending : ascending.reversed()))
    }
}
