import Foundation
import Folio

/// The benchmark record's identity for Folio's datastores: its `id` (Int64).
extension CrudRecord: Identifiable {}

/// The datastore of the benchmark records: version 1, identifier `id`, a one-to-many index
/// on `priority` (GRDB has one) and none on `color`.
struct CrudRecordFormat: DatastoreFormat {
    enum Version: Int, CaseIterable, Sendable { case one = 1 }
    static let key = "records"
    static let currentVersion = Version.one
    typealias Instance = CrudRecord

    let priority = Index(\CrudRecord.priority)

    init() {}
}

/// A partition of `mt-insert-disjoint`: its number names the datastore.
protocol CrudPartition: Sendable { static var number: Int { get } }
enum CrudPartition0: CrudPartition { static let number = 0 }
enum CrudPartition1: CrudPartition { static let number = 1 }
enum CrudPartition2: CrudPartition { static let number = 2 }
enum CrudPartition3: CrudPartition { static let number = 3 }

/// ``CrudRecordFormat`` under the key `records-<partition>`: the datastores of
/// `mt-insert-disjoint`, one per writer.
struct CrudPartitionFormat<Partition: CrudPartition>: DatastoreFormat {
    enum Version: Int, CaseIterable, Sendable { case one = 1 }
    static var key: String { "records-\(Partition.number)" }
    static var currentVersion: Version { .one }
    typealias Instance = CrudRecord

    let priority = Index(\CrudRecord.priority)

    init() {}
}

/// One partition's datastore, behind closures so that the four formats share one array.
struct CrudPartitionStore: Sendable {
    let insert: @Sendable ([CrudRecord]) async throws -> Void
    let fetch: @Sendable (Int64) async throws -> CrudRecord?

    init<Partition: CrudPartition>(_ persistence: Persistence<ReadWrite>, _ partition: Partition.Type) {
        let datastore = persistence.datastore(for: CrudPartitionFormat<Partition>.self)
        insert = { records in
            try await persistence.perform {
                for record in records { try await datastore.persist(record) }
            }
        }
        fetch = { id in try await datastore.load(id) }
    }
}

/// Folio's side of the `crud` and `scale` suites: one `Persistence` per directory, one
/// datastore of ``CrudRecordFormat``, Folio's own `Codable` path (its JSON encoding), the
/// default 8 MiB page cache and automatic compaction, and the record cache OFF: these rows
/// measure reading and decoding records (GRDB keeps no decoded objects either, and a
/// repeated run would otherwise read instances cached by the one before). `get-hot`
/// measures the record cache on its own.
///
/// `--durability full` is ``Durability/full``; `grouped` is ``Durability/grouped`` (a 10 ms
/// window). Every method awaits Folio's async API in the calling task.
final class FolioCrudSystem: CrudSystem {
    static let systemName = "folio"

    let persistence: Persistence<ReadWrite>
    let records: Datastore<CrudRecordFormat, ReadWrite>

    let partitions: [CrudPartitionStore]

    private init(persistence: Persistence<ReadWrite>) {
        self.persistence = persistence
        records = persistence.datastore(for: CrudRecordFormat.self)
        partitions = [
            CrudPartitionStore(persistence, CrudPartition0.self), CrudPartitionStore(persistence, CrudPartition1.self),
            CrudPartitionStore(persistence, CrudPartition2.self), CrudPartitionStore(persistence, CrudPartition3.self),
        ]
    }

    /// Opens the persistence and uses the datastore once (`count()`, which reads no record),
    /// so that its declaration is checked against the store here, as GRDB's open creates its
    /// table: the first timed call of a workload does no such work.
    static func open(directory: String, durability: BenchDurability) async throws -> FolioCrudSystem {
        try await open(directory: directory, durability: durability, recordCache: false)
    }

