/// The files of a store in its directory (Docs/Format.md §2):
///
///     <store>/info                    format version and creation date (JSON)
///     <store>/root                    the root file: two root slots, written in place (§8)
///     <store>/root.tmp                a root file being created or upgraded from version 1
///                                     (removed by the next writer)
///     <store>/lock                    the writer's advisory lock; never renamed or replaced
///     <store>/compaction.lock         the compaction lock (CompactionLock.swift): held by the
///                                     one process copying into a new snapshot file; created
///                                     by the first compaction; never renamed or replaced
///     <store>/turns                   waiting writers' requests for the lock (TurnRequest.swift):
///                                     created by writers where files can be mapped; a hint
///     <store>/snapshots/<n>.folio     append-only snapshot files, n in 16 lower-case hex digits
///     <store>/snapshots/reclaim.tmp   the header-only file that replaces an interrupted
///                                     compaction's copy, before its rename (removed by the
///                                     next writer)
struct StoreLayout: Sendable {
    let directory: String

    init(directory: String) {
        var directory = directory
        while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
        self.directory = directory
    }

    var info: String { StoragePath.join(directory, "info") }
    var root: String { StoragePath.join(directory, "root") }
    var rootTemporary: String { StoragePath.join(directory, "root.tmp") }
    var infoTemporary: String { StoragePath.join(directory, "info.tmp") }
    var lock: String { StoragePath.join(directory, "lock") }
    var compactionLock: String { StoragePath.join(directory, "compaction.lock") }
    var turns: String { StoragePath.join(directory, "turns") }
    var snapshots: String { StoragePath.join(directory, "snapshots") }
    var reclaimTemporary: String { StoragePath.join(snapshots, "reclaim.tmp") }

    func snapshot(_ number: UInt64) -> String {
        StoragePath.join(snapshots, Self.snapshotName(number))
    }

    static func snapshotName(_ number: UInt64) -> String {
        let hex = String(number, radix: 16)
        return String(repeating: "0", count: max(0, 16 - hex.count)) + hex + ".folio"
    }

    /// The number of a snapshot file name, or nil if the name is not one.
    static func snapshotNumber(fromName name: String) -> UInt64? {
        // Exactly what snapshotName writes: 16 lower-case hex digits (no sign, no upper case).
        let digits = name.utf8.prefix(16)
        guard name.utf8.count == 22, name.hasSuffix(".folio"),
            digits.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
        else { return nil }
        return UInt64(String(decoding: digits, as: UTF8.self), radix: 16)
    }

    /// Names a store directory may hold; anything else means it is not (only) a store.
    static let knownNames: Set<String> = [
        "info", "info.tmp", "root", "root.tmp", "lock", "compaction.lock", "turns", "snapshots",
    ]
}
