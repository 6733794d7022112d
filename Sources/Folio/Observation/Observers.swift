import Foundation
import Synchronization
import FolioStorage

/// Decoding of changed records for observers, shared through the commit delta.
extension DatastoreSchema {
    func decodeOld(_ identifier: [UInt8], in delta: CommitDelta, core: PersistenceCore) -> Result<Format.Instance, FolioError>? {
        let cache = delta.decoded(Format.self), key = HashedKey(identifier)
        if let known = cache.old[key] { return known }
        let result = delta.oldRecord(identifier).map { record in
            Result { () throws(FolioError) in try decode(record, identifier: identifier, core: core) }
        }
        cache.old[key] = .some(result)
        return result
    }

    func decodeNew(_ identifier: [UInt8], in delta: CommitDelta, core: PersistenceCore) -> Result<Format.Instance, FolioError>? {
        decodeNew(identifier, in: delta, cache: delta.decoded(Format.self), core: core)
    }

    func decodeNew(_ identifier: [UInt8], in delta: CommitDelta, cache: DecodedChanges<Format>,
                   core: PersistenceCore) -> Result<Format.Instance, FolioError>? {
        let key = HashedKey(identifier)
        if let known = cache.new[key] { return known }
        let result = delta.newRecord(identifier).map { record in
            Result { () throws(FolioError) in try decode(record, identifier: identifier, core: core) }
        }
        cache.new[key] = .some(result)
        return result
    }

    /// The new instance of `delta.added(index:)[position]`, decoded once for every live
    /// query of the commit (a position lookup, no hashing).
    func decodeAdded(at position: Int, index: String, in delta: CommitDelta, cache: DecodedChanges<Format>,
                     added: [(entryKey: [UInt8], identifier: [UInt8])], core: PersistenceCore) -> Result<Format.Instance, FolioError>? {
        if cache.added[index] == nil { cache.added[index] = Array(repeating: nil, count: added.count) }
        if let known = cache.added[index]![position] { return known }
        let result = decodeNew(added[position].identifier, in: delta, cache: cache, core: core)
        cache.added[index]![position] = .some(result)
        return result
    }

    func identifier(from key: [UInt8]) -> Format.Identifier? {
        var decoder = KeyDecoder(key)
        return try? decoder.decode(Format.Identifier.self)
    }
}

/// ``Datastore/observe(after:bufferLimit:)``: every change, with old and new values.
final class EventsObserver<Format: DatastoreFormat>: HubObserver {
    typealias Event = DatastoreEvent<Format.Instance, Format.Identifier>
    let schema: DatastoreSchema<Format>
    let core: PersistenceCore
    let channel: EventChannel<Event>
    let resumeAfter: ObservationToken?

    init(schema: DatastoreSchema<Format>, core: PersistenceCore, bufferLimit: Int, resumeAfter: ObservationToken?) {
        self.schema = schema
        self.core = core
        channel = EventChannel(policy: .signalOverflow(limit: max(1, bufferLimit)))
        self.resumeAfter = resumeAfter
    }

    var datastoreKey: String { schema.key }

    func start(at view: ReadView, hub: ObservationHub) {
        guard let token = resumeAfter, token.generation < view.generation else { return }
        let replayed = hub.replayHistory(after: token, upTo: view) { batch in
            for commit in batch {
                let entries = commit.changes.changes(in: schema.recordsTree)
                guard !entries.isEmpty else { continue }
                apply(CommitDelta(key: schema.key, token: ObservationToken(generation: commit.generation),
                                  before: commit.before, after: commit.after, entries: entries))
            }
        }
        // History not (fully) replayable: say so rather than miss changes silently.
        if !replayed { channel.push(.reload(token: ObservationToken(generation: view.generation))) }
    }

    func apply(_ delta: CommitDelta) {
        for entry in delta.entries {
            guard let identifier = schema.identifier(from: entry.key) else {
                channel.push(.failure(.corruptRecord(datastore: schema.key, detail: "a changed identifier does not decode"), token: delta.token))
                continue
            }
            var change = Change<Format.Instance, Format.Identifier>(kind: .created, identifier: identifier, oldValue: nil,
                                                                    newValue: nil, token: delta.token)
            var failure: FolioError?
            switch entry.kind {
            case .created: change.kind = .created
            case .updated: change.kind = .updated
            case .deleted: change.kind = .deleted
            }
            if entry.kind != .created {
                switch schema.decodeOld(entry.key, in: delta, core: core) {
                case .success(let old)?: change.oldValue = old
                case .failure(let error)?: failure = error
                case nil: break
                }
            }
            if entry.kind != .deleted {
                switch schema.decodeNew(entry.key, in: delta, core: core) {
                case .success(let new)?: change.newValue = new
                case .failure(let error)?: failure = error
                case nil: break
                }
            }
            if let failure {
                channel.push(.failure(failure, token: delta.token))
            } else {
                channel.push(.change(change))
            }
        }
    }

    func reload(at view: ReadView) {
        channel.push(.reload(token: ObservationToken(generation: view.generation)))
    }
}

/// ``Datastore/observe(_:bufferLimit:)``: one instance, until it is deleted.
final class InstanceObserver<Format: DatastoreFormat>: HubObserver {
    let schema: DatastoreSchema<Format>
    let core: PersistenceCore
    let identifier: [UInt8]
    let channel: EventChannel<InstanceEvent<Format.Instance>>
    private let ended = Atomic<Bool>(false)

