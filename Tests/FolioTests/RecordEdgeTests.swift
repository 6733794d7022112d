import Testing
import Foundation
@_spi(Engine) @testable import Folio
import FolioStorage

/// Records that no longer decode or whose migration throws, index changes (a new index, a new
/// unique one, a computed key path whose body changes), unique indexes over optionals, migrating
/// an up-to-date store, and the limits of the stored record format.
enum Priced {
    /// Release 1: the price is optional.
    struct OldItem: Codable, Identifiable, Sendable, Equatable { var id: Int; var name: String; var price: Int? }
    /// Release 2: the price is required (a record stored with no price no longer decodes).
    struct Item: Codable, Identifiable, Sendable, Equatable { var id: Int; var name: String; var price: Int }

    struct First: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "priced"
        static let currentVersion = Version.one
        typealias Instance = OldItem
        let name = Index(\OldItem.name)
    }

    /// Same key; the instance type is renamed (every fingerprint changes) and `price` gets an index.
    struct Second: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "priced"
        static let currentVersion = Version.one
        typealias Instance = Item
        let name = Index(\Item.name)
        let price = Index(\Item.price)
    }

    /// Unique index over an optional value.
    struct Member: Codable, Identifiable, Sendable, Equatable { var id: Int; var email: String? }
    struct Members: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "members"
        static let currentVersion = Version.one
        typealias Instance = Member
        let email = OneToOneIndex(\Member.email)
    }

    /// Many values in one index.
    struct Bag: Codable, Identifiable, Sendable, Equatable { var id: Int; var numbers: [Int] }
    struct Bags: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "bags"
        static let currentVersion = Version.one
        typealias Instance = Bag
        let numbers = ManyToManyIndex(\Bag.numbers)
    }

    /// A version tag longer than a record header can hold.
    struct LongTag: DatastoreFormat {
        enum Version: String, CaseIterable {
            case long =
                "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv"
        }
        static let key = "long"
        static let currentVersion = Version.long
        typealias Instance = Bag
    }
}

