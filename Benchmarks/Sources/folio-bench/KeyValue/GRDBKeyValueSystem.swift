import Foundation
import GRDB

/// GRDB.swift's side of the `kv` suite: a table `kv(key TEXT PRIMARY KEY, value BLOB)` whose
/// values are JSON (Foundation's `JSONEncoder`), in a `DatabasePool` set up exactly as the
/// crud suite's (``GRDBCrudSystem``): WAL mode, `PRAGMA synchronous = FULL` for
/// `--durability full` (NORMAL for `grouped`), set on the writer and read back.
///
/// ``set(_:in:)`` is one `write` transaction for all the keys; one transaction per key is one
/// `write` each; a read is one `read` each (`SELECT value FROM kv WHERE key = ?`). The
/// methods call GRDB's synchronous API, as the crud suite's do.
final class GRDBKeyValueSystem: KeyValueSystem {
    static let systemName = "grdb"
    static let setIsPersisted = true
    static let hasTransactions = true

    static func durabilityNote(_ durability: BenchDurability) -> String {
        "GRDB: DatabasePool, WAL, synchronous = \(durability.sqliteSynchronous.name) (the crud suite's set-up)"
    }

    let directory: String
    let pool: DatabasePool
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    private init(directory: String, pool: DatabasePool) {
        self.directory = directory
        self.pool = pool
    }

    static func open(directory: String, durability: BenchDurability) async throws -> GRDBKeyValueSystem {
        try openNow(directory: directory, durability: durability)
    }

    private static func openNow(directory: String, durability: BenchDurability) throws -> GRDBKeyValueSystem {
        let pool = try GRDBPool.open(path: directory + "/values.sqlite", durability: durability)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS kv(key TEXT PRIMARY KEY, value BLOB)")
        }
        return GRDBKeyValueSystem(directory: directory, pool: pool)
    }

    func set<Value: BenchValue>(_ keys: BenchKeys<Value>, in indexes: Range<Int>) throws {
        let encoder = encoder
        try pool.write { db in
            let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO kv(key, value) VALUES (?, ?)")
            for index in indexes {
                try statement.execute(arguments: [keys.names[index], try encoder.encode(keys.values[index])])
            }
        }
    }

    /// Nothing to do: every write transaction is committed with the pool's durability.
    func persist() async throws {}

    func setEachInTransaction<Value: BenchValue>(_ keys: BenchKeys<Value>, in indexes: Range<Int>) async throws {
        try setEachNow(keys, in: indexes)
    }

    private func setEachNow<Value: BenchValue>(_ keys: BenchKeys<Value>, in indexes: Range<Int>) throws {
        let encoder = encoder
        for index in indexes {
            let data = try encoder.encode(keys.values[index])
            try pool.write { db in
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO kv(key, value) VALUES (?, ?)")
                    .execute(arguments: [keys.names[index], data])
            }
        }
    }

    func value<Value: BenchValue>(_ keys: BenchKeys<Value>, at index: Int) throws -> Value? {
        let name = keys.names[index]
        let data = try pool.read { db in
            try Data.fetchOne(db.cachedStatement(sql: "SELECT value FROM kv WHERE key = ?"), arguments: [name])
        }
        return try data.map { try decoder.decode(Value.self, from: $0) }
    }

    func reopenedCold(durability: BenchDurability) async throws -> GRDBKeyValueSystem {
        try pool.close()
        return try Self.openNow(directory: directory, durability: durability)
    }

    func bytesOnDisk() -> Int64 { Scratch.bytesOnDisk(directory) }

    func closeAndRemove() async throws {
        try pool.close()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