    /// The `mp` suite's open: ``open(directory:durability:)``; `busyTimeout` (seconds) sets
    /// `PersistenceOptions.busyTimeout`, nil keeps its default (5 s).
    static func openShared(
        directory: String, durability: BenchDurability, busyTimeout: Double?
    ) async throws -> FolioCrudSystem {
        try await open(directory: directory, durability: durability, recordCache: false, busyTimeout: busyTimeout)
    }

    /// ``open(directory:durability:)`` with the record cache on (default limits) or off, and
    /// `busyTimeout` seconds instead of the default if not nil.
    static func open(
        directory: String, durability: BenchDurability, recordCache: Bool, busyTimeout: Double? = nil
    ) async throws -> FolioCrudSystem {
        var options = PersistenceOptions(
            durability: durability.engine, recordCache: recordCache ? RecordCacheLimits() : nil)
        if let busyTimeout { options.busyTimeout = .milliseconds(Int((busyTimeout * 1000).rounded())) }
        let persistence = try Persistence(at: directory, options: options)
        let system = FolioCrudSystem(persistence: persistence)
        _ = try await system.records.count()
        return system
    }

    func insert(_ records: [CrudRecord]) async throws {
        let datastore = self.records
        try await persistence.perform {
            for record in records { try await datastore.persist(record) }
        }
    }

    func insert(_ records: [CrudRecord], intoPartition partition: Int) async throws {
        try await partitions[partition].insert(records)
    }

    func fetch(id: Int64, fromPartition partition: Int) async throws -> CrudRecord? {
        try await partitions[partition].fetch(id)
    }

    func fetchAll(color: Int) async throws -> [CrudRecord] {
        var found: [CrudRecord] = []
        for try await record in records.load(...) where record.color == color { found.append(record) }
        return found
    }

    /// The same as `fetchAll(color:)`: Folio decodes every record of a scan anyway.
    func fetchEveryDecodedRecord(whereColorIs color: Int) async throws -> [CrudRecord] {
        try await fetchAll(color: color)
    }

    func fetch(id: Int64) async throws -> CrudRecord? {
        try await records.load(id)
    }

    func fetchAll(priorityIn range: Range<Int>) async throws -> [CrudRecord] {
        try await records.load(range, from: \.priority).collect()
    }

    func update(_ record: CrudRecord) async throws {
        try await records.persist(record)
    }

    func delete(ids: [Int64]) async throws {
        let datastore = records
        try await persistence.perform {
            for id in ids { try await datastore.delete(id) }
        }
    }

    // MARK: Queries: Folio's query API, `#Predicate`s planned over the indexes