@Suite struct RecordEdgeTests {
    static let options = PersistenceOptions(autoCompaction: nil, log: { _ in })

    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.path + "/records-\(UUID().uuidString)"
    }

    /// One record that no longer decodes, plus an index change, must not block the
    /// datastore: reads, deleteWithoutDecoding and persist work, and the index reports the record it could
    /// not index.
    @Test func undecodableRecordDoesNotBlockAnIndexBuild() async throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let persistence = try Persistence(at: path, options: Self.options)
            let items = persistence.datastore(for: Priced.First.self)
            try await items.persist(Priced.OldItem(id: 1, name: "a", price: 10))
            try await items.persist(Priced.OldItem(id: 2, name: "b", price: 20))
            try await items.persist(Priced.OldItem(id: 3, name: "c", price: nil))
            persistence.close()
        }
        let persistence = try Persistence(at: path, options: Self.options)
        defer { persistence.close() }
        let items = persistence.datastore(for: Priced.Second.self)
        #expect(try await items.load(1) == Priced.Item(id: 1, name: "a", price: 10))
        #expect(try await items.load(20, from: \.price).collect().map(\.id) == [2])
        #expect(try await items.load("a", from: \.name).collect().map(\.id) == [1])
        // The index says how it stands: built, without record 3.
        let report = try await items.indexReport()
        #expect(report.map(\.index) == ["name", "price"])
        #expect(report.allSatisfy { $0.isBuilt })
        let price = report.first { $0.index == "price" }
        #expect(price?.unindexed == [3])
        #expect(price?.unindexedCount == 1)
        await #expect { _ = try await items.load(3) } throws: { error in
            if case FolioError.decodingFailed(_, "3", _, _) = error { return true }
            return false
        }
        expectSound(persistence)
        // Replacing the bad record indexes it; the report no longer lists it.
        #expect(try await items.persist(Priced.Item(id: 3, name: "c", price: 30)) == nil)
        #expect(try await items.load(30, from: \.price).collect().map(\.id) == [3])
        #expect(try await items.indexReport().allSatisfy { $0.unindexed.isEmpty && $0.unindexedCount == 0 })
        // Purge (the documented way out) works too.
        #expect(try await items.deleteWithoutDecoding(3))
        #expect(try await items.count() == 2)
        expectSound(persistence)
    }

    /// Purge of the undecodable record works on the first call after the change.
    @Test func deleteWithoutDecodingWorksRightAfterAnIndexChange() async throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let persistence = try Persistence(at: path, options: Self.options)
            let items = persistence.datastore(for: Priced.First.self)
            try await items.persist(Priced.OldItem(id: 1, name: "a", price: 10))
            try await items.persist(Priced.OldItem(id: 3, name: "c", price: nil))
            persistence.close()
        }
        let persistence = try Persistence(at: path, options: Self.options)
        defer { persistence.close() }
        let items = persistence.datastore(for: Priced.Second.self)
        #expect(try await items.deleteWithoutDecoding(3))
        #expect(try await items.load(...).collect() == [Priced.Item(id: 1, name: "a", price: 10)])
        try await items.migrateAndReindex()
        expectSound(persistence)
    }

    /// Persist replaces a record that no longer decodes, and returns nil for it.
    @Test func persistReplacesAnUndecodableRecord() async throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let persistence = try Persistence(at: path, options: Self.options)
            let items = persistence.datastore(for: Priced.First.self)
            try await items.persist(Priced.OldItem(id: 3, name: "c", price: nil))
            persistence.close()
        }
        // Same indexes (only `name`, under the same instance type), so no build is involved.
        let persistence = try Persistence(at: path, options: Self.options)
        defer { persistence.close() }
        let items = persistence.datastore(for: Priced.First.self)
        let id = KeyEncoding.encode(4)
        let garbage = try StoredRecord.encode(
            version: "1", indexKeys: [("name", [KeyEncoding.encode("d")])], payload: Array("{not json".utf8))
        try persistence.store.write { txn in _ = try txn.put(garbage, for: id, in: "records/priced") }
        let replaced = try await items.persist(Priced.OldItem(id: 4, name: "e", price: 1))
        #expect(replaced == nil)
        #expect(try await items.load(4) == Priced.OldItem(id: 4, name: "e", price: 1))
        #expect(try await items.count("d", from: \.name) == 0)
        #expect(try await items.load("e", from: \.name).collect().map(\.id) == [4])
        expectSound(persistence)
    }

    /// `migrateAndReindex()` on an up-to-date store commits nothing.
    @Test func migrateAndReindexOnAnUpToDateStoreCommitsNothing() async throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let persistence = try Persistence(at: path, options: Self.options)
            let items = persistence.datastore(for: Priced.Second.self)
            try await items.persist(Priced.Item(id: 1, name: "a", price: 1))
            try await items.migrateAndReindex()
            persistence.close()
        }
        let persistence = try Persistence(at: path, options: Self.options)
        defer { persistence.close() }
        let items = persistence.datastore(for: Priced.Second.self)
        let generation = persistence.store.generation
        var progress: [MigrationProgress] = []
        try await items.migrateAndReindex { progress.append($0) }
        try await items.migrateAndReindex()
        #expect(persistence.store.generation == generation, "migrateAndReindex on an up-to-date store commits nothing")
        #expect(progress == [.evaluating, .complete(total: 0)])
    }

    /// More values than a record header can count is a typed error; nothing is written.
    @Test func tooManyIndexValuesIsATypedError() async throws {
        let persistence = Persistence.inMemory()
        let bags = persistence.datastore(for: Priced.Bags.self)
        try await bags.persist(Priced.Bag(id: 1, numbers: [1, 2]))
        await #expect { try await bags.persist(Priced.Bag(id: 1, numbers: Array(0..<65_536))) } throws: { error in
            if case FolioError.encodingFailed(datastore: "bags", identifier: "1", _) = error { return true }
            return false
        }
        #expect(try await bags.load(1) == Priced.Bag(id: 1, numbers: [1, 2]), "nothing was written")
        #expect(try await bags.count(5, from: \.numbers) == 0)
        // The largest count that fits still works, and deleting it leaves no entries.
        try await bags.persist(Priced.Bag(id: 2, numbers: Array(0..<65_535)))
        #expect(try await bags.count(65_534, from: \.numbers) == 1)
        try await bags.delete(2)
        #expect(try await bags.count(0..., from: \.numbers) == 2)
        expectSound(persistence)
    }

    /// A version tag longer than 255 bytes is refused with a clear error, not a trap.
    @Test func longVersionTagIsATypedError() async throws {
        let persistence = Persistence.inMemory()
        let long = persistence.datastore(for: Priced.LongTag.self)
        await #expect { try await long.persist(Priced.Bag(id: 1, numbers: [])) } throws: { error in
            if case FolioError.incompatibleDeclaration(datastore: "long", _) = error { return true }
            return false
        }
    }

    /// The record codec refuses what it cannot represent, and reads what it writes.
    @Test func storedRecordCodecBounds() throws {
        let keys: [(name: String, keys: [[UInt8]])] = [("a", [[1, 2], [3]]), ("b", [[]])]
        let bytes = try StoredRecord.encode(version: "7", indexKeys: keys, payload: Array("{}".utf8))
        #expect(
            StoredRecord.decode(bytes)
                == StoredRecord(version: "7", indexKeys: ["a": [[1, 2], [3]], "b": [[]]], payload: Array("{}".utf8)))
        #expect(StoredRecord.header(bytes[...])?.version == "7")
        // Read in place inside a larger buffer (a page): positions are the buffer's.
        let page = [9, 9, 9] + bytes + [8]
        let inPage = StoredRecord.header(page[3..<(3 + bytes.count)])
        #expect(inPage?.version == "7" && inPage?.payloadStart == 3 + StoredRecord.header(bytes[...])!.payloadStart)
        #expect(throws: StoredRecord.EncodingProblem.self) {
            try StoredRecord.encode(version: String(repeating: "v", count: 256), indexKeys: [], payload: [])
        }
        #expect(throws: StoredRecord.EncodingProblem.self) {
            try StoredRecord.encode(
                version: "1", indexKeys: [("a", [[UInt8](repeating: 0, count: 65_536)])], payload: [])
        }
        #expect(throws: StoredRecord.EncodingProblem.self) {
            try StoredRecord.encode(version: "1", indexKeys: [("a", Array(repeating: [1], count: 65_536))], payload: [])
        }
        // Truncated input is refused, never read past.
        for end in 0..<bytes.count - 2 {
            #expect(StoredRecord.header(bytes[..<end]) == nil || end >= bytes.count - 2)
        }
    }

    /// A unique index over an optional constrains values, not nil (SQL's UNIQUE):
    /// several records may have nil; `count(nil)` counts them all.
    @Test func uniqueIndexAllowsSeveralNils() async throws {
        let persistence = Persistence.inMemory()
        let members = persistence.datastore(for: Priced.Members.self)
        try await members.persist(Priced.Member(id: 1, email: nil))
        try await members.persist(Priced.Member(id: 2, email: nil))
        try await members.persist(Priced.Member(id: 3, email: "c@x"))
        await #expect(throws: FolioError.self) { try await members.persist(Priced.Member(id: 4, email: "c@x")) }
        #expect(try await members.count(nil, from: \.email) == 2)
        #expect(try await members.load("c@x", from: \.email)?.id == 3)
        #expect(try await members.load(nil, from: \.email) == nil, "nil maps to no single instance")
        #expect(try await members.load(..., from: \.email).collect().map(\.id) == [1, 2, 3])
        // Clearing and setting nil values keeps the index exact.
        try await members.persist(Priced.Member(id: 1, email: "a@x"))
        #expect(try await members.count(nil, from: \.email) == 1)
        try await members.delete(2)
        #expect(try await members.count(nil, from: \.email) == 0)
        expectSound(persistence)
    }
}

