import FolioStorage
import Synchronization
/// Preparing a datastore in a write transaction: comparing the store's catalog entry with
/// the declaration, dropping and registering indexes, and building them in budgeted steps
/// (Docs/Guide.md, "Index evolution"). ``Datastore/prepare(in:)`` decides when it runs.
enum Preparation {
    /// Records processed per transaction when building an index outside a transaction.
    static let batchSize = 1_000

    /// Counts the runs of ``step(_:schema:core:budget:checkStale:sampled:)`` in the task that binds it and its
    /// child tasks: how a test sees that a datastore already prepared skips the step (no
    /// wall-clock timing). Nil outside such tests.
    @TaskLocal static var stepRuns: StepCounter?

    /// The count behind ``stepRuns``, shared by the tasks of one test.
    final class StepCounter: Sendable {
        /// Runs so far.
        let runs = Mutex(0)
    }

    /// Whether ``step(_:schema:core:budget:checkStale:sampled:)`` would change nothing in
    /// `source`: the catalog entry exists, matches the declaration, every declared index (and
    /// no other) is built with the declared fingerprint, and a sample of records lists the
    /// values the declaration computes (IndexSample.swift). Also returns the sample's verdict
    /// when it was read (only once the entry matches: otherwise `step` runs anyway), for the
    /// rest of the preparation to use.
    static func isCurrent<Format: DatastoreFormat>(
        in source: ReadSource, schema: DatastoreSchema<Format>,
        core: PersistenceCore
    ) throws(FolioError) -> (current: Bool, sampled: IndexSampleVerdict?) {
        let key = schema.key
        guard
            let stored = try FolioError.wrap({ () throws(StorageError) in
                try source.get(Array(key.utf8), in: DatastoreLayout.catalogTree)
            })
        else { return (false, nil) }
        var entry = try CatalogEntry.decode(stored, datastore: key)
        let signature = schema.signature
        guard entry.identifierType == signature.identifierType, entry.indexes.count == schema.indexes.count else {
            return (false, nil)
        }
        for index in schema.indexes {
            guard let state = entry.indexes[index.name], state.built, state.fingerprint == index.definition.fingerprint
            else { return (false, nil) }
        }
        let sampled = try sampleIndexes(in: source, entry: entry, catalog: stored, schema: schema, core: core)
        guard sampled.stale.isEmpty else { return (false, sampled) }
        // What `step` would store: the declaration's types and versions over the same indexes.
        entry.instanceType = signature.instanceType
        entry.versions = signature.versions
        entry.currentVersion = signature.currentVersion
        return (entry.encoded() == stored, sampled)
    }

    /// Brings the catalog entry of `schema`'s datastore up to date in `transaction` and
    /// builds unbuilt indexes over at most `budget` records (all if nil). Returns whether
    /// every index is built, and how many records were processed.
    ///
    /// Five jobs, in this order: read the stored entry and count the records, bring the
    /// entry's declaration up to date (`declaredEntry`), drop and register indexes
    /// (`reconcileIndexes`; with `checkStale`, also those a sample of records finds stale,
    /// IndexSample.swift, logging why), build what is unbuilt (`buildIndexes`), and write the
    /// entry back if it changed (`saveEntry`). The sample is `sampled`, the verdict the
    /// preparation read already, when it holds in `transaction`; otherwise it is read here.
    /// A preparation checks staleness in its first step only, so an index whose values are
    /// not a function of the record (a computed property that reads the clock) is rebuilt
    /// once per preparation, never in a loop.
    static func step<Format: DatastoreFormat>(
        _ transaction: WriteTransaction, schema: DatastoreSchema<Format>,
        core: PersistenceCore, budget: Int?, checkStale: Bool,
        sampled: IndexSampleVerdict? = nil
    ) throws(FolioError) -> (finished: Bool, processed: Int) {
        stepRuns?.runs.withLock { $0 += 1 }
        let nameKey = Array(schema.key.utf8)
        let stored = try FolioError.wrap { () throws(StorageError) in
            try transaction.get(nameKey, in: DatastoreLayout.catalogTree)
        }
        let recordCount = try FolioError.wrap { () throws(StorageError) in try transaction.count(in: schema.recordsTree)
        }
        var entry = try declaredEntry(stored, schema: schema, recordCount: recordCount)
        if checkStale {
            let verdict: IndexSampleVerdict
            if let sampled, sampled.holds(in: transaction, catalog: stored) {
                verdict = sampled
            } else {
                verdict = try sampleIndexes(
                    in: .transaction(transaction), entry: entry, catalog: stored, schema: schema, core: core)
            }
            // A stale index is dropped from the entry, so `reconcileIndexes` drops its tree and
            // registers it to be built again, as if newly declared.
            for index in schema.indexes {
                guard let difference = verdict.stale[index.name] else { continue }
                logRebuild(of: index, difference, schema: schema, core: core)
                entry.indexes[index.name] = nil
            }
        }
        try reconcileIndexes(&entry, schema: schema, recordCount: recordCount, in: transaction)
        let processed = try buildIndexes(&entry, schema: schema, core: core, budget: budget, in: transaction)
        try saveEntry(entry, replacing: stored, key: nameKey, in: transaction)
        return (entry.indexes.values.allSatisfy(\.built), processed)
    }

