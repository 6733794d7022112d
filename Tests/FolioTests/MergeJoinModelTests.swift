import Testing
import Foundation
import Folio
import FolioTestSupport

/// Index plans read as a merge join (identifiers from the index entries, sorted, then the
/// records through one forward cursor) against a model: enough records that the records
/// tree has many leaves, random index ranges, unions of one index and of several, a
/// many-to-many index, a covering index, an identifier range joined with an index; read
/// from committed states with and without the record cache, and inside a write
/// transaction with uncommitted changes. Every `fetch`, `count` and `first` must equal
/// filtering and sorting the model in memory.
@Suite struct MergeJoinModelTests {
    struct Item: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var priority: Int
        var band: Int
        var score: Int
        var tags: [String]
        var padding: String
    }

    struct ItemFormat: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "joined"
        static let currentVersion = Version.one
        typealias Instance = Item
        let priority = Index(\Item.priority)
        let band = Index(\Item.band, storage: .covering)
        let tags = ManyToManyIndex(\Item.tags)
    }

    static let tags = ["red", "green", "blue", "x"]

    static func item(_ id: Int, _ rng: inout SplitMix64) -> Item {
        Item(
            id: id, priority: Int(rng.next() % 200), band: Int(rng.next() % 40), score: Int(rng.next() % 100),
            tags: (0..<Int(rng.next() % 3)).map { _ in tags[Int(rng.next() % UInt64(tags.count))] },
            padding: String(repeating: "p", count: 40 + Int(rng.next() % 80)))
    }

    static func predicates(_ rng: inout SplitMix64) -> [(String, Predicate<Item>)] {
        let lo = Int(rng.next() % 200), hi = lo + Int(rng.next() % 60), p = Int(rng.next() % 200)
        let q = Int(rng.next() % 200), b = Int(rng.next() % 40), c = b + Int(rng.next() % 8)
        let s = Int(rng.next() % 100), a = Int(rng.next() % 1_500)
        let t = tags[Int(rng.next() % UInt64(tags.count))]
        return [
            ("lo..<hi contains priority", #Predicate<Item> { (lo..<hi).contains($0.priority) }),
            ("priority >= lo", #Predicate<Item> { $0.priority >= lo }),
            ("priority == p", #Predicate<Item> { $0.priority == p }),
            ("priority == p || priority == q", #Predicate<Item> { $0.priority == p || $0.priority == q }),
            ("tags contains t", #Predicate<Item> { $0.tags.contains(t) }),
            (
                "tags contains t || lo..<hi contains priority",
                #Predicate<Item> { $0.tags.contains(t) || (lo..<hi).contains($0.priority) }
            ),
            ("b...c contains band (covering)", #Predicate<Item> { (b...c).contains($0.band) }),
            ("band == b || tags contains t", #Predicate<Item> { $0.band == b || $0.tags.contains(t) }),
            ("priority >= lo && score < s", #Predicate<Item> { $0.priority >= lo && $0.score < s }),
            ("id < a || priority == p", #Predicate<Item> { $0.id < a || $0.priority == p }),
        ]
    }

    static let sorts: [(String, [SortDescriptor<Item>])] = [
        ("none", []),
        ("priority", [SortDescriptor(\Item.priority)]),
        ("score descending", [SortDescriptor(\Item.score, order: .reverse)]),
    ]

    static func expected(
        _ items: [Item], _ predicate: Predicate<Item>, _ sortBy: [SortDescriptor<Item>]
    ) throws -> [Item] {
        try expectedQueryResults(items, predicate, sortBy)
    }

    /// Runs every predicate and sort against `model` through `items`, returning how many
    /// query results were compared. Safe inside a transaction (reads only).
    static func check(
        _ items: Datastore<ItemFormat, ReadWrite>, model: [Int: Item], rng: inout SplitMix64, context: String
    ) async throws -> Int {
        let all = Array(model.values)
        var compared = 0
        for (name, predicate) in predicates(&rng) {
            for (sortName, sortBy) in sorts {
                let limit: Int? = rng.next() % 3 == 0 ? Int(rng.next() % 30) : nil
                let offset = rng.next() % 4 == 0 ? Int(rng.next() % 10) : 0
                let want = Array(try expected(all, predicate, sortBy).dropFirst(offset).prefix(limit ?? Int.max))
                let got = try await items.fetch(where: predicate, sortBy: sortBy, limit: limit, offset: offset)
                    .collect()
                #expect(
                    got.map(\.id) == want.map(\.id) && got == want,
                    "\(context): \(name), sort \(sortName), limit \(limit.map(String.init) ?? "-") offset \(offset)")
                compared += got.count
            }
            let matching = try expected(all, predicate, [])
            #expect(try await items.count(where: predicate) == matching.count, "\(context): count \(name)")
            #expect(try await items.first(where: predicate) == matching.first, "\(context): first \(name)")
        }
        return compared
    }

    @Test(arguments: [(1, true), (2, false)] as [(UInt64, Bool)])
    func indexPlansEqualTheModel(seed: UInt64, recordCache: Bool) async throws {
        var rng = SplitMix64(seed: seed)
        let options = PersistenceOptions(
            autoCompaction: nil, log: { _ in }, recordCache: recordCache ? RecordCacheLimits() : nil)
        let persistence = Persistence.inMemory(options: options)
        let items = persistence.datastore(for: ItemFormat.self)
        var model: [Int: Item] = [:]
        try await persistence.perform {
            for id in 0..<1_500 {
                let item = Self.item(id, &rng)
                try await items.persist(item)
                model[id] = item
            }
        }
        var compared = 0
        for round in 0..<3 {
            // Committed: twice, so the second pass is served by the record cache when it has one.
            compared += try await Self.check(items, model: model, rng: &rng, context: "seed \(seed) round \(round)")
            compared += try await Self.check(items, model: model, rng: &rng, context: "seed \(seed) round \(round)")
            // Uncommitted changes, read inside their transaction.
            var working = model
            compared += try await persistence.perform { () async throws -> Int in
                for _ in 0..<200 {
                    let id = Int(rng.next() % 1_600)
                    if rng.next() % 3 == 0, working[id] != nil {
                        try await items.delete(id)
                        working[id] = nil
                    } else {
                        let item = Self.item(id, &rng)
                        try await items.persist(item)
                        working[id] = item
                    }
                }
                return try await Self.check(
                    items, model: working, rng: &rng, context: "seed \(seed) round \(round), in the transaction")
            }
            model = working
        }
        // Enough results compared that a join dropping or repeating a record shows.
        #expect(compared > 10_000)
    }
}