    init(schema: DatastoreSchema<Format>, core: PersistenceCore, identifier: [UInt8], bufferLimit: Int) {
        self.schema = schema
        self.core = core
        self.identifier = identifier
        channel = EventChannel(policy: .restartFromNewest(limit: max(1, bufferLimit)))
    }

    var datastoreKey: String { schema.key }

    func start(at view: ReadView, hub: ObservationHub) {
        reload(at: view)
    }

    func apply(_ delta: CommitDelta) {
        guard !ended.load(ordering: .relaxed) else { return }
        guard let position = binarySearch(delta.entries) else { return }
        if delta.entries[position].kind == .deleted {
            end()
            return
        }
        switch schema.decodeNew(identifier, in: delta, core: core) {
        case .success(let value)?: channel.push(.value(value))
        case .failure(let error)?: channel.push(.failure(error))
        case nil: break
        }
    }

    private func binarySearch(_ entries: [ChangeRecord.Entry]) -> Int? {
        let position = partitionPoint(entries.count) { KeyBytes.compare(entries[$0].key, identifier) >= 0 }
        return position < entries.count && entries[position].key == identifier ? position : nil
    }

    func reload(at view: ReadView) {
        guard !ended.load(ordering: .relaxed) else { return }
        do throws(FolioError) {
            guard let bytes = try FolioError.wrap({ () throws(StorageError) in try view.get(identifier, in: schema.recordsTree) }) else {
                end()
                return
            }
            channel.push(.value(try schema.decode(bytes, identifier: identifier, core: core)))
        } catch {
            channel.push(.failure(error))
        }
    }

    private func end() {
        guard !ended.exchange(true, ordering: .relaxed) else { return }
        channel.push(.deleted)
        channel.finish()
    }
}

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

    init(schema: DatastoreSchema<Format>, core: PersistenceCore, index: SchemaIndex<Instance>?, range: KeyRange,
         order: RangeOrder, limit: Int?) {
        self.schema = schema
        self.core = core
        self.index = index
        self.range = range
        self.order = order
        self.limit = limit
    }

    var datastoreKey: String { schema.key }

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
        var cursor = try FolioError.wrap { () throws(StorageError) in try view.cursor(in: tree, range: range, direction: order.direction) }
        var found = QueryResults<Instance>()
        while found.count < (limit ?? Int.max), let entry = try FolioError.wrap({ () throws(StorageError) in try cursor.next() }) {
            if let index {
                guard let decoded = IndexEntry.decode(entry.value) else {
                    throw .corruptRecord(datastore: schema.key, detail: "an entry of index \(index.name) is malformed")
                }
                var bytes = decoded.record
                if bytes == nil {
                    bytes = try FolioError.wrap { () throws(StorageError) in try view.get(decoded.identifier, in: schema.recordsTree) }
                }
                guard let bytes else { throw .corruptRecord(datastore: schema.key, detail: "index \(index.name) refers to a missing record") }
                found.append(entry.key, decoded.identifier, try schema.decode(bytes, identifier: decoded.identifier, core: core))
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
                    switch schema.decodeAdded(at: position, index: index.name, in: delta, cache: cache, added: added, core: core) {
                    case .success(let instance)?: additions.append(added[position].entryKey, added[position].identifier, instance)
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

/// A live query's results in ascending sort-key order, as parallel arrays: publishing
/// shares `instances` (copy on write) instead of building a new array each commit.
struct QueryResults<Instance: Sendable>: Sendable {
    private(set) var sortKeys: [[UInt8]] = []
    private(set) var identifiers: [[UInt8]] = []
    private(set) var instances: [Instance] = []

    var count: Int { instances.count }

    mutating func append(_ sortKey: [UInt8], _ identifier: [UInt8], _ instance: Instance) {
        sortKeys.append(sortKey)
        identifiers.append(identifier)
        instances.append(instance)
    }

    mutating func reverse() {
        sortKeys.reverse()
        identifiers.reverse()
        instances.reverse()
    }

    /// Removes the results whose identifier `shouldRemove` names; returns whether any went.
    mutating func removeAll(where shouldRemove: ([UInt8]) -> Bool) -> Bool {
        var kept = QueryResults()
        for position in identifiers.indices where !shouldRemove(identifiers[position]) {
            kept.append(sortKeys[position], identifiers[position], instances[position])
        }
        guard kept.count != count else { return false }
        self = kept
        return true
    }

    /// Both sorted result sets in one, sorted (a merge: both inputs are ascending).
    func merged(with other: QueryResults) -> QueryResults {
        var result = QueryResults()
        result.sortKeys.reserveCapacity(count + other.count)
        result.identifiers.reserveCapacity(count + other.count)
        result.instances.reserveCapacity(count + other.count)
        var mine = 0, theirs = 0
        while mine < count || theirs < other.count {
            if theirs == other.count || (mine < count && KeyBytes.compare(sortKeys[mine], other.sortKeys[theirs]) <= 0) {
                result.append(sortKeys[mine], identifiers[mine], instances[mine])
                mine += 1
            } else {
                result.append(other.sortKeys[theirs], other.identifiers[theirs], other.instances[theirs])
                theirs += 1
            }
        }
        return result
    }
}

/// The first position in `0..<count` where `isInSecondPart` holds, for a predicate that is
/// false and then true over the positions (`count` if it never holds): the binary search
/// every observer runs over a commit's sorted changes.
func partitionPoint(_ count: Int, _ isInSecondPart: (Int) -> Bool) -> Int {
    var low = 0, high = count
    while low < high {
        let mid = (low + high) / 2
        if isInSecondPart(mid) { high = mid } else { low = mid + 1 }
    }
    return low
}