    /// The stored catalog entry (or a new one for a datastore never stored) with the
    /// declaration's types and versions. Refuses a declaration whose identifier type differs
    /// from the store's while records exist: their keys were encoded from the stored type and
    /// would not decode as the new one. With no records, the entry simply takes the new type.
    private static func declaredEntry<Format: DatastoreFormat>(
        _ stored: [UInt8]?, schema: DatastoreSchema<Format>,
        recordCount: UInt64
    ) throws(FolioError) -> CatalogEntry {
        let key = schema.key
        let signature = schema.signature
        var entry =
            try stored.map { (bytes) throws(FolioError) in try CatalogEntry.decode(bytes, datastore: key) }
            ?? CatalogEntry(
                instanceType: signature.instanceType, identifierType: signature.identifierType,
                versions: signature.versions, currentVersion: signature.currentVersion, indexes: [:])
        if entry.identifierType != signature.identifierType && recordCount > 0 {
            throw .incompatibleDeclaration(
                datastore: key,
                reason: "the store's identifiers are \(entry.identifierType), the format's \(signature.identifierType)")
        }
        // A declaration that does not know the version the store's catalog says its records
        // are at (what the last declaration to prepare it recorded) is older
        // than the one that prepared the store (another process of a newer release, or a
        // newer release run before): preparing would drop its indexes and write older
        // records over its newer ones. Refused, so that two releases sharing a store do not
        // undo each other's preparation.
        if stored != nil && recordCount > 0 && !signature.versions.contains(entry.currentVersion) {
            throw .incompatibleDeclaration(
                datastore: key,
                reason:
                    "the store's records are at version \(entry.currentVersion), which this declaration does not "
                    + "list (it declares \(signature.versions.joined(separator: ", "))): a newer declaration prepared "
                    + "the store, for example in another process of a newer release")
        }
        entry.instanceType = signature.instanceType
        entry.identifierType = signature.identifierType
        entry.versions = signature.versions
        entry.currentVersion = signature.currentVersion
        return entry
    }

    /// Drops what is no longer declared as stored, then adds what is new: an index the
    /// declaration removed, or changed (another fingerprint), loses its tree and its state;
    /// a newly declared one starts from an empty tree (dropping any left by an earlier
    /// declaration of that name) and is built at once when there are no records to index.
    private static func reconcileIndexes<Format: DatastoreFormat>(
        _ entry: inout CatalogEntry, schema: DatastoreSchema<Format>,
        recordCount: UInt64, in transaction: WriteTransaction
    ) throws(FolioError) {
        let key = schema.key
        for (name, state) in entry.indexes where schema.index(named: name)?.definition.fingerprint != state.fingerprint
        {
            try FolioError.wrap { () throws(StorageError) in
                _ = try transaction.dropTree(DatastoreLayout.indexTree(key, name))
            }
            entry.indexes[name] = nil
        }
        for index in schema.indexes where entry.indexes[index.name] == nil {
            try FolioError.wrap { () throws(StorageError) in _ = try transaction.dropTree(index.tree) }
            entry.indexes[index.name] = CatalogEntry.IndexState(
                fingerprint: index.definition.fingerprint, kind: index.definition.kind,
                storage: index.definition.storage, built: recordCount == 0,
                resumeAfter: nil)
        }
    }

