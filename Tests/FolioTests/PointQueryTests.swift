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
        #expect(
            schema.identifierEqualityKey(#Predicate<Item> { $0.id == 7 && $0.group == 1 }) == nil,
            "more than the equality")
        #expect(schema.identifierEqualityKey(#Predicate<Item> { $0.id > 7 }) == nil)

        for id in 0..<10 { try await items.persist(Item(id: id, group: id % 3, version: 0)) }
        for id in -1..<11 {
            #expect(try await items.first(where: #Predicate { $0.id == id }) == items.load(id))
            #expect(
                try await items.fetch(where: #Predicate { $0.id == id }).collect() == items.load(id).map { [$0] } ?? [])
        }
        #expect(try await items.explain(where: #Predicate { $0.id == 3 }).access == .identifierRange("id == 3"))
    }

    /// A stored `id` beside a custom identifier that is a computed property: `$0.id == 5` is
    /// a filter on `id`, not a read of identifier 5.
    struct Slot: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var slot: Int
        var slotKey: Int { slot }
    }

    struct SlotFormat: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "slots"
        static let currentVersion = Version.one
        typealias Instance = Slot
        static var identifier: KeyPath<Slot, Int> & Sendable { \Slot.slotKey }
    }

    /// Identifiers whose `==` is not key equality (`-0.0 == 0.0`): the planner's check of
    /// the predicate must run, so no fast path.
    struct Reading: Codable, Identifiable, Sendable, Equatable {
        var id: Double
        var value: Int
    }

    struct ReadingFormat: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "readings"
        static let currentVersion = Version.one
        typealias Instance = Reading
    }

    @Test func aComputedCustomIdentifierIsNotTheStoredID() async throws {
        let persistence = Persistence.inMemory()
        let slots = persistence.datastore(for: SlotFormat.self)
        try await slots.persist(Slot(id: 5, slot: 1))
        try await slots.persist(Slot(id: 1, slot: 5))
        #expect(slots.schema.identifierEqualityKey(#Predicate<Slot> { $0.id == 5 }) == nil)
        #expect(try await slots.first(where: #Predicate { $0.id == 5 }) == Slot(id: 5, slot: 1))
        #expect(try await slots.fetch(where: #Predicate { $0.id == 5 }).collect() == [Slot(id: 5, slot: 1)])
        #expect(try await slots.load(5) == Slot(id: 1, slot: 5), "load reads by the declared identifier")
    }

    @Test func aFloatingPointIdentifierTakesThePlannersPath() async throws {
        let persistence = Persistence.inMemory()
        let readings = persistence.datastore(for: ReadingFormat.self)
        try await readings.persist(Reading(id: 1.5, value: 1))
        #expect(readings.schema.identifierEqualityKey(#Predicate<Reading> { $0.id == 1.5 }) == nil)
        #expect(try await readings.first(where: #Predicate { $0.id == 1.5 })?.value == 1)
        let nan = Double.nan
        #expect(try await readings.first(where: #Predicate { $0.id == nan }) == nil)
    }

    @Test func aClosedPersistenceServesNothingFromItsCache() async throws {
        let persistence = Persistence.inMemory()
        let items = persistence.datastore(for: RecordCacheModelTests.ItemFormat.self)
        try await items.persist(Item(id: 1, group: 0, version: 0))
        #expect(try await items.load(1) != nil)
        #expect(try await items.load(1) != nil)  // now cached
        persistence.close()
        await #expect(throws: FolioError.self) { try await items.load(1) }
        await #expect(throws: FolioError.self) { try await items.first(where: #Predicate { $0.id == 1 }) }
    }
}
