import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport

/// Live queries against a fresh query after every commit: seeded transactions insert,
/// change, move (index value) and delete records, several at a time, while live queries
/// over index and identifier ranges, in both orders, with and without a limit, follow.
/// After each commit every live query must come to exactly what `load(range)` returns on
/// that commit (incremental maintenance removes, adds and merges; limited queries re-run).
@Suite struct LiveQueryModelTests {
    /// One live query and the fresh query it must agree with.
    final class Follower: Sendable {
        let name: String
        let latest: Mutex<[Author]?>
        let expected: @Sendable (Datastore<AuthorFormat, ReadWrite>) async throws -> [Author]

        init(name: String, expected: @escaping @Sendable (Datastore<AuthorFormat, ReadWrite>) async throws -> [Author])
        {
            self.name = name
            latest = Mutex(nil)
            self.expected = expected
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func liveQueriesAgreeWithFreshQueriesAfterEveryCommit(seed: UInt64) async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        var random = SplitMix64(seed: seed)
        try await persistence.perform {
            for id in 0..<60 {
                try await authors.persist(Author(id: id, name: "a\(id)", born: 1900 + Int(random.next() % 50)))
            }
        }

        var followers: [Follower] = []
        var tasks: [Task<Void, any Error>] = []
        func follow(
            _ name: String, _ live: LiveResults<AuthorFormat>,
            expected: @escaping @Sendable (Datastore<AuthorFormat, ReadWrite>) async throws -> [Author]
        ) {
            let follower = Follower(name: name, expected: expected)
            followers.append(follower)
            tasks.append(
                Task {
                    for try await results in live { follower.latest.withLock { $0 = results } }
                })
        }
        follow("born 1910..<1930", try await authors.liveQuery(1910..<1930, from: \.born)) {
            try await $0.load(1910..<1930, from: \.born).collect()
        }
        follow(
            "born 1905...1940 descending", try await authors.liveQuery(1905...1940, from: \.born, order: .descending)
        ) {
            try await $0.load(1905...1940, from: \.born, order: .descending).collect()
        }
        follow("born 1920 exactly", try await authors.liveQuery(1920, from: \.born)) {
            try await $0.load(1920, from: \.born).collect()
        }
        follow("ids 10..<40", try await authors.liveQuery(10..<40)) { try await $0.load(10..<40).collect() }
        follow("ids ...30 descending", try await authors.liveQuery(...30, order: .descending)) {
            try await $0.load(...30, order: .descending).collect()
        }
        follow("all", try await authors.liveQuery(...)) { try await $0.load(...).collect() }
        follow("born 1900... limit 5", try await authors.liveQuery(1900..., from: \.born, limit: 5)) {
            try await $0.load(1900..., from: \.born, limit: 5).collect()
        }
        defer { for task in tasks { task.cancel() } }

        for step in 0..<80 {
            let operations = 1 + Int(random.next() % 6)
            var plan: [(id: Int, born: Int?)] = []
            for _ in 0..<operations {
                let id = Int(random.next() % 80)  // ids 60..<80 start absent
                let born: Int? = random.next() % 5 == 0 ? nil : 1900 + Int(random.next() % 50)
                plan.append((id, born))
            }
            try await persistence.perform {
                for (id, born) in plan {
                    if let born {
                        try await authors.persist(Author(id: id, name: "a\(id)-\(step)", born: born))
                    } else {
                        try await authors.deleteIfPresent(id)
                    }
                }
            }
            for follower in followers {
                let expected = try await follower.expected(authors)
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
