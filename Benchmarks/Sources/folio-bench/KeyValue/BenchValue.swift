import Foundation

/// A value type of the `kv` suite: Dflat's key-value cases run once with `Int` values and
/// once with ``BenchSetting`` (a small `Codable` struct).
///
/// Each type says how an app would keep it in `UserDefaults`: an `Int` natively, a struct as
/// JSON `Data` (UserDefaults takes property-list types only). Folio stores either through its
/// own `Codable` path; GRDB's table keeps every value JSON-encoded in a BLOB.
protocol BenchValue: Codable, Sendable, Equatable {
    /// The row name's suffix: `int` or `struct`.
    static var label: String { get }
    /// The value stored under key `index` in every system and every run.
    static func make(_ index: Int) -> Self
    /// A number folded into the workloads' checksums.
    var checksum: Int { get }
    /// Stores the value as an app would in `UserDefaults`.
    func store(in defaults: UserDefaults, forKey key: String) throws
    /// Reads a value stored by ``store(in:forKey:)``, or nil if none is.
    static func read(from defaults: UserDefaults, forKey key: String) throws -> Self?
}

extension Int: BenchValue {
    static var label: String { "int" }
    static func make(_ index: Int) -> Int { index &* 7 &+ 1 }
    var checksum: Int { self }

    func store(in defaults: UserDefaults, forKey key: String) throws {
        defaults.set(self, forKey: key)
    }

    /// `integer(forKey:)`, the call an app makes (0 for a missing key: every key read is
    /// present, which the checksums verify).
    static func read(from defaults: UserDefaults, forKey key: String) throws -> Int? {
        defaults.integer(forKey: key)
    }
}

/// The small `Codable` struct of the `kv` suite: a String, an Int, a Double and a Bool
/// (about 60 bytes of JSON), like a setting an app keeps.
struct BenchSetting: BenchValue {
    var name: String
    var count: Int
    var ratio: Double
    var enabled: Bool

    static var label: String { "struct" }

    static func make(_ index: Int) -> BenchSetting {
        BenchSetting(name: "setting-\(index)", count: index, ratio: Double(index) / 8, enabled: index % 2 == 0)
    }

    var checksum: Int { count &+ name.utf8.count &+ (enabled ? 1 : 0) }

    /// JSON `Data` through Foundation's encoder: how apps keep a `Codable` struct in
    /// UserDefaults.
    func store(in defaults: UserDefaults, forKey key: String) throws {
        defaults.set(try JSONEncoder().encode(self), forKey: key)
    }

    static func read(from defaults: UserDefaults, forKey key: String) throws -> BenchSetting? {
        guard let data = defaults.data(forKey: key) else { return nil }
        return try JSONDecoder().decode(BenchSetting.self, from: data)
    }
}