/// An index over a computed key path whose body changes.
enum Cards {
    struct Card: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var name: String
        var uppercased: String { name.uppercased() }
        var lowercased: String { name.lowercased() }
    }

    struct First: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "cards"
        static let currentVersion = Version.one
        typealias Instance = Card
        let name = Index(\Card.uppercased)
    }

    /// The same property, another computed key path, and a new version.
    struct Second: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "cards"
        static let currentVersion = Version.one
        typealias Instance = Card
        let name = Index(\Card.lowercased, version: 2)
    }
}

extension RecordEdgeTests {
    @Test func computedKeyPathWithANewVersionIsRebuilt() async throws {
        // Why a version is needed: every computed key path prints alike across launches.
        #expect(
            Index(\Cards.Card.uppercased).definition.fingerprint == Index(\Cards.Card.lowercased).definition.fingerprint
        )
        #expect(
            Index(\Cards.Card.uppercased).definition.fingerprint
                != Index(\Cards.Card.lowercased, version: 2).definition.fingerprint)
        #expect(
            Index(\Cards.Card.name).definition.fingerprint == "oneToMany;reference;Swift.String;\\Card.name",
            "version 1 keeps the fingerprint of earlier releases")
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let persistence = try Persistence(at: path, options: Self.options)
            let cards = persistence.datastore(for: Cards.First.self)
            try await cards.persist(Cards.Card(id: 1, name: "Ann"))
            #expect(try await cards.load("ANN", from: \.name).collect().map(\.id) == [1])
            persistence.close()
        }
        let persistence = try Persistence(at: path, options: Self.options)
        defer { persistence.close() }
        let cards = persistence.datastore(for: Cards.Second.self)
        #expect(try await cards.load("ann", from: \.name).collect().map(\.id) == [1])
        #expect(try await cards.count("ANN", from: \.name) == 0)
        expectSound(persistence)
    }

    /// A store written before nil became unconstrained (one nil entry keyed by nil
    /// alone, the old fingerprint) is rebuilt on first use and then accepts several nils.
    @Test func uniqueIndexOverAnOptionalFromAnEarlierReleaseIsRebuilt() async throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let persistence = try Persistence(at: path, options: Self.options)
            let members = persistence.datastore(for: Priced.Members.self)
            try await members.persist(Priced.Member(id: 1, email: "a@x"))
            try await members.persist(Priced.Member(id: 2, email: nil))
            persistence.close()
        }
        // Rewrite the nil record, its entry and the catalog as the earlier release stored them.
        do {
            let persistence = try Persistence(at: path, options: Self.options)
            let catalogKey = Array("members".utf8)
            var entry = try CatalogEntry.decode(
                try persistence.store.read().get(catalogKey, in: DatastoreLayout.catalogTree)!, datastore: "members")
            #expect(entry.indexes["email"]?.fingerprint.hasSuffix(";nil-distinct") == true)
            entry.indexes["email"]?.fingerprint = "oneToOne;reference;Swift.Optional<Swift.String>;\\Member.email"
            let id = KeyEncoding.encode(2)
            let record = try StoredRecord.encode(
                version: "1", indexKeys: [("email", [[0x00]])], payload: Array(#"{"id":2}"#.utf8))
            try persistence.store.write { txn in
                _ = try txn.put(entry.encoded(), for: catalogKey, in: DatastoreLayout.catalogTree)
                _ = try txn.remove([0x00] + id, from: "index/members/email")
                _ = try txn.put(IndexEntry.value(identifier: id, record: nil), for: [0x00], in: "index/members/email")
                _ = try txn.put(record, for: id, in: "records/members")
            }
            #expect(persistence.verify().isClean)
            persistence.close()
        }
        let persistence = try Persistence(at: path, options: Self.options)
        defer { persistence.close() }
        let members = persistence.datastore(for: Priced.Members.self)
        #expect(try await members.count(nil, from: \.email) == 1)
        try await members.persist(Priced.Member(id: 3, email: nil))
        #expect(try await members.count(nil, from: \.email) == 2)
        #expect(try await members.load("a@x", from: \.email)?.id == 1)
        expectSound(persistence)
    }
}

