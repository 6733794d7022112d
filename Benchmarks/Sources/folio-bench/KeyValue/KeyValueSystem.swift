/// One system's side of the `kv` suite: Folio's key-value store, Foundation's
/// `UserDefaults`, or a GRDB key-value table.
///
/// Semantics every implementation keeps, so that the systems do the same work:
/// - ``open(directory:durability:)`` opens (creating if empty) a store of its own in
///   `directory` (UserDefaults: a suite named after it, whose plist lives where Foundation
///   keeps it).
/// - ``set(_:in:)`` stores values the system's usual way; whether it persists them depends
///   on ``setIsPersisted``. ``persist()`` makes every earlier set durable to the extent the
///   system can (see ``durabilityNote(_:)``).
/// - ``value(_:in:)`` reads one key as an app would (one call per key).
protocol KeyValueSystem: AnyObject {
    /// The `system` of the result rows.
    static var systemName: String { get }
    /// What a persisted write of this system survives, for the rows' notes.
    static func durabilityNote(_ durability: BenchDurability) -> String
    /// Whether ``set(_:in:)`` alone persists (GRDB: one write transaction), so that the
    /// suite's in-memory rows do not apply.
    static var setIsPersisted: Bool { get }
    /// Whether ``setEachInTransaction(_:in:)`` exists (not for UserDefaults).
    static var hasTransactions: Bool { get }
    /// Keys the timed insert rows (`set-*`) set at suite size `n`: n, or fewer for a system
    /// whose inserts would take minutes at n (UserDefaults).
    static func timedSetKeys(_ n: Int) -> Int

    static func open(directory: String, durability: BenchDurability) async throws -> Self

    /// Sets the values of `indexes` (UserDefaults: `set` without synchronize; Folio: `set`
    /// outside a transaction; GRDB: all in one write transaction).
    func set<Value: BenchValue>(_ keys: BenchKeys<Value>, in indexes: Range<Int>) throws
    /// Makes every earlier set durable (Folio: `flush()`; UserDefaults: `synchronize()`).
    func persist() async throws
    /// Sets the values of `indexes`, each in a transaction of its own, committed (durably,
    /// with the run's durability) before the next begins.
    func setEachInTransaction<Value: BenchValue>(_ keys: BenchKeys<Value>, in indexes: Range<Int>) async throws
    /// The value of key `index`, or nil if none is stored.
    func value<Value: BenchValue>(_ keys: BenchKeys<Value>, at index: Int) throws -> Value?
    /// Closes this instance and opens a cold one over the same data: a new instance that
    /// has read nothing yet, so that the first read of each key goes to the file.
    func reopenedCold(durability: BenchDurability) async throws -> Self
    /// Bytes the store takes on disk now.
    func bytesOnDisk() -> Int64
    /// Closes and removes what the store wrote (files outside its directory too).
    func closeAndRemove() async throws
}

extension KeyValueSystem {
    static func timedSetKeys(_ n: Int) -> Int { n }

    /// Untimed set-up: sets the values of `indexes` and persists them, 1,000 keys at a time
    /// (what keeps UserDefaults' set-up linear: see ``UserDefaultsKeyValueSystem``).
    func fill<Value: BenchValue>(_ keys: BenchKeys<Value>, in indexes: Range<Int>) async throws {
        for start in stride(from: indexes.lowerBound, to: indexes.upperBound, by: 1_000) {
            try set(keys, in: start..<min(start + 1_000, indexes.upperBound))
            try await persist()
        }
    }

    func setEachInTransaction<Value: BenchValue>(_ keys: BenchKeys<Value>, in indexes: Range<Int>) async throws {
        throw BenchError.harness("\(Self.systemName) has no transactions")
    }
}

/// The systems the `kv` suite compares, in report order.
enum KeyValueSystems {
    static var all: [any KeyValueSystem.Type] {
        [
            FolioKeyValueSystem.self, UserDefaultsKeyValueSystem.self, GRDBKeyValueSystem.self,
        ]
    }
}
