import FolioStorage
import Synchronization

// Finding an index whose entries no longer follow its declaration although its fingerprint
// does. The catalog knows a computed key path by its type alone (IndexDefinition.fingerprint),
// so `Index(\Card.upper)` changed to `Index(\Card.lower)` keeps the fingerprint and the old
// entries; so does anything else that changes the values without changing the declaration
// (a Codable conformance that now normalises, records written before index values were
// computed from the record as it reads back, other Unicode data for string keys). Each
// record lists its index values in its header (Docs/Format.md §23): preparation recomputes
// the declared values of a sample of records and compares. A difference rebuilds the index.
//
// The sample is bounded, so a first use stays cheap whatever the store's size (invariant 4):
// the first and last `sampleEdge` records by identifier, and `sampleSpread` more found by
// seeking to keys spread evenly between the first and the last: at most 16 records read
// and decoded, in 2 + 8 cursor descents, once per process (a prepared datastore skips
// preparation). A change that alters the values of only a few records can escape the
// sample; raising the index's `version` is the way to say so for certain.

extension Preparation {
    /// Records sampled from each end of the identifier order.
    static let sampleEdge = 4
    /// Records sampled between the ends.
    static let sampleSpread = 8

    /// Counts the records ``sampleIndexes(in:entry:catalog:schema:core:)`` reads in the task that
    /// binds it: how a test sees that the check reads a bounded sample, once (never timed).
    /// Nil outside such tests.
    @TaskLocal static var sampledRecords: SampleCounter?

    /// The count behind ``sampledRecords``.
    final class SampleCounter: Sendable {
        /// Records sampled so far.
        let records = Mutex(0)
    }

    /// What a sample of records in `source` says about the declared indexes built as
    /// declared in `entry` (the catalog entry `source` holds, whose bytes are `catalog`):
    /// which ones list values their declaration no longer computes. Records the index's
    /// build left out say nothing, and so does a record that cannot be parsed or decoded:
    /// reading it reports its error, but one bad record must not fail the preparation, and
    /// with it every read and write of the datastore.
    static func sampleIndexes<Format: DatastoreFormat>(
        in source: ReadSource, entry: CatalogEntry, catalog: [UInt8]?,
        schema: DatastoreSchema<Format>,
        core: PersistenceCore
    ) throws(FolioError) -> IndexSampleVerdict {
        var generation: UInt64? = nil
        if case .view(let view) = source { generation = view.generation }
        let checked = schema.indexes.filter { index in
            guard let state = entry.indexes[index.name] else { return false }
            return state.built && state.fingerprint == index.definition.fingerprint
        }
        var stale: [String: IndexSampleVerdict.Difference] = [:]
        guard !checked.isEmpty else {
            return IndexSampleVerdict(stale: stale, generation: generation, catalog: catalog)
        }
        for item in try sample(of: schema.recordsTree, in: source) {
            sampledRecords?.records.withLock { $0 += 1 }
            guard let record = StoredRecord.decode(item.value),
                let instance = try? schema.decode(record, identifier: item.key, core: core)
            else { continue }
            for index in checked where stale[index.name] == nil {
                guard let state = entry.indexes[index.name], !(state.unindexed ?? []).contains(item.key) else {
                    continue
                }
                let listed = record.indexKeys[index.name] ?? []
                // A record the build left out lists no values; when the catalog does not list
                // every such record, one listing none may be one of them.
                if listed.isEmpty, (state.unindexedCount ?? 0) > (state.unindexed?.count ?? 0) { continue }
                let recomputed = schema.indexValues(index, of: instance, identifier: item.key)
                if recomputed != listed {
                    stale[index.name] = IndexSampleVerdict.Difference(
                        identifier: item.key, listed: listed, recomputed: recomputed)
                }
            }
        }
        return IndexSampleVerdict(stale: stale, generation: generation, catalog: catalog)
    }

