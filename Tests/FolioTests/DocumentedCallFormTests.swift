import Testing
import Foundation
import Folio

/// A datastore with integer identifiers (so identifier ranges are also sequences of
/// identifiers, the case where overloads can collide) and one index of each kind.
enum Shelf {
    struct Item: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var title: String
        var tags: [String]
        var code: String
        var year: Int
    }

    struct Format: DatastoreFormat {
        enum Version: String, CaseIterable { case current }
        static let key = "items"
        static let currentVersion = Version.current
        typealias Instance = Item
        let title = Index(\Item.title)
        let tags = ManyToManyIndex(\Item.tags)
        let code = OneToOneIndex(\Item.code)
        let year = Index(\Item.year)
    }

    /// Items 0..<count: titles "t000"..., tag "even" or "odd", code "c0"..., year 1900 + id % 100.
    static func item(_ id: Int) -> Item {
        Item(
            id: id, title: "t" + String(repeating: "0", count: 3 - String(id).count) + String(id),
            tags: [id.isMultiple(of: 2) ? "even" : "odd"], code: "c\(id)", year: 1900 + id % 100)
    }

    static func filled(_ count: Int) async throws -> (Persistence<ReadWrite>, Datastore<Format, ReadWrite>) {
        let persistence = Persistence.inMemory()
        let items = persistence.datastore(for: Format.self)
        try await persistence.perform {
            for id in 0..<count { try await items.persist(item(id)) }
        }
        return (persistence, items)
    }

    static func identifiers(_ items: Datastore<Format, ReadWrite>) async throws -> [Int] {
        try await items.load(...).collect().map(\.id)
    }
}

/// Every public call form that README.md, Docs/Guide.md, the DocC articles and the doc
/// comments show compiles as written and does what they say. A new overload that makes a
/// documented spelling ambiguous (or quietly changes its meaning) fails here first.
@Suite struct DocumentedCallFormTests {
    /// `delete` with one identifier, every kind of identifier range, `...`, a list of
    /// identifiers (any sequence), an index value, an index range and a predicate.
    @Test func everyDeleteSpelling() async throws {
        let (persistence, items) = try await Shelf.filled(300)
        defer { persistence.close() }

        #expect(try await items.delete(5) == Shelf.item(5))
        #expect(try await items.deleteIfPresent(5) == nil)
        #expect(try await items.deleteWithoutDecoding(6))
        // Ranges of identifiers: each is a range, not a list to enumerate (`250...` has no end).
        #expect(try await items.delete(1...4) == 4)
        #expect(try await items.delete(10..<20) == 10)
        #expect(try await items.delete(250...) == 50)
        #expect(try await items.delete(..<1) == 1)
        #expect(try await items.delete(...8) == 2, "7 and 8 are left below 9")
        #expect(try await Shelf.identifiers(items).prefix(3) == [9, 20, 21])
        #expect(try await items.count(20..<250) == 230)
        // Lists of identifiers: those that exist are deleted.
        #expect(try await items.delete([20, 21, 999]) == 2)
        #expect(try await items.delete(Set([22, 23])) == 2)
        #expect(try await items.delete(stride(from: 24, to: 30, by: 2)) == 3)
        #expect(try await items.delete(Array(30...32)) == 3)
        let list: [Int] = [33, 34]
        #expect(try await items.delete(list) == 2)
        #expect(try await Shelf.identifiers(items).prefix(5) == [9, 25, 27, 29, 35])
        // Index values and ranges, and predicates.
        var left = Set(try await Shelf.identifiers(items))
        let inNineties = left.filter { (1990...1999).contains(Shelf.item($0).year) }
        #expect(try await items.delete(1990...1999, from: \.year) == inNineties.count)
        #expect(try await items.count(1990..., from: \.year) == 0)
        left.subtract(inNineties)
        let odd = left.filter { !$0.isMultiple(of: 2) }
        #expect(try await items.delete("odd", from: \.tags) == odd.count)
        #expect(try await items.count("odd", from: \.tags) == 0)
        left.subtract(odd)
        let early = left.filter { Shelf.item($0).year < 1950 }
        #expect(try await items.delete(where: #Predicate { $0.year < 1950 }) == early.count)
        left.subtract(early)
        let remaining = try await Shelf.identifiers(items)
        #expect(!left.isEmpty && Set(remaining) == left)
        #expect(try await items.delete(...) == left.count)
        #expect(try await items.count() == 0)
        expectSound(persistence)
    }