/// A migration that throws for one record.
enum Migrated {
    struct Item: Codable, Identifiable, Sendable, Equatable { var id: Int; var name: String }
    struct Refused: Error {}

    struct First: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "migrated"
        static let currentVersion = Version.one
        typealias Instance = Item
    }

    /// Version 2 converts version-1 records, except record 3, and adds an index.
    struct Second: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1, two = 2 }
        static let key = "migrated"
        static let currentVersion = Version.two
        typealias Instance = Item
        static func decode(
            _ version: Version, from data: ArraySlice<UInt8>, using decoder: FolioJSONDecoder
        ) throws -> Item {
            let item = try decoder.decode(Item.self, from: data)
            if version == .one && item.id == 3 { throw Refused() }
            return item
        }
        let name = Index(\Item.name)
    }
}

extension RecordEdgeTests {
    @Test func migrationThatThrowsForOneRecordDoesNotBlockMigrateAndReindex() async throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let persistence = try Persistence(at: path, options: Self.options)
            let items = persistence.datastore(for: Migrated.First.self)
            for id in 1...4 { try await items.persist(Migrated.Item(id: id, name: "n\(id)")) }
            persistence.close()
        }
        let persistence = try Persistence(at: path, options: Self.options)
        defer { persistence.close() }
        let items = persistence.datastore(for: Migrated.Second.self)
        var progress: [MigrationProgress] = []
        try await items.migrateAndReindex { progress.append($0) }
        #expect(progress.last == .complete(total: 8), "four records indexed, four to convert (one left as stored)")
        #expect(try await items.load(1)?.name == "n1")
        #expect(try await items.load("n4", from: \.name).collect().map(\.id) == [4])
        #expect(
            try await items.indexReport() == [
                IndexReport(index: "name", isBuilt: true, unindexed: [3], unindexedCount: 1)
            ])
        // Converted records are stored in version 2; record 3 stays as it was.
        let view = try persistence.store.read()
        #expect(try StoredRecord.decode(view.get(KeyEncoding.encode(1), in: "records/migrated")!)?.version == "2")
        #expect(try StoredRecord.decode(view.get(KeyEncoding.encode(3), in: "records/migrated")!)?.version == "1")
        // A second call has nothing left it can do, and commits nothing.
        let generation = persistence.store.generation
        try await items.migrateAndReindex()
        #expect(persistence.store.generation == generation)
        #expect(try await items.deleteWithoutDecoding(3))
        expectSound(persistence)
    }
}

