import Synchronization
import FolioStorage

// The observer behind a live query.

/// A live query: the results of a range, kept up to date from each commit's changes.
///
/// Without a limit it is maintained incrementally: results whose records changed are
/// removed, and changed records whose new entries fall in the range are added (found by
/// binary search among the commit's new entries, shared by every live query of the
/// datastore, as are their decoded instances), so a commit costs the query what it changed,
/// not a re-run. With a limit, an affected query is re-run on the new snapshot (what falls
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
                found.append(
                    entry.key, decoded.identifier, try schema.decode(bytes, identifier: decoded.identifier, core: core))
            } else {
                found.append(entry.key, entry.key, try schema.decode(entry.value, identifier: entry.key, core: core))
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
        var failure: FolioError?
        let cache = delta.decoded(Format.self)
        let changed = results.withLock { results -> [Instance]? in
            // Remove every result whose record changed.
            var affected = results.removeAll { delta.changed($0) }
            // The changed records' entries that fall in the range, found by binary search in
            // the commit's sorted changes: already in sort-key order, so they merge with the
            // kept results in one pass (inserting one at a time would cost a whole result
            // set per insert when a commit rotates the results).
            var additions = QueryResults<Instance>()
            if let index {
                let added = delta.added(index: index.name, unique: index.unique)
                var position = lowerPosition(added.count) { added[$0].entryKey }
                while position < added.count, range.isBelowUpper(added[position].entryKey) {
                    switch schema.decodeAdded(
                        at: position, index: index.name, in: delta, cache: cache, added: added, core: core)
                    {
                    case .success(let instance)?:
                        additions.append(added[position].entryKey, added[position].identifier, instance)
                    case .failure(let error)?: failure = error
                    case nil: break
                    }
                    position += 1
                }
            } else {
                var position = lowerPosition(delta.entries.count) { delta.entries[$0].key }
                while position < delta.entries.count, range.isBelowUpper(delta.entries[position].key) {
                    let key = delta.entries[position].key
                    if delta.entries[position].kind != .deleted {
                        switch schema.decodeNew(key, in: delta, cache: cache, core: core) {
                        case .success(let instance)?: additions.append(key, key, instance)
                        case .failure(let error)?: failure = error
                        case nil: break
                        }
                    }
                    position += 1
                }
            }
            if additions.count > 0 {
                affected = true
                results = results.merged(with: additions)
            }
            return affected ? results.instances : nil
        }
        if let failure {
            channel.push(.failure(failure))
            channel.finish()
        } else if let changed {
            publish(changed)
        }
    }

    /// Whether a commit touches the query: a changed record among the results, or a
    /// changed record with an entry in the range.
    private func affects(_ delta: CommitDelta) -> Bool {
        if results.withLock({ $0.identifiers.contains { delta.changed($0) } }) { return true }
        if let index {
            let added = delta.added(index: index.name, unique: index.unique)
            let position = lowerPosition(added.count) { added[$0].entryKey }
            return position < added.count && range.isBelowUpper(added[position].entryKey)
        }
        var position = lowerPosition(delta.entries.count) { delta.entries[$0].key }
        while position < delta.entries.count, range.isBelowUpper(delta.entries[position].key) {
            if delta.entries[position].kind != .deleted { return true }
            position += 1
        }
        return false
    }

    /// The first of `count` sorted keys (`key(i)`) at or above the range's lower bound.
    private func lowerPosition(_ count: Int, key: (Int) -> [UInt8]) -> Int {
        partitionPoint(count) { range.isAboveLower(key($0)) }
    }

    private func publish(_ ascending: [Instance]) {
        // Results are kept in ascending key order; publish them in the query's order.
        channel.push(.success(order == .ascending ? ascending : ascending.reversed()))
    }
}