    /// Reads: by identifier, identifier ranges (`...` with a limit), each index kind, counts
    /// and predicates, as README.md, the Guide and `Records` show them.
    @Test func everyReadSpelling() async throws {
        let (persistence, items) = try await Shelf.filled(120)
        defer { persistence.close() }

        #expect(try await items.load(7) == Shelf.item(7))
        #expect(try await items.load(500) == nil)
        #expect(try await items.load(3...5).collect().map(\.id) == [3, 4, 5])
        #expect(try await items.load(10..<40, order: .descending, limit: 2).collect().map(\.id) == [39, 38])
        #expect(try await items.load(..., limit: 10).collect().count == 10)
        #expect(try await items.count() == 120)
        #expect(try await items.count(100...) == 20)
        #expect(try await items.load("c42", from: \.code) == Shelf.item(42))
        #expect(try await items.load("even", from: \.tags).collect().count == 60)
        #expect(try await items.load("odd", from: \.tags, limit: 1).collect().first?.id == 1)
        var descending: [String] = []
        for try await item in items.load("t010"..<"t020", from: \.title, order: .descending, limit: 3) {
            descending.append(item.title)
        }
        #expect(descending == ["t019", "t018", "t017"])
        #expect(
            try await items.load(1...9999, from: \.year, order: .descending, limit: 5).collect().map(\.year)
                == [1999, 1998, 1997, 1996, 1995])
        #expect(try await items.load(..., from: \.year, limit: 1).collect().first?.year == 1900)
        #expect(try await items.count(1900, from: \.year) == 2)
        #expect(try await items.count(1900..<1910, from: \.year) == 20)
        let recent = try await items.fetch(
            where: #Predicate { $0.tags.contains("even") && $0.year >= 1990 },
            sortBy: [SortDescriptor(\.title)], limit: 20
        ).collect()
        #expect(recent.map(\.id) == [90, 92, 94, 96, 98])
        #expect(try await items.count(where: #Predicate { $0.year >= 1990 }) == 10)
        #expect(
            try await items.first(
                where: #Predicate { $0.year == 1905 }, sortBy: [SortDescriptor(\.id, order: .reverse)])?.id == 105)
        #expect(try await items.contains(where: #Predicate { $0.code == "c119" }))
        let plan = try await items.explain(
            where: #Predicate { $0.tags.contains("odd") }, sortBy: [SortDescriptor(\.title)])
        #expect(plan.description.contains("tags"))
        let pinned = try await persistence.read {
            (try await items.load(1), try await items.load("even", from: \.tags).collect().count)
        }
        #expect(pinned.0?.id == 1 && pinned.1 == 60)
    }

    /// Writes and transactions: `persist` returns what it replaced, `update(where:)`,
    /// `perform` keeps nothing when it throws.
    @Test func everyWriteSpelling() async throws {
        let (persistence, items) = try await Shelf.filled(10)
        defer { persistence.close() }

        var changed = Shelf.item(3)
        changed.title = "changed"
        #expect(try await items.persist(changed) == Shelf.item(3))
        #expect(try await items.persist(Shelf.item(50)) == nil)
        #expect(try await items.update(where: #Predicate { $0.tags.contains("even") }) { $0.year = 2000 } == 6)
        #expect(try await items.count(2000, from: \.year) == 6)
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await persistence.perform {
                try await items.persist(Shelf.item(60))
                throw Refused()
            }
        }
        #expect(try await items.load(60) == nil)
        try await items.migrateAndReindex()
        try await items.migrateAndReindex { _ in }
        #expect(try await items.indexReport().allSatisfy { $0.unindexed.isEmpty })
    }

    /// Observation: `observe()`, `observe(id)`, `liveQuery` over an index value and a predicate.
    @Test func everyObservationSpelling() async throws {
        let (persistence, items) = try await Shelf.filled(10)
        defer { persistence.close() }

        let changes = try await items.observe()
        var instance = try await items.observe(4).makeAsyncIterator()
        var live = try await items.liveQuery("even", from: \.tags).makeAsyncIterator()
        var matching = try await items.liveQuery(
            where: #Predicate { $0.year >= 1905 }, sortBy: [SortDescriptor(\.id)], limit: 3
        )
        .makeAsyncIterator()
        var range = try await items.liveQuery(3...5).makeAsyncIterator()
        #expect(try await range.next()?.map(\.id) == [3, 4, 5])
        #expect(try await live.next()?.count == 5)
        #expect(try await matching.next()?.map(\.id) == [5, 6, 7])
        if case .value(let value)? = await instance.next() {
            #expect(value == Shelf.item(4))
        } else {
            Issue.record("no value")
        }

        try await items.delete(4)
        for await event in changes {
            if case .change(let change) = event {
                #expect(change.kind == .deleted && change.identifier == 4)
                break
            }
        }
        if case .deleted? = await instance.next() {} else { Issue.record("no deletion") }
        #expect(try await live.next()?.count == 4)
        #expect(try await range.next()?.map(\.id) == [3, 5])
    }

    /// Values by key, as README.md and `KeyValueStore` show them.
    @Test func everyValueSpelling() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        try persistence.values.set(persistence.values[.callFormLaunches] + 1, for: .callFormLaunches)
        try await persistence.values.flush()
        #expect(try persistence.values.value(for: .callFormLaunches) == 1)
        #expect(try persistence.values.contains(.callFormLaunches))
        #expect(try persistence.values.keys(withPrefix: "callForm") == ["callFormLaunches"])
        var updates = persistence.values.observe(.callFormLaunches).makeAsyncIterator()
        #expect(try await updates.next() == 1)
        try persistence.values.removeValue(for: .callFormLaunches)
        #expect(persistence.values[.callFormLaunches] == 0)
    }

    /// Opening: on disk with options, read-only beside the writer, `verify`.
    @Test func everyOpeningSpelling() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/call-forms-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try Persistence(at: path, options: PersistenceOptions(durability: .full))
        first.close()
        let persistence = try Persistence(
            at: path, options: PersistenceOptions(durability: .grouped(window: .milliseconds(10))))
        let items = persistence.datastore(for: Shelf.Format.self)
        try await items.persist(Shelf.item(1))
        try await persistence.makeDurable()
        let helper = try Persistence(readingFrom: path)
        let helperItems = helper.datastore(for: Shelf.Format.self)
        #expect(try await helperItems.count() == 1)
        helper.close()
        let report = persistence.verify()
        #expect(report.isClean, "\(report.lines)")
        persistence.close()
        let again = try Persistence(at: path)
        defer { again.close() }
        #expect(try await again.datastore(for: Shelf.Format.self).load(1) == Shelf.item(1))
    }
}

extension ValueKeys {
    static let callFormLaunches = ValueKey<Int>("callFormLaunches", default: 0)
}
