import GRDB

// GRDB's side of the probe: the same record inserted through GRDB.swift (WAL,
// synchronous FULL, `Codable` row mapping, an index on priority), so a record's
// instructions can be set beside Folio's under callgrind, which counts the same on a busy
// machine as on a quiet one.

extension CrudRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "record"
}

/// `transactions` write transactions of `batch` new records each into a fresh database in
/// `directory` (folio-bench's mt-insert work for one writer); returns the records written.
/// The table and index are folio-bench's (`GRDBCrudSystem.createRecordTable`, in another
/// executable of this package): change both together, or the two sides stop comparing.
func grdbBatches(directory: String, transactions: Int, batch: Int) throws -> Int {
    let pool = try DatabasePool(path: directory + "/records.sqlite")
    try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    try pool.write { db in
        try db.create(table: CrudRecord.databaseTableName) { t in
            t.primaryKey("id", .integer)
            t.column("title", .text).notNull()
            t.column("color", .integer).notNull()
            t.column("tag", .text).notNull()
            t.column("priority", .integer).notNull()
            t.column("text", .text).notNull()
        }
        try db.create(indexOn: CrudRecord.databaseTableName, columns: ["priority"])
    }
    let records = batchRecords(transactions: transactions, batch: batch)
    for slice in records {
        try pool.write { db in for record in slice { try record.insert(db) } }
    }
    try pool.close()
    return transactions * batch
}

/// The records of `transactions` batches of `batch`, made before any is written so that
/// making them is the same cost on both sides.
func batchRecords(transactions: Int, batch: Int) -> [[CrudRecord]] {
    (0..<transactions).map { t in
        (0..<batch).map { i in CrudRecord.make(id: Int64(t * batch + i + 1), n: 10_000) }
    }
}
