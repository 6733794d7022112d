import Foundation
import GRDB

/// GRDB's row mapping for the benchmark record: its synthesized `Codable` conformance
/// (columns named after the properties), in the table `record`.
extension CrudRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "record"
}

/// GRDB.swift's side of the `crud` and `scale` suites: a `DatabasePool` (WAL mode), with
/// `PRAGMA synchronous` FULL for `--durability full` and NORMAL for `grouped`, `Codable`
/// records, an index on `priority` (Folio has one) and none on `color`.
///
/// The methods are `async` (the protocol's) but call GRDB's synchronous API: each runs its
/// `read` or `write` in the calling task, as a synchronous GRDB app would.
final class GRDBCrudSystem: CrudSystem {
    static let systemName = "grdb"

    let pool: DatabasePool

    private init(pool: DatabasePool) { self.pool = pool }

    static func open(directory: String, durability: BenchDurability) async throws -> GRDBCrudSystem {
        try openNow(directory: directory, durability: durability)
    }

    // MARK: GRDB's synchronous API
    //
    // In an async function Swift picks GRDB's async overloads of `read` and `write`; these
    // synchronous helpers keep the calls on GRDB's synchronous API (a `read` or `write` that
    // runs on the calling thread and waits for GRDB's queue), as the protocol methods below
    // promise.

    /// The `mp` suite's open: one `DatabasePool` per process, whose statements wait up to
    /// `busyTimeout` seconds (default ``sharedBusyTimeout``) for another process's lock
    /// (`busyMode = .timeout`, SQLite's busy handler) instead of failing at once with
    /// `SQLITE_BUSY`, as Folio's writers wait `busyTimeout`.
    static func openShared(
        directory: String, durability: BenchDurability, busyTimeout: Double?
    ) async throws -> GRDBCrudSystem {
        try openNow(directory: directory, durability: durability, busyTimeout: busyTimeout ?? sharedBusyTimeout)
    }

    /// Seconds: Folio's default `busyTimeout`.
    static let sharedBusyTimeout: TimeInterval = 5

    private static func openNow(
        directory: String, durability: BenchDurability, busyTimeout: TimeInterval? = nil
    ) throws -> GRDBCrudSystem {
        let pool = try GRDBPool.open(
            path: directory + "/records.sqlite", durability: durability, busyTimeout: busyTimeout)
        try pool.write { db in try createRecordTable(CrudRecord.databaseTableName, in: db) }
        return GRDBCrudSystem(pool: pool)
    }

    /// The record table's columns and its `priority` index, under `name` (the main table, or
    /// a partition's of `mt-insert-disjoint`).
    private static func createRecordTable(_ name: String, in db: Database) throws {
        try db.create(table: name, ifNotExists: true) { t in
            t.primaryKey("id", .integer)
            t.column("title", .text).notNull()
            t.column("color", .integer).notNull()
            t.column("tag", .text).notNull()
            t.column("priority", .integer).notNull()
            t.column("text", .text).notNull()
        }
        try db.create(indexOn: name, columns: ["priority"], options: .ifNotExists)
    }

    /// The table of `mt-insert-disjoint`'s partition `partition`: the main table's columns
    /// and index, created on first use.
    private func partitionTable(_ partition: Int) throws -> String {
        let table = "record_\(partition)"
        try pool.write { db in try Self.createRecordTable(table, in: db) }
        return table
    }

    /// Inserts through the record's `Codable` encoding (`databaseDictionary`) into a
    /// partition's table: GRDB's record insert names the type's one table, so the row is
    /// bound to a cached statement instead.
    private func insertNow(_ records: [CrudRecord], intoPartition partition: Int) throws {
        let table = "record_\(partition)"
        try pool.write { db in
            let statement = try db.cachedStatement(
                sql: "INSERT INTO \(table) (id, title, color, tag, priority, text) VALUES (?, ?, ?, ?, ?, ?)")
            for record in records {
                let values = try record.databaseDictionary
                try statement.execute(arguments: [
                    values["id"], values["title"], values["color"], values["tag"], values["priority"], values["text"],
                ])
            }
        }
    }

