import Testing
import Foundation
@testable import Folio

/// The point query's fast path (DatastoreSchema+PointQuery.swift): exactly
/// `$0.<identifier> == constant` is recognised by its expression's type and read with one
/// lookup; anything else goes to the planner. Both must give the same answers.
@Suite struct PointQueryTests {
    typealias Item = RecordCacheModelTests.Item

    @Test func onlyAnIdentifierEqualityTakesTheFastPath() async throws {
        let persistence = Persistence.inMemory()
        let items = persistence.datastore(for: RecordCacheModelTests.ItemFormat.self)
        let schema = items.schema
        let seven = 7
        #expect(schema.identifierEqualityKey(#Predicate<Item> { $0.id == seven }) == seven.keyBytes)
        #expect(schema.identifierEqualityKey(#Predicate<Item> { $0.id == 8 }) == 8.keyBytes)
        #expect(schema.identifierEqualityKey(#Predicate<Item> { $0.group == 7 }) == nil, "not the identifier")
        #expect(schema.identifierEqualityKey(#Predicate<Item> { $0.id == 7 && $0.group == 1 }) == nil, "more than the equality")
        #expect(schema.identifierEqualityKey(#Predicate<Item> { $0.id > 7 }) == nil)

        for id in 0..<10 { try await items.persist(Item(id: id, group: id % 3, version: 0)) }
        for id in -1..<11 {
            #expect(try await items.first(where: #Predicate { $0.id == id }) == items.load(id))
            #expect(try await items.fetch(where: #Predicate { $0.id == id }).collect() == items.load(id).map { [$0] } ?? [])
        }
        #expect(try await items.explain(where: #Predicate { $0.id == 3 }).access == .identifierRange("id == 3"))
    }
}