extension RecordEdgeTests {
    /// An index that becomes unique over records that share a value is built without
    /// the later duplicates (reported), instead of failing every operation of the datastore.
    @Test func duplicatesDoNotBlockANewUniqueIndex() async throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let persistence = try Persistence(at: path, options: Self.options)
            let items = persistence.datastore(for: Catalogue.First.self)
            try await items.persist(Catalogue.Item(id: 1, name: "a", tags: [], code: "same"))
            try await items.persist(Catalogue.Item(id: 2, name: "b", tags: [], code: "same"))
            try await items.persist(Catalogue.Item(id: 3, name: "c", tags: [], code: "other"))
            persistence.close()
        }
        let persistence = try Persistence(at: path, options: Self.options)
        defer { persistence.close() }
        let items = persistence.datastore(for: Catalogue.Second.self)
        #expect(try await items.load(2)?.name == "b")
        #expect(try await items.load("same", from: \.code)?.id == 1)
        let report = try await items.indexReport()
        #expect(report.first { $0.index == "code" }?.unindexed == [2])
        // Giving record 2 its own value indexes it.
        try await items.persist(Catalogue.Item(id: 2, name: "b", tags: [], code: "own"))
        #expect(try await items.load("own", from: \.code)?.id == 2)
        #expect(try await items.indexReport().allSatisfy { $0.unindexedCount == 0 })
        expectSound(persistence)
    }
}