    private func fetchNow(id: Int64, fromPartition partition: Int) throws -> CrudRecord? {
        let table = try partitionTable(partition)
        return try pool.read { db in
            try CrudRecord.fetchOne(db, sql: "SELECT * FROM \(table) WHERE id = ?", arguments: [id])
        }
    }

    func insert(_ records: [CrudRecord]) async throws { try insertNow(records) }
    func fetchAll(color: Int) async throws -> [CrudRecord] { try fetchAllNow(color: color) }
    func fetchEveryDecodedRecord(whereColorIs color: Int) async throws -> [CrudRecord] {
        try fetchEveryDecodedNow(color: color)
    }
    func fetch(id: Int64) async throws -> CrudRecord? { try fetchNow(id: id) }
    func fetchAll(priorityIn range: Range<Int>) async throws -> [CrudRecord] { try fetchAllNow(priorityIn: range) }
    func update(_ record: CrudRecord) async throws { try updateNow(record) }
    func delete(ids: [Int64]) async throws { try deleteNow(ids: ids) }
    func insert(_ records: [CrudRecord], intoPartition partition: Int) async throws {
        try insertNow(records, intoPartition: partition)
    }
    func fetch(id: Int64, fromPartition partition: Int) async throws -> CrudRecord? {
        try fetchNow(id: id, fromPartition: partition)
    }
    func query(color: Int) async throws -> [CrudRecord] { try queryNow(color: color) }
    func query(priorityFrom lower: Int, below upper: Int) async throws -> [CrudRecord] {
        try queryNow(priorityFrom: lower, below: upper)
    }
    func queryPlanNote(_ query: CrudQuery) async throws -> String { try queryPlanNoteNow(query) }
    func query(priorityAtLeast lower: Int, sortedByTitleLimit limit: Int) async throws -> [CrudRecord] {
        try queryNow(Self.sortedRequest(priorityAtLeast: lower, limit: limit))
    }
    func query(priorityFrom lower: Int, below upper: Int, idAtMost maximumID: Int64) async throws -> [CrudRecord] {
        try queryNow(Self.compoundRequest(lower, upper, maximumID))
    }
    func queryFirst(id: Int64) async throws -> CrudRecord? { try queryFirstNow(id: id) }
    func updateWhere(priorityAtLeast lower: Int, tag: String) async throws -> Int {
        try updateWhereNow(priorityAtLeast: lower, tag: tag)
    }
    func deleteWhere(priorityAtLeast lower: Int) async throws -> Int { try deleteWhereNow(priorityAtLeast: lower) }
    func close() async throws { try pool.close() }
    func rangeQueryNote() async throws -> String? { try rangeQueryNoteNow() }

    private func insertNow(_ records: [CrudRecord]) throws {
        try pool.write { db in
            for record in records { try record.insert(db) }
        }
    }

    private func fetchEveryDecodedNow(color: Int) throws -> [CrudRecord] {
        try pool.read { db in try CrudRecord.fetchAll(db).filter { $0.color == color } }
    }

    private func fetchAllNow(color: Int) throws -> [CrudRecord] {
        try pool.read { db in try CrudRecord.filter(Column("color") == color).fetchAll(db) }
    }

    private func fetchNow(id: Int64) throws -> CrudRecord? {
        try pool.read { db in try CrudRecord.fetchOne(db, key: id) }
    }

    private func fetchAllNow(priorityIn range: Range<Int>) throws -> [CrudRecord] {
        try pool.read { db in try CrudRecord.filter(range.contains(Column("priority"))).fetchAll(db) }
    }

    private func updateNow(_ record: CrudRecord) throws {
        try pool.write { db in try record.update(db) }
    }

    private func deleteNow(ids: [Int64]) throws {
        try pool.write { db in
            for id in ids { _ = try CrudRecord.deleteOne(db, key: id) }
        }
    }

