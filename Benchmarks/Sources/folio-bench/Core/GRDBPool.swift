import Foundation
import GRDB

/// The GRDB set-up every comparison uses (the crud and kv suites): a `DatabasePool` (WAL)
/// whose writer has the durability asked for, checked by reading it back.
enum GRDBPool {
    /// Opens the database at `path`. `DatabasePool` sets `synchronous = NORMAL` on its
    /// writer after every `prepareDatabase` hook has run, so the setting is made here, on
    /// the writer itself (one connection for the pool's life), and read back.
    ///
    /// `busyTimeout`: how long a statement waits for a lock another process holds
    /// (`busyMode = .timeout`, SQLite's busy handler) before failing with `SQLITE_BUSY`;
    /// nil keeps GRDB's default (fail at once), which every one-process row uses.
    static func open(
        path: String, durability: BenchDurability, busyTimeout: TimeInterval? = nil
    ) throws
        -> DatabasePool
    {
        var configuration = Configuration()
        if let busyTimeout { configuration.busyMode = .timeout(busyTimeout) }
        let pool = try DatabasePool(path: path, configuration: configuration)
        let wanted = durability.sqliteSynchronous
        let (journal, synchronous) = try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(wanted.name)")
            return (
                try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous")
            )
        }
        guard journal == "wal", synchronous == wanted.value else {
            throw BenchError.harness(
                "GRDB pool is in journal mode \(journal ?? "?"), synchronous \(synchronous ?? -1); wanted wal, \(wanted.value)"
            )
        }
        return pool
    }
}
