import Foundation
import FolioStorage

/// What the store records about a datastore, in the `folio/catalog` tree (JSON): the types
/// it was declared with and the state of each declared index. Compared with the code's
/// declaration on first use to build, rebuild or drop indexes.
struct CatalogEntry: Codable, Equatable, Sendable {
    struct IndexState: Codable, Equatable, Sendable {
        var fingerprint: String
        var kind: IndexKind
        var storage: IndexStorage
        /// `true` once every record has its entries.
        var built: Bool
        /// While building: the identifier key of the last record processed (resume after it).
        var resumeAfter: [UInt8]?
        /// Identifier keys of records the build could not index (they no longer decoded, or
        /// conflicted in a unique index): at most ``unindexedListLimit`` of them. Absent
        /// (not encoded) when there are none, so older entries read and compare unchanged.
        var unindexed: [[UInt8]]?
        /// How many records the build could not index, listed or not.
        var unindexedCount: Int?

        /// Caps the list (the entry is rewritten with every build batch).
        static let unindexedListLimit = 1_000

        mutating func noteUnindexed(_ identifier: [UInt8]) {
            unindexedCount = (unindexedCount ?? 0) + 1
            if (unindexed?.count ?? 0) < Self.unindexedListLimit { unindexed = (unindexed ?? []) + [identifier] }
        }
    }

    /// Layout version of this entry.
    var layout: Int = 1
    var instanceType: String
    var identifierType: String
    /// Tags of the versions the format declared when this entry was last written, and the
    /// current one.
    var versions: [String]
    var currentVersion: String
    var indexes: [String: IndexState]

    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array((try? encoder.encode(self)) ?? Data())
    }

    static func decode(_ bytes: [UInt8], datastore: String) throws(FolioError) -> CatalogEntry {
        guard let entry = try? JSONDecoder().decode(CatalogEntry.self, from: Data(bytes)) else {
            throw .corruptRecord(datastore: datastore, detail: "its catalog entry is not valid JSON")
        }
        return entry
    }
}
