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

/// Folio's side of the `crud` and `scale` suites: one `Persistence` per directory, one
/// datastore of ``CrudRecordFormat``, Folio's own `Codable` path (its JSON encoding), the
/// default 8 MiB page cache and automatic compaction.
///
/// `--durability full` is ``Durability/full``; `grouped` is ``Durability/grouped`` (a 10 ms
/// window). Every method awaits Folio's async API in the calling task.
final class FolioCrudSystem: CrudSystem {
    static let systemName = "folio"

    let persistence: Persistence<ReadWrite>
    let records: Datastore<CrudRecordFormat, ReadWrite>

    private init(persistence: Persistence<ReadWrite>) {
        self.persistence = persistence
        records = persistence.datastore(for: CrudRecordFormat.self)
    }

    /// Opens the persistence and uses the datastore once (`count()`, which reads no record),
    /// so that its declaration is checked against the store here, as GRDB's open creates its
    /// table: the first timed call of a workload does no such work.
    static func open(directory: String, durability: BenchDurability) async throws -> FolioCrudSystem {
        let persistence = try Persistence(at: directory, options: PersistenceOptions(durability: durability.engine))
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

    func fetchAll(color: Int) async throws -> [CrudRecord] {
        var found: [CrudRecord] = []
        for try await record in records.load(...) where record.color == color { found.append(record) }
        return found
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

    /// Grouped commits are made durable (`flush`), then the store is closed (which releases
    /// the write lock, so a child process may open it next).
    func close() async throws {
        try persistence.flush()
        persistence.close()
    }

    func commitSyncNote(commits: Int) async throws -> String? {
        let syncs = persistence.ioStatistics.commitSyncs
        return "Folio: \(commits) commits took \(syncs) fdatasyncs (group commit: \((Double(commits) / Double(max(syncs, 1)) * 100).rounded() / 100) commits per sync)"
    }

    func rangeQueryNote() async throws -> String? {
        "Folio: load(range, from: \\.priority): a cursor over the priority index's tree, then one record lookup per entry (reference storage)"
    }
}