    /// Says in the persistence's log why `index` is rebuilt. An index whose values are not a
    /// function of the record (a computed property that reads the clock, or a new `UUID`)
    /// differs from its records at every launch and is rebuilt at every launch: the catalog
    /// knows a computed key path by its type alone, so no mark it could keep tells the same
    /// declaration from a changed one, and skipping a rebuild could hide a real change.
    /// The line is how the index's author finds out.
    static func logRebuild<Format: DatastoreFormat>(
        of index: SchemaIndex<Format.Instance>, _ difference: IndexSampleVerdict.Difference,
        schema: DatastoreSchema<Format>, core: PersistenceCore
    ) {
        func describe(_ values: [[UInt8]]) -> String {
            values.isEmpty
                ? "no value" : values.map { "\"\(index.definition.describeValue($0))\"" }.joined(separator: ", ")
        }
        core.store.openOptions.log(
            "\(schema.key): rebuilding index \(index.name): record \(schema.describe(identifierKey: difference.identifier)) "
                + "is indexed under \(describe(difference.listed)), but its key path now gives \(describe(difference.recomputed)). "
                + "If this is logged at every launch, the index's key path does not give the same value for the same record "
                + "(it reads something the record does not hold, such as the clock), and queries through it cannot be right."
        )
    }

    /// The sampled records of `tree`: its first and last ``sampleEdge``, and the first record
    /// at or after each of ``sampleSpread`` keys spread evenly between those two.
    static func sample(of tree: String, in source: ReadSource) throws(FolioError) -> [Cursor.Entry] {
        var picked: [Cursor.Entry] = []
        func read(_ range: KeyRange, _ direction: ScanDirection, count: Int) throws(FolioError) -> [Cursor.Entry] {
            try FolioError.wrap { () throws(StorageError) -> [Cursor.Entry] in
                var cursor = try source.cursor(in: tree, range: range, direction: direction)
                var entries: [Cursor.Entry] = []
                while entries.count < count, let entry = try cursor.next() { entries.append(entry) }
                return entries
            }
        }
        func add(_ entries: [Cursor.Entry]) {
            for entry in entries where !picked.contains(where: { $0.key == entry.key }) { picked.append(entry) }
        }
        let head = try read(.all, .forward, count: sampleEdge)
        add(head)
        guard head.count == sampleEdge else { return picked }
        let tail = try read(.all, .reverse, count: sampleEdge)
        add(tail)
        guard let first = head.first?.key, let last = tail.first?.key else { return picked }
        for step in 1...sampleSpread {
            let probe = spreadKey(from: first, to: last, step: step, of: sampleSpread + 1)
            add(try read(KeyRange(lower: .included(probe)), .forward, count: 1))
        }
        return picked
    }

    /// A key `step / steps` of the way from `first` to `last`, reading the 8 bytes after
    /// their common prefix as a number (enough to spread integer, UUID and text keys).
    static func spreadKey(from first: [UInt8], to last: [UInt8], step: Int, of steps: Int) -> [UInt8] {
        var common = 0
        while common < first.count, common < last.count, first[common] == last[common] { common += 1 }
        func number(_ key: [UInt8]) -> UInt64 {
            var value: UInt64 = 0
            for position in common..<(common + 8) {
                value = value << 8 | UInt64(position < key.count ? key[position] : 0)
            }
            return value
        }
        let low = number(first), high = max(number(last), low)
        let offset = (high - low).multipliedFullWidth(by: UInt64(step))
        let (quotient, _) = UInt64(steps).dividingFullWidth(offset)
        let value = low + quotient
        return Array(first[..<common]) + (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * (7 - $0))) }
    }
}

/// What a sample of records says about a datastore's indexes (``Preparation/sampleIndexes(in:entry:catalog:schema:core:)``),
/// and where it was read: one preparation reads it once and hands it on, from the check
/// whether there is anything to do to the step that rebuilds.
struct IndexSampleVerdict: Sendable {
    /// A sampled record whose listed values for an index differ from the recomputed ones.
    struct Difference: Sendable {
        let identifier: [UInt8]
        let listed: [[UInt8]]
        let recomputed: [[UInt8]]
    }

    /// The indexes found stale, by name, each with the first sampled record that showed it.
    let stale: [String: Difference]
    /// The generation of the read view sampled; nil when read inside a transaction.
    let generation: UInt64?
    /// The catalog entry's bytes the sample was read with.
    let catalog: [UInt8]?

    /// Whether the verdict holds in `transaction`, whose stored catalog entry is `current`:
    /// when the transaction starts from the generation sampled (no commit came between), it
    /// sees the same records and the same entry. Otherwise the step samples again.
    func holds(in transaction: WriteTransaction, catalog current: [UInt8]?) -> Bool {
        guard let generation else { return false }
        return transaction.baseGeneration == generation && current == catalog
    }
}
