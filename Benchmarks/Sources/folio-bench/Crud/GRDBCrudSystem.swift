import GRDB

/// GRDB's row mapping for the benchmark record: its synthesized `Codable` conformance
/// (columns named after the properties), in the table `record`.
extension CrudRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "record"
}

/// GRDB.swift's side of the `crud` and `scale` suites: a `DatabasePool` (WAL mode), with
/// `PRAGMA synchronous` FULL for `--durability full` and NORMAL for `grouped`, `Codable`
/// records, an index on `priority` (Folio has one) and none on `color`.
final class GRDBCrudSystem: CrudSystem {
    static let systemName = "grdb"

    private let pool: DatabasePool

    private init(pool: DatabasePool) { self.pool = pool }

    static func open(directory: String, durability: BenchDurability) throws -> GRDBCrudSystem {
        let pool = try DatabasePool(path: directory + "/records.sqlite", configuration: Configuration())
        // DatabasePool sets `synchronous = NORMAL` on its writer after every
        // `prepareDatabase` hook has run, so the setting is made here, on the writer itself
        // (one connection for the pool's life), and read back.
        let wanted = durability.sqliteSynchronous
        let (journal, synchronous) = try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(wanted.name)")
            return (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        guard journal == "wal", synchronous == wanted.value else {
            throw BenchError.harness("GRDB pool is in journal mode \(journal ?? "?"), synchronous \(synchronous ?? -1); wanted wal, \(wanted.value)")
        }
        try pool.write { db in
            try db.create(table: CrudRecord.databaseTableName, ifNotExists: true) { t in
                t.primaryKey("id", .integer)
                t.column("title", .text).notNull()
                t.column("color", .integer).notNull()
                t.column("tag", .text).notNull()
                t.column("priority", .integer).notNull()
                t.column("text", .text).notNull()
            }
            try db.create(indexOn: CrudRecord.databaseTableName, columns: ["priority"], options: .ifNotExists)
        }
        return GRDBCrudSystem(pool: pool)
    }

    func insert(_ records: [CrudRecord]) throws {
        try pool.write { db in
            for record in records { try record.insert(db) }
        }
    }

    func fetchAll(color: Int) throws -> [CrudRecord] {
        try pool.read { db in try CrudRecord.filter(Column("color") == color).fetchAll(db) }
    }

    func fetch(id: Int64) throws -> CrudRecord? {
        try pool.read { db in try CrudRecord.fetchOne(db, key: id) }
    }

    func fetchAll(priorityIn range: Range<Int>) throws -> [CrudRecord] {
        try pool.read { db in try CrudRecord.filter(range.contains(Column("priority"))).fetchAll(db) }
    }

    func update(_ record: CrudRecord) throws {
        try pool.write { db in try record.update(db) }
    }

    func delete(ids: [Int64]) throws {
        try pool.write { db in
            for id in ids { _ = try CrudRecord.deleteOne(db, key: id) }
        }
    }

    func close() throws {
        try pool.close()
    }

    /// SQLite's plan for the `range-index` query; throws unless it searches the index.
    func rangeQueryNote() throws -> String? {
        let plan = try pool.read { db in
            let request = CrudRecord.filter((0..<1).contains(Column("priority")))
            let statement = try request.makePreparedRequest(db).statement
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                .map { ($0["detail"] as String?) ?? "" }.joined(separator: "; ")
        }
        guard plan.contains("USING INDEX") else { throw BenchError.harness("GRDB range query does not use the index: \(plan)") }
        return "SQLite plan: \(plan)"
    }
}
