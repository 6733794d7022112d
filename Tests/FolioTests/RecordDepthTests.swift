import Testing
import Foundation
import Folio

/// A record that is a chain of `depth - 1` nested objects below its own (`{"id":1,"next":{"next":{}}}`).
enum Outline {
    final class Item: Codable, Sendable {
        let next: Item?
        init(depth: Int) { next = depth > 1 ? Item(depth: depth - 1) : nil }
        var depth: Int { 1 + (next?.depth ?? 0) }
    }

    struct Entry: Codable, Identifiable, Sendable {
        var id: Int
        var root: Item?
        /// The entry's JSON nests `depth` arrays and objects: its own object and `depth - 1` items.
        init(id: Int, depth: Int) {
            self.id = id
            root = depth > 1 ? Item(depth: depth - 1) : nil
        }
    }

    struct Format: DatastoreFormat {
        enum Version: String, CaseIterable { case current }
        static let key = "outline"
        static let currentVersion = Version.current
        typealias Instance = Entry
    }

    /// Reads as deep as it writes, beyond the default.
    struct DeepFormat: DatastoreFormat {
        enum Version: String, CaseIterable { case current }
        static let key = "deep-outline"
        static let currentVersion = Version.current
        typealias Instance = Entry
        static var recordEncoder: FolioJSONEncoder {
            var encoder = FolioJSONEncoder()
            encoder.maximumDepth = 300
            return encoder
        }
        static var recordDecoder: FolioJSONDecoder {
            var decoder = FolioJSONDecoder()
            decoder.maximumDepth = 300
            return decoder
        }
    }
}

/// A store never accepts a record it could not read back: the format's encoder refuses
/// what its decoder's nesting limit would (Docs/JSON.md, "Nesting and the stack").
@Suite struct RecordDepthTests {
    @Test func aRecordNestedPastTheLimitIsRefusedWhenPersisted() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let outline = persistence.datastore(for: Outline.Format.self)
        let limit = FolioJSONDecoder.defaultMaximumDepth

        try await outline.persist(Outline.Entry(id: 1, depth: limit))
        #expect(try await outline.load(1)?.root?.depth == limit - 1)

        let refusal = await #expect(throws: FolioError.self) {
            try await outline.persist(Outline.Entry(id: 2, depth: limit + 1))
        }
        if case .encodingFailed(let datastore, let identifier, let reason)? = refusal {
            #expect(
                datastore == "outline" && identifier == "2" && reason.contains("maximumDepth (\(limit))"), "\(reason)")
        } else {
            Issue.record("\(String(describing: refusal))")
        }
        #expect(try await outline.count() == 1)

        // The key-value store likewise.
        try persistence.values.set(Outline.Entry(id: 4, depth: limit), for: .outlineEntry)
        #expect(persistence.values[.outlineEntry]?.root?.depth == limit - 1)
        #expect(throws: FolioError.self) {
            try persistence.values.set(Outline.Entry(id: 5, depth: limit + 1), for: .outlineEntry)
        }
        #expect(persistence.values[.outlineEntry]?.id == 4)

        // A format that raises both limits stores and reads deeper records.
        let deep = persistence.datastore(for: Outline.DeepFormat.self)
        try await deep.persist(Outline.Entry(id: 3, depth: 300))
        #expect(try await deep.load(3)?.root?.depth == 299)
        expectSound(persistence)
    }
}

extension ValueKeys {
    static let outlineEntry = ValueKey<Outline.Entry?>("test/outlineEntry")
}