    // MARK: Queries: GRDB's query interface

    private func queryNow(color: Int) throws -> [CrudRecord] {
        try pool.read { db in try CrudRecord.filter(Column("color") == color).fetchAll(db) }
    }

    private static func priorityRequest(from lower: Int, below upper: Int) -> QueryInterfaceRequest<CrudRecord> {
        CrudRecord.filter(Column("priority") >= lower && Column("priority") < upper)
    }

    private static func sortedRequest(priorityAtLeast lower: Int, limit: Int) -> QueryInterfaceRequest<CrudRecord> {
        CrudRecord.filter(Column("priority") >= lower).order(Column("title")).limit(limit)
    }

    private static func compoundRequest(
        _ lower: Int, _ upper: Int, _ maximumID: Int64
    ) -> QueryInterfaceRequest<CrudRecord> {
        CrudRecord.filter(Column("priority") >= lower && Column("priority") < upper && Column("id") <= maximumID)
    }

    private func queryNow(_ request: QueryInterfaceRequest<CrudRecord>) throws -> [CrudRecord] {
        try pool.read { db in try request.fetchAll(db) }
    }

    private func queryNow(priorityFrom lower: Int, below upper: Int) throws -> [CrudRecord] {
        try pool.read { db in try Self.priorityRequest(from: lower, below: upper).fetchAll(db) }
    }

    /// SQLite's plan for a query workload's request; for `query-indexed`'s, throws unless it
    /// searches the index.
    private func queryPlanNoteNow(_ query: CrudQuery) throws -> String {
        let request: QueryInterfaceRequest<CrudRecord>
        switch query {
        case .color(let color): request = CrudRecord.filter(Column("color") == color)
        case .priorityRange(let lower, let upper), .priorityConjunction(let lower, let upper):
            request = Self.priorityRequest(from: lower, below: upper)
        case .id(let id): request = CrudRecord.filter(Column("id") == id)
        case .priorityAtLeast(let lower): request = CrudRecord.filter(Column("priority") >= lower)
        case .priorityAtLeastByTitle(let lower, let limit):
            request = Self.sortedRequest(priorityAtLeast: lower, limit: limit)
        case .priorityRangeAndID(let lower, let upper, let maximumID):
            request = Self.compoundRequest(lower, upper, maximumID)
        }
        let plan = try pool.read { db in
            let statement = try request.makePreparedRequest(db).statement
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                .map { ($0["detail"] as String?) ?? "" }.joined(separator: "; ")
        }
        if case .priorityRange = query, !plan.contains("USING INDEX") {
            throw BenchError.harness("GRDB query-indexed does not use the index: \(plan)")
        }
        return "SQLite plan: \(plan)"
    }

    private func queryFirstNow(id: Int64) throws -> CrudRecord? {
        try pool.read { db in try CrudRecord.filter(Column("id") == id).fetchOne(db) }
    }

    private func updateWhereNow(priorityAtLeast lower: Int, tag: String) throws -> Int {
        try pool.write { db in
            try CrudRecord.filter(Column("priority") >= lower).updateAll(db, Column("tag").set(to: tag))
        }
    }

    private func deleteWhereNow(priorityAtLeast lower: Int) throws -> Int {
        try pool.write { db in try CrudRecord.filter(Column("priority") >= lower).deleteAll(db) }
    }

    /// SQLite's plan for the `range-index` query; throws unless it searches the index.
    private func rangeQueryNoteNow() throws -> String? {
        let plan = try pool.read { db in
            let request = CrudRecord.filter((0..<1).contains(Column("priority")))
            let statement = try request.makePreparedRequest(db).statement
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                .map { ($0["detail"] as String?) ?? "" }.joined(separator: "; ")
        }
        guard plan.contains("USING INDEX") else {
            throw BenchError.harness("GRDB range query does not use the index: \(plan)")
        }
        return "SQLite plan: \(plan)"
    }
}