    func query(color: Int) async throws -> [CrudRecord] {
        try await records.fetch(where: #Predicate<CrudRecord> { $0.color == color }).collect()
    }

    /// `lower <= priority < upper` as a range's `contains`: the planner reads exactly that
    /// range of the priority index. (Written `priority >= lower && priority < upper`, the
    /// same question is a conjunction of two comparisons: the row's notes give both plans.)
    private static func priorityPredicate(from lower: Int, below upper: Int) -> Predicate<CrudRecord> {
        #Predicate<CrudRecord> { (lower..<upper).contains($0.priority) }
    }

    func query(priorityFrom lower: Int, below upper: Int) async throws -> [CrudRecord] {
        try await records.fetch(where: Self.priorityPredicate(from: lower, below: upper)).collect()
    }

    /// Folio's `explain` of the query workloads' predicates; throws unless the
    /// `priorityRange` predicate reads the `priority` index.
    func queryPlanNote(_ query: CrudQuery) async throws -> String {
        let predicate: Predicate<CrudRecord>
        let text: String
        switch query {
        case .color(let color):
            predicate = #Predicate<CrudRecord> { $0.color == color }
            text = "#Predicate { $0.color == \(color) }"
        case .priorityRange(let lower, let upper):
            predicate = Self.priorityPredicate(from: lower, below: upper)
            text = "#Predicate { (\(lower)..<\(upper)).contains($0.priority) }"
        case .priorityConjunction(let lower, let upper):
            predicate = #Predicate<CrudRecord> { $0.priority >= lower && $0.priority < upper }
            text = "#Predicate { $0.priority >= \(lower) && $0.priority < \(upper) } (not timed)"
        case .id(let id):
            predicate = #Predicate<CrudRecord> { $0.id == id }
            text = "#Predicate { $0.id == \(id) }"
        case .priorityAtLeast(let lower):
            predicate = #Predicate<CrudRecord> { $0.priority >= lower }
            text = "#Predicate { $0.priority >= \(lower) }"
        case .priorityAtLeastByTitle(let lower, let limit):
            let plan = try await records.explain(
                where: #Predicate<CrudRecord> { $0.priority >= lower }, sortBy: Self.byTitle, limit: limit)
            return
                "Folio explain #Predicate { $0.priority >= \(lower) } sorted by title (.lexical), limit \(limit): \(plan)"
        case .priorityRangeAndID(let lower, let upper, let maximumID):
            predicate = Self.compoundPredicate(lower, upper, maximumID)
            text = "#Predicate { (\(lower)..<\(upper)).contains($0.priority) && $0.id <= \(maximumID) }"
        }
        let plan = try await records.explain(where: predicate)
        if case .priorityRange = query {
            guard case .index(let name, _) = plan.access, name.contains("priority") else {
                throw BenchError.harness("Folio's query-indexed plan does not use the priority index: \(plan)")
            }
        }
        return "Folio explain \(text): \(plan)"
    }

    /// Title order as SQLite's binary collation gives it: `.lexical` (the default comparator of
    /// a `String` sort descriptor is localized, which SQLite's `ORDER BY` is not).
    private static let byTitle = [SortDescriptor(\CrudRecord.title, comparator: .lexical)]

    private static func compoundPredicate(_ lower: Int, _ upper: Int, _ maximumID: Int64) -> Predicate<CrudRecord> {
        #Predicate<CrudRecord> { (lower..<upper).contains($0.priority) && $0.id <= maximumID }
    }

    func query(priorityAtLeast lower: Int, sortedByTitleLimit limit: Int) async throws -> [CrudRecord] {
        try await records.fetch(
            where: #Predicate<CrudRecord> { $0.priority >= lower }, sortBy: Self.byTitle, limit: limit
        )
        .collect()
    }

    func query(priorityFrom lower: Int, below upper: Int, idAtMost maximumID: Int64) async throws -> [CrudRecord] {
        try await records.fetch(where: Self.compoundPredicate(lower, upper, maximumID)).collect()
    }

    func queryFirst(id: Int64) async throws -> CrudRecord? {
        try await records.first(where: #Predicate<CrudRecord> { $0.id == id })
    }

    func updateWhere(priorityAtLeast lower: Int, tag: String) async throws -> Int {
        try await records.update(where: #Predicate<CrudRecord> { $0.priority >= lower }) { $0.tag = tag }
    }

    func deleteWhere(priorityAtLeast lower: Int) async throws -> Int {
        try await records.delete(where: #Predicate<CrudRecord> { $0.priority >= lower })
    }

    /// Grouped commits are made durable (`makeDurable`), then the store is closed (which releases
    /// the write lock, so a child process may open it next).
    func close() async throws {
        try await persistence.makeDurable()
        persistence.close()
    }

    func commitSyncNote(commits: Int) async throws -> String? {
        let syncs = persistence.ioStatistics.commitSyncs
        return
            "Folio: \(commits) commits took \(syncs) fdatasyncs (group commit: \((Double(commits) / Double(max(syncs, 1)) * 100).rounded() / 100) commits per sync)"
    }

    func rangeQueryNote() async throws -> String? {
        "Folio: load(range, from: \\.priority): a cursor over the priority index's tree, then one record lookup per entry (reference storage)"
    }
}
