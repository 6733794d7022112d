import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport

/// What the key-value tests beyond the basics share: a small struct value, fresh store
/// paths, the long-mode switch, and waiting for a condition with a generous guard (never a
/// timing assertion: the deadline only turns a hang into a failure).
enum KV {
    /// `FOLIO_STRESS_TESTS=1` runs more seeds and longer timelines (as the other stress suites do).
    static var isLong: Bool { ProcessInfo.processInfo.environment["FOLIO_STRESS_TESTS"] == "1" }

    /// A fresh store path under the temporary directory (the caller removes it).
    static func temporaryPath(_ label: String) -> String {
        FileManager.default.temporaryDirectory.path + "/kv-\(label)-\(UUID().uuidString)"
    }

    /// Options with a quiet log, no background compaction, and the given caches.
    static func options(
        durability: FolioStorage.Durability = .full,
        valueCache: RecordCacheLimits? = RecordCacheLimits(count: 100_000, bytes: 32 << 20),
        log: @escaping @Sendable (String) -> Void = { _ in }
    )
        -> PersistenceOptions
    {
        PersistenceOptions(durability: durability, autoCompaction: nil, log: log, valueCache: valueCache)
    }

    /// Polls `condition` until it holds, or the shared hang guard passes; returns whether it held.
    static func eventually(_ condition: () throws -> Bool) async rethrows -> Bool {
        try await FolioTestSupport.eventually(every: .milliseconds(2), condition)
    }
}

/// A small Codable struct value (the "small Codable struct").
struct KVPoint: Codable, Sendable, Equatable, CustomStringConvertible {
    var x: Int
    var label: String
    var description: String { "(\(x), \(label))" }
}
