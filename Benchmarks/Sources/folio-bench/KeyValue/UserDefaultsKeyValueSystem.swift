import Foundation

/// Foundation's `UserDefaults(suiteName:)` as it persists on this platform, the `kv`
/// suite's baseline: on Linux swift-corelibs-foundation keeps a suite as one XML property
/// list, `$XDG_CONFIG_HOME/<suite>.plist` (default `~/.config`), read whole on the first
/// access and rewritten whole by `synchronize()`: in place (strace: `open(O_TRUNC)`, `write`,
/// one `fsync`, no rename), so it is durable when synchronize returns, but a crash during
/// the write can leave the file truncated.
///
/// Its `set` costs grow with the square of the keys set since the last `synchronize()`
/// (probe, Int values, one process: 2,000 sets 0.25 s, 8,000 sets 4.7 s; 40,000 would take
/// about 2 minutes; perf: each set searches the suite's list of changed keys linearly,
/// `CFArrayContainsValue` under `writeXMLValue`, and synchronize empties it), so its timed insert rows set n/10 keys (4,000 of Dflat's 40,000): its
/// per-key rate there is better than at n, and a ratio against it understates Folio's lead.
/// Its reads run over all n keys, filled untimed 1,000 keys per synchronize.
///
/// Every instance uses a suite of its own, named after the run and its directory, whose
/// plist file is deleted when it closes. Cold reads (``reopenedCold(durability:)``) copy the
/// plist to a new suite: Foundation caches a suite's contents per process, so reopening the
/// same suite would read nothing from disk.
final class UserDefaultsKeyValueSystem: KeyValueSystem {
    static let systemName = "userdefaults"
    static let setIsPersisted = false
    static let hasTransactions = false

    static func timedSetKeys(_ n: Int) -> Int { max(1, n / 10) }

    static func durabilityNote(_ durability: BenchDurability) -> String {
        "UserDefaults: synchronize() rewrites the whole plist in place and fsyncs it (no transactions, no rename; --durability does not apply)"
    }

    let suite: String
    let defaults: UserDefaults
    // nonisolated(unsafe): only the harness's own task opens systems (workload set-up).
    nonisolated(unsafe) private static var counter = 0

    private init(suite: String) throws {
        guard let defaults = UserDefaults(suiteName: suite) else {
            throw BenchError.harness("UserDefaults(suiteName: \(suite)) is nil")
        }
        self.suite = suite
        self.defaults = defaults
    }

    /// A suite name no other run or instance uses.
    private static func newSuite() -> String {
        counter += 1
        return "folio-bench-kv-\(getpid())-\(counter)"
    }

    /// The directory swift-corelibs-foundation keeps suites in: `$XDG_CONFIG_HOME`, or
    /// `~/.config`.
    static var preferencesDirectory: String {
        if let config = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config }
        return NSHomeDirectory() + "/.config"
    }

    /// The plist file of `suite`.
    static func plistPath(_ suite: String) -> String { preferencesDirectory + "/\(suite).plist" }

    static func open(directory: String, durability: BenchDurability) async throws -> UserDefaultsKeyValueSystem {
        try UserDefaultsKeyValueSystem(suite: newSuite())
    }

    func set<Value: BenchValue>(_ keys: BenchKeys<Value>, in indexes: Range<Int>) throws {
        for index in indexes { try keys.values[index].store(in: defaults, forKey: keys.names[index]) }
    }

    /// `synchronize()`; throws if it fails or leaves no plist where Foundation keeps suites
    /// (the figures would then not measure a write to disk).
    func persist() async throws {
        guard defaults.synchronize() else { throw BenchError.harness("UserDefaults.synchronize() failed for \(suite)") }
        guard FileManager.default.fileExists(atPath: Self.plistPath(suite)) else {
            throw BenchError.harness("no plist at \(Self.plistPath(suite)) after synchronize()")
        }
    }

    func value<Value: BenchValue>(_ keys: BenchKeys<Value>, at index: Int) throws -> Value? {
        try Value.read(from: defaults, forKey: keys.names[index])
    }

    func reopenedCold(durability: BenchDurability) async throws -> UserDefaultsKeyValueSystem {
        try await persist()
        let cold = Self.newSuite()
        try FileManager.default.copyItem(atPath: Self.plistPath(suite), toPath: Self.plistPath(cold))
        try await closeAndRemove()
        return try UserDefaultsKeyValueSystem(suite: cold)
    }

    func bytesOnDisk() -> Int64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: Self.plistPath(suite))
        return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Deletes the suite's plist. Foundation keeps the suite's contents in memory until the
    /// process exits: `removePersistentDomain(forName:)` would drop them, but it removes the
    /// keys one by one through the same list of changed keys that makes `set` quadratic
    /// (minutes for 40,000 keys, perf: `CFArrayContainsValue` under `writeXMLValue`).
    func closeAndRemove() async throws {
        try? FileManager.default.removeItem(atPath: Self.plistPath(suite))
    }
}