    /// Builds the indexes `entry` has unbuilt over at most `budget` records (all if nil),
    /// resuming after the earliest position any of them reached, so an interrupted build (a
    /// batch committed, then the process killed) continues rather than restarts. Marks each
    /// built once the records are exhausted, or records where it stopped. Returns how many
    /// records were processed.
    private static func buildIndexes<Format: DatastoreFormat>(
        _ entry: inout CatalogEntry, schema: DatastoreSchema<Format>,
        core: PersistenceCore, budget: Int?,
        in transaction: WriteTransaction
    ) throws(FolioError) -> Int {
        let building = schema.indexes.filter { entry.indexes[$0.name]?.built == false }
        var processed = 0
        guard !building.isEmpty else { return processed }
        // Resume after the earliest position any building index reached.
        let positions = building.map { entry.indexes[$0.name]?.resumeAfter }
        let start: [UInt8]? =
            positions.contains { $0 == nil }
            ? nil
            : positions.compactMap { $0 }.min { KeyBytes.compare($0, $1) < 0 }
        let range = start.map { KeyRange(lower: .excluded($0)) } ?? .all
        var cursor = transaction.cursor(in: schema.recordsTree, range: range)
        var last: [UInt8]? = nil
        var exhausted = false
        while true {
            if let budget, processed >= budget { break }
            guard let item = try FolioError.wrap({ () throws(StorageError) in try cursor.next() }) else {
                exhausted = true
                break
            }
            try indexRecord(item, into: building, entry: &entry, schema: schema, core: core, in: transaction)
            processed += 1
            last = item.key
        }
        for index in building {
            if exhausted {
                entry.indexes[index.name]?.built = true
                entry.indexes[index.name]?.resumeAfter = nil
            } else if let last {
                entry.indexes[index.name]?.resumeAfter = last
            }
        }
        return processed
    }

    /// Adds one record to the indexes being built (those whose build has not yet passed it),
    /// rewriting the record with its index keys in its header.
    private static func indexRecord<Format: DatastoreFormat>(
        _ item: Cursor.Entry, into building: [SchemaIndex<Format.Instance>],
        entry: inout CatalogEntry, schema: DatastoreSchema<Format>,
        core: PersistenceCore, in transaction: WriteTransaction
    ) throws(FolioError) {
        let record = try schema.parseRecord(item.value, identifier: item.key)
        // A record that no longer decodes (or a migration that throws for it) is left
        // out of the index and reported, never allowed to block the datastore: reads,
        // `persist` (which indexes it) and `deleteWithoutDecoding` must keep working.
        let instance = try schema.decodeIfReadable(record, identifier: item.key, core: core)
        var keys = record.indexKeys
        for index in building {
            if let done = entry.indexes[index.name]?.resumeAfter, KeyBytes.compare(item.key, done) <= 0 { continue }
            guard let instance else {
                keys[index.name] = nil
                entry.indexes[index.name]?.noteUnindexed(item.key)
                continue
            }
            let values = schema.indexValues(index, of: instance, identifier: item.key)
            // Checked before anything is written, so a conflicting record is left out
            // of the unique index (and reported) as a whole.
            if index.unique, try conflicts(values, in: index, identifier: item.key, transaction: transaction) {
                keys[index.name] = nil
                entry.indexes[index.name]?.noteUnindexed(item.key)
                continue
            }
            keys[index.name] = values
        }
        let rewritten = try schema.encodeRecord(
            version: record.version,
            indexKeys: keys.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
            payload: record.payload,
            identifier: { schema.describe(identifierKey: item.key) })
        for index in building {
            if let done = entry.indexes[index.name]?.resumeAfter, KeyBytes.compare(item.key, done) <= 0 { continue }
            try IndexMaintenance.add(
                keys[index.name] ?? [], for: index, identifier: item.key, record: rewritten,
                in: transaction, schema: schema, checked: true)
        }
        try FolioError.wrap { () throws(StorageError) in
            _ = try transaction.put(rewritten, for: item.key, in: schema.recordsTree)
        }
    }

    /// Writes `entry` back under `key` only if it differs from what was `stored`: a step
    /// that changed nothing writes nothing, so preparing an up-to-date datastore inside a
    /// transaction adds no change to its commit.
    private static func saveEntry(
        _ entry: CatalogEntry, replacing stored: [UInt8]?, key: [UInt8],
        in transaction: WriteTransaction
    ) throws(FolioError) {
        let encoded = entry.encoded()
        if encoded != stored {
            try FolioError.wrap { () throws(StorageError) in
                _ = try transaction.put(encoded, for: key, in: DatastoreLayout.catalogTree)
            }
        }
    }

    /// Whether a unique index already maps one of `values` to another record.
    private static func conflicts<Instance>(
        _ values: [[UInt8]], in index: SchemaIndex<Instance>, identifier: [UInt8],
        transaction: WriteTransaction
    ) throws(FolioError) -> Bool {
        for value in values {
            guard
                let existing = try FolioError.wrap({ () throws(StorageError) in
                    try transaction.get(value, in: index.tree)
                })
            else { continue }
            if IndexEntry.decode(existing)?.identifier != identifier { return true }
        }
        return false
    }
}
