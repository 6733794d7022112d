import Foundation
import FolioStorage

/// A fresh directory under the system's temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init(_ label: String = "folio") {
        let base = FileManager.default.temporaryDirectory.path
        path = "\(base)/\(label)-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    func child(_ name: String) -> String { "\(path)/\(name)" }
}

/// Options for tests: no automatic compaction (tests compact on purpose), quiet log.
///
/// Transactions spill their changed pages once they hold about 32 KiB of changes (the
/// default is 64 MiB), so that every engine test with a larger transaction also runs the
/// spilling path (WriteTransaction+Spill.swift): model tests, savepoints, power cuts and
/// fault sweeps included.
func testOptions(
    _ fileSystem: any FileSystem = POSIXFileSystem(), durability: Durability = .full,
    cache: Int = 8 << 20, log: @escaping @Sendable (String) -> Void = { _ in }
) -> StoreOptions {
    var options = StoreOptions(
        fileSystem: fileSystem, durability: durability, cacheCapacity: cache, autoCompaction: nil,
        retention: SnapshotRetention(gracePeriod: .zero), log: log)
    options.transactionSpillBytes = 32 << 10
    return options
}

/// Bytes of a string, for readable test keys and values.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
