import Testing
import Foundation
import Synchronization
import Folio
import FolioTestSupport

/// Live queries over predicates against a fresh `fetch` after every commit: seeded
/// transactions insert, change and delete several records at a time while live queries of
/// several templates (an indexed equality, a union, a negation over an unindexed field, a
/// many-to-many lookup, an identifier range, a composite index), sorted and limited,
/// follow: each picks the changed records to evaluate through its plan's ranges. After each commit every live query
/// must come to exactly what `fetch(where:sortBy:limit:)` returns on that commit.
@Suite struct PredicateLiveQueryTests {
    typealias Item = QueryModelTests.Item

    final class Follower: Sendable {
        let name: String
        let predicate: Predicate<Item>
        let sortBy: [SortDescriptor<Item>]
        let limit: Int?
        let latest = Mutex<[Item]?>(nil)

        init(_ name: String, _ predicate: Predicate<Item>, sortBy: [SortDescriptor<Item>], limit: Int?) {
            self.name = name
            self.predicate = predicate
            self.sortBy = sortBy
            self.limit = limit
        }
    }

    @Test(arguments: [1, 2] as [UInt64])
    func liveQueriesOverPredicatesAgreeWithFetchAfterEveryCommit(seed: UInt64) async throws {
        let persistence = Persistence.inMemory()
        let items = persistence.datastore(for: QueryModelTests.ItemFormat.self)
        var rng = SplitMix64(seed: seed)
        try await persistence.perform {
            for id in 0..<40 { try await items.persist(QueryModelTests.item(id, &rng)) }
        }
        let followers = [
            Follower("group == 3", #Predicate { $0.group == 3 }, sortBy: [], limit: nil),
            Follower(
                "tags contains red || group < 2, by score", #Predicate { $0.tags.contains("red") || $0.group < 2 },
                sortBy: [SortDescriptor(\Item.score)], limit: nil),
            Follower(
                "!(score > 0), by name then id descending, limit 5", #Predicate { !($0.score > 0) },
                sortBy: [SortDescriptor(\Item.name), SortDescriptor(\Item.id, order: .reverse)], limit: 5),
            Follower("tags contains blue, limit 3", #Predicate { $0.tags.contains("blue") }, sortBy: [], limit: 3),
            Follower(
                "10 <= id < 30, by group", #Predicate { $0.id >= 10 && $0.id < 30 },
                sortBy: [SortDescriptor(\Item.group)],
                limit: nil),
            Follower(
                "name == Bob1 && score > -10", #Predicate { $0.name == "Bob1" && $0.score > -10 }, sortBy: [],
                limit: nil),
        ]
        var tasks: [Task<Void, any Error>] = []
        defer { for task in tasks { task.cancel() } }
        for follower in followers {
            let live = try await items.liveQuery(
                where: follower.predicate, sortBy: follower.sortBy, limit: follower.limit)
            tasks.append(
                Task {
                    for try await results in live { follower.latest.withLock { $0 = results } }
                })
        }

        for step in 0..<50 {
            var plan: [(id: Int, item: Item?)] = []
            for _ in 0..<(1 + Int(rng.next() % 5)) {
                let id = Int(rng.next() % 60)  // ids 40..<60 start absent
                plan.append((id, rng.next() % 4 == 0 ? nil : QueryModelTests.item(id, &rng)))
            }
            try await persistence.perform {
                for (id, item) in plan {
                    if let item { try await items.persist(item) } else { try await items.deleteIfPresent(id) }
                }
            }
            for follower in followers {
                let expected = try await items.fetch(
                    where: follower.predicate, sortBy: follower.sortBy, limit: follower.limit
                ).collect()
                let reached = await eventually { follower.latest.withLock { $0 } == expected }
                #expect(
                    reached,
                    "seed \(seed), step \(step): \(follower.name) is \(follower.latest.withLock { $0 }?.map(\.id) ?? []), expected \(expected.map(\.id))"
                )
                if !reached { return }
            }
        }
    }
}
