import Testing
import Foundation
import Synchronization
import Folio

/// A plan that reads an index drops the entries whose identifier lies outside an exact
/// identifier condition of the predicate's top-level `&&`, before reading their records.
/// Seen through records that fail to decode: a query reads them only if it does not drop
/// them first.
@Suite struct IdentifierFilterTests {
    /// Decoding a poisoned item throws once `poisoned` is raised (writes decode what they
    /// store, so the flag stays down while the datastore is filled).
    static let poisoned = Atomic<Bool>(false)

    struct Item: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var priority: Int
        var poison: Bool

        init(id: Int, priority: Int, poison: Bool) {
            (self.id, self.priority, self.poison) = (id, priority, poison)
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            priority = try container.decode(Int.self, forKey: .priority)
            poison = try container.decode(Bool.self, forKey: .poison)
            if poison && IdentifierFilterTests.poisoned.load(ordering: .relaxed) {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "poisoned record \(id)"))
            }
        }
    }

    struct Items: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "items"
        static let currentVersion = Version.one
        typealias Instance = Item
        let priority = Index(\Item.priority)
    }

    @Test func entriesOutsideAnIdentifierConditionAreNotRead() async throws {
        let persistence = Persistence.inMemory(options: PersistenceOptions(recordCache: nil))
        defer { persistence.close() }
        let items = persistence.datastore(for: Items.self)
        // Every item above 100 is poisoned; priorities repeat every 10 identifiers.
        let all = (1...200).map { Item(id: $0, priority: $0 % 10, poison: $0 > 100) }
        try await persistence.perform { for item in all { try await items.persist(item) } }
        Self.poisoned.store(true, ordering: .relaxed)
        defer { Self.poisoned.store(false, ordering: .relaxed) }

        let cases: [(Predicate<Item>, (Item) -> Bool)] = [
            (
                #Predicate { (3..<5).contains($0.priority) && $0.id <= 100 },
                { (3..<5).contains($0.priority) && $0.id <= 100 }
            ),
            (#Predicate { $0.id < 101 && $0.priority == 7 }, { $0.id < 101 && $0.priority == 7 }),
            (
                #Predicate { $0.priority == 4 && (20...60).contains($0.id) && $0.id != 40 },
                { $0.priority == 4 && (20...60).contains($0.id) && $0.id != 40 }
            ),
        ]
        for (predicate, matches) in cases {
            let plan = try await items.explain(where: predicate)
            guard case .index = plan.access else {
                Issue.record("expected an index plan: \(plan)")
                continue
            }
            let expected = all.filter(matches)
            #expect(try await items.fetch(where: predicate).collect() == expected, "\(plan)")
            #expect(try await items.count(where: predicate) == expected.count)
            #expect(try await items.first(where: predicate) == expected.first)
        }
        // Without an identifier condition the poisoned records are read, and fail.
        await #expect(throws: FolioError.self) {
            _ = try await items.fetch(where: #Predicate { $0.priority == 7 }).collect()
        }
        // An identifier condition inside `||` proves nothing about a record: not a filter.
        await #expect(throws: FolioError.self) {
            _ = try await items.fetch(where: #Predicate { $0.priority == 7 && ($0.id <= 100 || $0.id == 150) })
                .collect()
        }
    }
}
