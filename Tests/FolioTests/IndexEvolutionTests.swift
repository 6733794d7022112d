import Testing
import Foundation
@_spi(Engine) @testable import Folio
import FolioStorage

/// The same datastore declared with different indexes by successive releases.
enum Catalogue {
    struct Item: Codable, Identifiable, Sendable, Equatable {
        var id: Int; var name: String; var tags: [String]; var code: String
    }

    struct First: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "items"
        static let currentVersion = Version.one
        typealias Instance = Item
        let name = Index(\Item.name)
        let code = Index(\Item.code)
    }

    /// Adds `tags`, changes `code` to unique, removes `name`.
    struct Second: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "items"
        static let currentVersion = Version.one
        typealias Instance = Item
        let code = OneToOneIndex(\Item.code)
        let tags = ManyToManyIndex(\Item.tags)
    }
}

@Suite struct IndexEvolutionTests {
    @Test func indexesAddedChangedAndRemovedBetweenOpenings() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/items-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let options = PersistenceOptions(autoCompaction: nil, log: { _ in })
        do {
            let persistence = try Persistence(at: path, options: options)
            let items = persistence.datastore(for: Catalogue.First.self)
            try await persistence.perform {
                for id in 0..<2_500 {
                    try await items.persist(
                        Catalogue.Item(id: id, name: "n\(id % 10)", tags: ["t\(id % 3)", "t\(id % 5)"], code: "c\(id)"))
                }
            }
            #expect(try await items.count("n3", from: \.name) == 250)
            persistence.close()
        }
        // A helper process (read-only) with the new declaration before the writer has
        // rebuilt: the changed and new indexes are refused, never answered wrongly.
        do {
            let reader = try Persistence(readingFrom: path, options: options)
            let items = reader.datastore(for: Catalogue.Second.self)
            await #expect(throws: FolioError.indexNotBuilt(datastore: "items", index: "tags")) {
                _ = try await items.load("t1", from: \.tags).collect()
            }
            await #expect(throws: FolioError.indexNotBuilt(datastore: "items", index: "code")) {
                _ = try await items.load("c5", from: \.code)
            }
            #expect(try await items.load(5)?.code == "c5", "records are readable")
            reader.close()
        }
        let persistence = try Persistence(at: path, options: options)
        defer { persistence.close() }
        let items = persistence.datastore(for: Catalogue.Second.self)
        // The first read builds the new index and rebuilds the changed one (2,500 records:
        // three batches), and drops the removed one.
        #expect(try await items.load("c42", from: \.code)?.id == 42)
        #expect(try await items.count("t0", from: \.tags) == (0..<2_500).filter { $0 % 3 == 0 || $0 % 5 == 0 }.count)
        let trees = try persistence.store.read().trees().map(\.name)
        #expect(!trees.contains("index/items/name"))
        #expect(trees.contains("index/items/tags"))
        // The catalog records the new declaration, every index built.
        let catalog = try CatalogEntry.decode(
            try persistence.store.read().get(Array("items".utf8), in: DatastoreLayout.catalogTree)!, datastore: "items")
        #expect(Set(catalog.indexes.keys) == ["code", "tags"])
        #expect(catalog.indexes.values.allSatisfy { $0.built })
        #expect(catalog.indexes["code"]?.kind == .oneToOne)
        // Writes now keep every index; unique is enforced.
        await #expect(throws: FolioError.self) {
            try await items.persist(Catalogue.Item(id: 9_999, name: "x", tags: [], code: "c1"))
        }
        expectSound(persistence)
    }

    /// Reopening a store whose catalog already matches the declaration prepares the datastore
    /// without a transaction: reads commit nothing (no page appended, no fsync), writes
    /// still keep every index, and a changed declaration is still brought up to date.
    @Test func reopeningWithTheSameDeclarationCommitsNothing() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/items-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let options = PersistenceOptions(autoCompaction: nil, log: { _ in })
        do {
            let persistence = try Persistence(at: path, options: options)
            let items = persistence.datastore(for: Catalogue.First.self)
            try await items.persist(Catalogue.Item(id: 1, name: "n1", tags: [], code: "c1"))
            persistence.close()
        }
        do {
            let persistence = try Persistence(at: path, options: options)
            let generation = persistence.store.generation
            let items = persistence.datastore(for: Catalogue.First.self)
            #expect(try await items.load(1)?.code == "c1")
            #expect(try await items.load("n1", from: \.name).collect().map(\.id) == [1])
            #expect(try await items.count() == 1)
            #expect(persistence.store.generation == generation, "reads on a store whose catalog matches commit nothing")
            try await items.persist(Catalogue.Item(id: 2, name: "n1", tags: [], code: "c2"))
            #expect(persistence.store.generation == generation + 1, "one commit for one write")
            #expect(try await items.load("n1", from: \.name).collect().map(\.id) == [1, 2])
            expectSound(persistence)
            persistence.close()
        }
        // A changed declaration on the next opening is still prepared (in a transaction).
        let persistence = try Persistence(at: path, options: options)
        defer { persistence.close() }
        let generation = persistence.store.generation
        let items = persistence.datastore(for: Catalogue.Second.self)
        #expect(try await items.load("c2", from: \.code)?.id == 2)
        #expect(persistence.store.generation > generation, "the new declaration's indexes were built and recorded")
        expectSound(persistence)
    }

    /// Declaring one key twice with different formats in one persistence is an error.
    @Test func conflictingDeclarationsAreRefused() async throws {
        let persistence = Persistence.inMemory()
        let first = persistence.datastore(for: Catalogue.First.self)
        let second = persistence.datastore(for: Catalogue.Second.self)
        _ = try await first.count()
        await #expect { _ = try await second.count() } throws: { error in
            if case FolioError.incompatibleDeclaration(let datastore, _) = error { return datastore == "items" }
            return false
        }
    }
}
