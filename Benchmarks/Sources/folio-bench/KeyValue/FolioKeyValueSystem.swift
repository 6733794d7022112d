import Foundation
import Folio

/// Folio's side of the `kv` suite: `persistence.values` of a `Persistence` of its own, with
/// the default value cache (100,000 entries, 32 MiB) and `--durability` (``Durability/full``
/// unless `grouped`).
///
/// Sets outside a transaction return at once and are committed in the background;
/// ``persist()`` is `values.flush()`. One transaction per key is
/// `persistence.perform { try values.set(v, for: k) }`.
final class FolioKeyValueSystem: KeyValueSystem {
    static let systemName = "folio"
    static let setIsPersisted = false
    static let hasTransactions = true

    static func durabilityNote(_ durability: BenchDurability) -> String {
        durability == .full
            ? "Folio: Durability.full (flush and each perform return after fsync)"
            : "Folio: Durability.grouped (flush syncs now; perform may lose the last 10 ms)"
    }

    let directory: String
    private(set) var persistence: Persistence<ReadWrite>

    private init(directory: String, persistence: Persistence<ReadWrite>) {
        self.directory = directory
        self.persistence = persistence
    }

    static func open(directory: String, durability: BenchDurability) async throws -> FolioKeyValueSystem {
        FolioKeyValueSystem(directory: directory, persistence: try openPersistence(directory, durability))
    }

    private static func openPersistence(
        _ directory: String, _ durability: BenchDurability
    ) throws -> Persistence<ReadWrite> {
        try Persistence(at: directory, options: PersistenceOptions(durability: durability.engine))
    }

    func set<Value: BenchValue>(_ keys: BenchKeys<Value>, in indexes: Range<Int>) throws {
        let values = persistence.values
        for index in indexes { try values.set(keys.values[index], for: keys.folioKeys[index]) }
    }

    func persist() async throws {
        try await persistence.values.flush()
    }

    func setEachInTransaction<Value: BenchValue>(_ keys: BenchKeys<Value>, in indexes: Range<Int>) async throws {
        let values = persistence.values
        for index in indexes {
            let value = keys.values[index], key = keys.folioKeys[index]
            try await persistence.perform { try values.set(value, for: key) }
        }
    }

    func value<Value: BenchValue>(_ keys: BenchKeys<Value>, at index: Int) throws -> Value? {
        let key = keys.folioKeys[index]
        let value = try persistence.values.value(for: key)
        return value == key.defaultValue ? nil : value
    }

    func reopenedCold(durability: BenchDurability) async throws -> FolioKeyValueSystem {
        try await persistence.values.flush()
        persistence.close()
        return FolioKeyValueSystem(directory: directory, persistence: try Self.openPersistence(directory, durability))
    }

    func bytesOnDisk() -> Int64 { Scratch.bytesOnDisk(directory) }

    func closeAndRemove() async throws {
        persistence.close()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
