import Testing
import Foundation
import Folio

/// `($0.optional ?? d) op x` reads an index over the optional: the values satisfying
/// `op x`, and the `nil`s when `d` does. Results must equal filtering every record.
@Suite struct NilCoalescingPlanTests {
    struct Item: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var rank: Int?
        var slot: Int?
    }

    struct Items: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "items"
        static let currentVersion = Version.one
        typealias Instance = Item
        let rank = Index(\Item.rank)
        let slot = OneToOneIndex(\Item.slot)
    }

    @Test func comparisonsWithADefaultReadTheIndexAndMatchAFilter() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let items = persistence.datastore(for: Items.self)
        let all = (1...120).map { id in
            Item(id: id, rank: id % 4 == 0 ? nil : (id * 7) % 30 - 5, slot: id % 5 == 0 ? nil : id * 3)
        }
        try await persistence.perform { for item in all { try await items.persist(item) } }

        for x in [-6, -1, 0, 7, 24, 30] {
            for d in [-10, x, 100] {
                let y = x * 3
                let cases: [(String, Predicate<Item>, (Item) -> Bool)] = [
                    (">", #Predicate { ($0.rank ?? d) > x }, { ($0.rank ?? d) > x }),
                    (">=", #Predicate { ($0.rank ?? d) >= x }, { ($0.rank ?? d) >= x }),
                    ("<", #Predicate { ($0.rank ?? d) < x }, { ($0.rank ?? d) < x }),
                    ("<=", #Predicate { ($0.rank ?? d) <= x }, { ($0.rank ?? d) <= x }),
                    ("x <", #Predicate { x < ($0.rank ?? d) }, { x < ($0.rank ?? d) }),
                    ("x >=", #Predicate { x >= ($0.rank ?? d) }, { x >= ($0.rank ?? d) }),
                    ("slot >", #Predicate { ($0.slot ?? d) > y }, { ($0.slot ?? d) > y }),
                    ("slot <=", #Predicate { ($0.slot ?? d) <= y }, { ($0.slot ?? d) <= y }),
                ]
                for (label, predicate, matches) in cases {
                    let plan = try await items.explain(where: predicate)
                    guard case .index = plan.access else {
                        Issue.record("\(label) x=\(x) d=\(d) does not read an index: \(plan)")
                        continue
                    }
                    let found = try await items.fetch(where: predicate).collect()
                    #expect(found == all.filter(matches), "\(label) x=\(x) d=\(d): \(plan)")
                    #expect(try await items.count(where: predicate) == all.filter(matches).count, "\(label)")
                }
            }
        }
    }
}
