import Testing
import Foundation
import Folio
import FolioTestSupport
import LibraryExample

/// Queries against a model: random records (every index kind: one-to-many, one-to-one,
/// many-to-many, optional values, an unindexed field), random predicates from templates
/// covering `==`, `<`, `<=`, `>`, `>=`, closed and half-open ranges, string prefixes,
/// `contains` on a collection, `&&`, `||` and `!` (random constants each round), random
/// sorts, limits and offsets, string ranges over names some of which are not in normal
/// form. Every `fetch`, `count`, `first` and `contains` must equal
/// filtering and sorting all records in memory (ties in identifier order), whatever plan
/// was chosen; and `explain` must use an index whenever the template has an indexable
/// conjunct.
@Suite struct QueryModelTests {
    struct Item: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var group: Int
        var name: String
        var tags: [String]
        var score: Int
        var code: String
        var rating: Int?
    }

    struct ItemFormat: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "items"
        static let currentVersion = Version.one
        typealias Instance = Item
        let group = Index(\Item.group)
        let name = Index(\Item.name)
        let tags = ManyToManyIndex(\Item.tags)
        let code = OneToOneIndex(\Item.code)
        let rating = Index(\Item.rating)
        /// Composite: an equality on the name and a range of scores read one range of it.
        let nameScore = Index(\Item.name, \Item.score)
    }

    static let names = ["Ann", "Anna", "Bob", "Bea", "Carl", "Cé", "Ce\u{301}line", "Dora", "", "Ännchen"]
    static let tags = ["red", "green", "blue", "x", "y"]

    static func item(_ id: Int, _ rng: inout SplitMix64) -> Item {
        Item(
            id: id, group: Int(rng.next() % 12),
            name: names[Int(rng.next() % UInt64(names.count))] + String(rng.next() % 3),
            tags: (0..<Int(rng.next() % 3)).map { _ in tags[Int(rng.next() % UInt64(tags.count))] },
            score: Int(rng.next() % 100) - 50, code: "c\(id)", rating: rng.next() % 4 == 0 ? nil : Int(rng.next() % 5))
    }

    /// A predicate and whether it has a conjunct the planner can answer from an index.
    typealias Template = (name: String, predicate: Predicate<Item>, indexable: Bool)

    /// Templates with random constants; half the time taken from `anchor`, a stored item, so
    /// that range bounds fall exactly on stored values (where off-by-one errors show).
    static func templates(_ rng: inout SplitMix64, anchor: Item? = nil) -> [Template] {
        let anchored = anchor != nil && rng.next() % 2 == 0
        let g = anchored ? anchor!.group : Int(rng.next() % 12), h = g + Int(rng.next() % 4)
        let s = anchored ? anchor!.score : Int(rng.next() % 100) - 50
        let n = ["A", "An", "B", "C", "Cé", "Ä", "Z", ""][Int(rng.next() % 8)]
        let t = tags[Int(rng.next() % UInt64(tags.count))], u = tags[Int(rng.next() % UInt64(tags.count))]
        let c = "c\(rng.next() % 300)", id = Int(rng.next() % 300),
            r: Int? = rng.next() % 3 == 0 ? nil : Int(rng.next() % 5)
        let full = anchored ? anchor!.name : names[Int(rng.next() % UInt64(names.count))] + String(rng.next() % 3)
        let s2 = s + Int(rng.next() % 40)
        return [
            ("group == g", #Predicate<Item> { $0.group == g }, true),
            ("group < g", #Predicate<Item> { $0.group < g }, true),
            ("group <= g && score > s", #Predicate<Item> { $0.group <= g && $0.score > s }, true),
            ("g < group", #Predicate<Item> { g < $0.group }, true),
            ("group >= g", #Predicate<Item> { $0.group >= g }, true),
            ("g...h contains group", #Predicate<Item> { (g...h).contains($0.group) }, true),
            ("g..<h contains group", #Predicate<Item> { (g..<h).contains($0.group) }, true),
            // A non-ASCII prefix of one character leaves nothing to range over (QueryValueRange).
            (
                "name starts with n", #Predicate<Item> { $0.name.starts(with: n) },
                n.count > 1 || n.first?.isASCII == true
            ),
            ("tags contains t", #Predicate<Item> { $0.tags.contains(t) }, true),
            (
                "tags contains t || tags contains u", #Predicate<Item> { $0.tags.contains(t) || $0.tags.contains(u) },
                true
            ),
            ("group == g || tags contains t", #Predicate<Item> { $0.group == g || $0.tags.contains(t) }, true),
            ("code == c", #Predicate<Item> { $0.code == c }, true),
            ("id >= id && score < s", #Predicate<Item> { $0.id >= id && $0.score < s }, true),
            ("rating == r", #Predicate<Item> { $0.rating == r }, true),
            ("!(group == g)", #Predicate<Item> { !($0.group == g) }, false),
            ("score > s", #Predicate<Item> { $0.score > s }, false),
            ("score > s || group == g", #Predicate<Item> { $0.score > s || $0.group == g }, false),
            (
                "!(score > s) && (group > g || name starts with n)",
                #Predicate<Item> { !($0.score > s) && ($0.group > g || $0.name.starts(with: n)) },
                n.count > 1 || n.first?.isASCII == true
            ),
            (
                "tags contains t && g...h contains group && score != s",
                #Predicate<Item> { $0.tags.contains(t) && (g...h).contains($0.group) && $0.score != s }, true
            ),
            ("score == s * 2", #Predicate<Item> { $0.score == s * 2 }, false),  // `s * 2` is computed: not a constant
            ("name == full && score > s", #Predicate<Item> { $0.name == full && $0.score > s }, true),
            ("group >= g && group < h", #Predicate<Item> { $0.group >= g && $0.group < h }, true),
            (
                "group > g && group <= h && score < s",
                #Predicate<Item> { $0.group > g && $0.group <= h && $0.score < s }, true
            ),
            ("id < h && id >= g && id > g", #Predicate<Item> { $0.id < h && $0.id >= g && $0.id > g }, true),
            (
                "id > g && id >= s2 && id <= h * 20",
                #Predicate<Item> { $0.id > g && $0.id >= s2 && $0.id <= 240 && $0.id < 200 }, true
            ),
            ("score <= s2 && name == full", #Predicate<Item> { $0.score <= s2 && $0.name == full }, true),
            (
                "name == full && s..<s2 contains score",
                #Predicate<Item> { $0.name == full && (s..<s2).contains($0.score) }, true
            ),
            ("name == full && score == s", #Predicate<Item> { $0.name == full && $0.score == s }, true),
            // String ranges use the index only with ASCII bounds (RangeReadableKey.swift).
            ("name >= n", #Predicate<Item> { $0.name >= n }, n.utf8.allSatisfy { $0 < 0x80 }),
            ("name < full", #Predicate<Item> { $0.name < full }, full.utf8.allSatisfy { $0 < 0x80 }),
            (
                "n <= name && name < full", #Predicate<Item> { n <= $0.name && $0.name < full },
                n.utf8.allSatisfy { $0 < 0x80 } && full.utf8.allSatisfy { $0 < 0x80 }
            ),
        ]
    }

    static let sorts: [(String, [SortDescriptor<Item>])] = [
        ("none", []),
        ("group", [SortDescriptor(\Item.group)]),
        ("group descending", [SortDescriptor(\Item.group, order: .reverse)]),
        ("id descending", [SortDescriptor(\Item.id, order: .reverse)]),
        ("name, score", [SortDescriptor(\Item.name), SortDescriptor(\Item.score)]),
        ("score descending", [SortDescriptor(\Item.score, order: .reverse)]),
    ]

    static func expected(
        _ items: [Item], _ predicate: Predicate<Item>, _ sortBy: [SortDescriptor<Item>]
    ) throws -> [Item] {
        try expectedQueryResults(items, predicate, sortBy)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func queriesEqualFilteringAndSortingInMemory(seed: UInt64) async throws {
        var rng = SplitMix64(seed: seed)
        let persistence = Persistence.inMemory()
        let items = persistence.datastore(for: ItemFormat.self)
        var model: [Int: Item] = [:]
        var checked = 0, usedIndex = 0
        for round in 0..<6 {
            // Change the store: inserts, updates, deletes, in one transaction.
            try await persistence.perform {
                for _ in 0..<60 {
                    let id = Int(rng.next() % 300)
                    if rng.next() % 5 == 0, model[id] != nil {
                        try await items.delete(id)
                        model[id] = nil
                    } else {
                        let item = Self.item(id, &rng)
                        try await items.persist(item)
                        model[id] = item
                    }
                }
            }
            let all = Array(model.values)
            let anchor = all.isEmpty ? nil : all[Int(rng.next() % UInt64(all.count))]
            for template in Self.templates(&rng, anchor: anchor) {
                for (sortName, sortBy) in Self.sorts {
                    let limit: Int? = rng.next() % 3 == 0 ? Int(rng.next() % 8) : nil
                    let offset = rng.next() % 4 == 0 ? Int(rng.next() % 5) : 0
                    let want = try Self.expected(all, template.predicate, sortBy)
                    let context =
                        "seed \(seed) round \(round): \(template.name), sort \(sortName), limit \(limit.map(String.init) ?? "-") offset \(offset)"
                    let got = try await items.fetch(
                        where: template.predicate, sortBy: sortBy, limit: limit, offset: offset
                    ).collect()
                    let wantPage = Array(want.dropFirst(offset).prefix(limit ?? Int.max))
                    if got != wantPage {
                        let plan = try await items.explain(
                            where: template.predicate, sortBy: sortBy, limit: limit, offset: offset)
                        Issue.record("\(context); plan: \(plan); got \(got.map(\.id)), want \(wantPage.map(\.id))")
                    }
                    checked += 1
                }
                #expect(
                    try await items.count(where: template.predicate)
                        == (try Self.expected(all, template.predicate, []).count),
                    "count: \(template.name)")
                let firstByGroup = try await items.first(
                    where: template.predicate, sortBy: [SortDescriptor(\Item.group)])
                #expect(
                    firstByGroup == (try Self.expected(all, template.predicate, [SortDescriptor(\Item.group)]).first))
                #expect(
                    try await items.contains(where: template.predicate)
                        == !(try Self.expected(all, template.predicate, []).isEmpty))
                let plan = try await items.explain(where: template.predicate)
                if template.indexable {
                    #expect(plan.access != .everyRecord, "\(template.name) has an indexable conjunct: \(plan)")
                    usedIndex += 1
                }
            }
        }
        #expect(checked > 500)
        #expect(usedIndex > 50)
    }

    /// Inside `perform`, a query sees the transaction's own writes, and a query planned over
    /// an index reads the same as one that scans.
    @Test func queriesInsideATransactionSeeItsWrites() async throws {
        let persistence = Persistence.inMemory()
        let items = persistence.datastore(for: ItemFormat.self)
        var rng = SplitMix64(seed: 9)
        try await persistence.perform {
            for id in 0..<20 { try await items.persist(Self.item(id, &rng)) }
            try await items.persist(
                Item(id: 100, group: 99, name: "New", tags: ["x"], score: 0, code: "c100", rating: nil))
            #expect(try await items.fetch(where: #Predicate { $0.group == 99 }).collect().map(\.id) == [100])
            #expect(try await items.count(where: #Predicate { $0.name.starts(with: "New") }) == 1)
        }
    }

    /// A computed property's index serves predicates as a stored one's does: key paths are
    /// matched by identity, and `\Book.sortTitle` is the same key path in the declaration and
    /// in the predicate.
    @Test func aComputedPropertysIndexServesPredicates() async throws {
        let persistence = Persistence.inMemory()
        let books = persistence.datastore(for: LibraryExample.BookFormat.self)
        let sample = SampleData.books(50, authors: 5)
        try await persistence.perform { for book in sample { try await books.persist(book) } }
        let predicate = #Predicate<LibraryExample.Book> { $0.sortTitle.starts(with: "the") }
        let plan = try await books.explain(where: predicate)
        #expect(plan.access == .index(name: "title", ranges: ["title starts with \"the\""]), "\(plan)")
        let found = try await books.fetch(where: predicate).collect()
        #expect(
            found == sample.filter { $0.sortTitle.hasPrefix("the") }.sorted { $0.id.uuidString < $1.id.uuidString }
                || Set(found.map(\.id)) == Set(sample.filter { $0.sortTitle.hasPrefix("the") }.map(\.id)))
    }

    /// `explain` in the words a user reads: the index, the ranges, the filter and the sort.
    @Test func explainSaysWhichIndexAndWhy() async throws {
        let persistence = Persistence.inMemory()
        let items = persistence.datastore(for: ItemFormat.self)
        try await items.persist(Item(id: 1, group: 1, name: "A", tags: [], score: 0, code: "c1", rating: nil))
        let byGroup = try await items.explain(
            where: #Predicate { $0.group >= 3 && $0.score < 7 }, sortBy: [SortDescriptor(\.name)],
            limit: 20)
        #expect(byGroup.access == .index(name: "group", ranges: ["group >= 3"]))
        #expect(
            byGroup.description
                == "index group (group >= 3), then filter by the predicate, then sort by name, then limit 20")
        let byCode = try await items.explain(where: #Predicate { $0.group >= 3 && $0.code == "c1" })
        #expect(byCode.access == .index(name: "code", ranges: ["code == c1"]), "an equality on a unique index wins")
        let streamed = try await items.explain(where: #Predicate { $0.group == 2 }, sortBy: [SortDescriptor(\.group)])
        #expect(streamed.sort == nil, "the index order is the sort order: no sort step")
        let scan = try await items.explain(where: #Predicate { $0.score > 1 })
        #expect(scan.access == .everyRecord)
        let union = try await items.explain(where: #Predicate { $0.tags.contains("x") || $0.group == 4 })
        #expect(union.access == .index(name: "tags + group", ranges: ["tags contains x", "group == 4"]))
        let composite = try await items.explain(where: #Predicate { $0.score > 5 && $0.name == "A" })
        #expect(composite.access == .index(name: "nameScore", ranges: ["name == A, score > 5"]))
    }
}
