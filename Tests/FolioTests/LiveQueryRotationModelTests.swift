import Testing
import Foundation
import Synchronization
import Folio
import FolioTestSupport

/// Live queries against a fresh query after commits that replace much of their results:
/// every record's indexed value rotated at once (each range then loses all its results and
/// gains as many others), half of them rotated, a block deleted and another inserted, and
/// small changes in between. Index and identifier ranges (both orders, a limit) and
/// predicates (one exact range in index order, the same range sorted otherwise, a range
/// with a residual condition, an identifier range, a negation) follow; after each commit
/// each must come to exactly what the same query returns on that commit.
@Suite struct LiveQueryRotationModelTests {
    /// One live query and the fresh query it must agree with.
    final class Follower: Sendable {
        let name: String
        let latest = Mutex<[Author]?>(nil)
        let expected: @Sendable (Datastore<AuthorFormat, ReadWrite>) async throws -> [Author]

        init(
            _ name: String, expected: @escaping @Sendable (Datastore<AuthorFormat, ReadWrite>) async throws -> [Author]
        ) {
            self.name = name
            self.expected = expected
        }
    }

    static let count = 300
    static let base = 1700

    @Test(arguments: [1, 2] as [UInt64])
    func liveQueriesAgreeWithFreshQueriesAfterRotations(seed: UInt64) async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        var random = SplitMix64(seed: seed)
        // Born: a permutation of base..<base + count, so each window holds as many authors
        // as it is wide.
        var born = Array(0..<Self.count).map { Self.base + $0 }
        for i in stride(from: born.count - 1, to: 0, by: -1) { born.swapAt(i, Int(random.next() % UInt64(i + 1))) }
        var current = (0..<Self.count).map { Author(id: $0, name: "a\($0)", born: born[$0]) }
        try await persistence.perform { for author in current { try await authors.persist(author) } }

        var followers: [Follower] = []
        var tasks: [Task<Void, any Error>] = []
        defer { for task in tasks { task.cancel() } }
        func follow(
            _ name: String, _ live: LiveResults<AuthorFormat>,
            expected: @escaping @Sendable (Datastore<AuthorFormat, ReadWrite>) async throws -> [Author]
        ) {
            let follower = Follower(name, expected: expected)
            followers.append(follower)
            tasks.append(Task { for try await results in live { follower.latest.withLock { $0 = results } } })
        }
        for low in stride(from: Self.base, to: Self.base + Self.count, by: 45) {
            let high = low + 30
            follow("born \(low)..<\(high)", try await authors.liveQuery(low..<high, from: \.born)) {
                try await $0.load(low..<high, from: \.born).collect()
            }
            follow(
                "born \(low)...\(high) descending",
                try await authors.liveQuery(low...high, from: \.born, order: .descending)
            ) { try await $0.load(low...high, from: \.born, order: .descending).collect() }
            follow(
                "where born in \(low)..<\(high), by born",
                try await authors.liveQuery(
                    where: #Predicate { $0.born >= low && $0.born < high }, sortBy: [SortDescriptor(\.born)])
            ) {
                try await $0.fetch(
                    where: #Predicate { $0.born >= low && $0.born < high }, sortBy: [SortDescriptor(\.born)]
                )
                .collect()
            }
        }
        follow("born 1750... limit 7", try await authors.liveQuery(1750..., from: \.born, limit: 7)) {
            try await $0.load(1750..., from: \.born, limit: 7).collect()
        }
        follow("ids 40..<160", try await authors.liveQuery(40..<160)) { try await $0.load(40..<160).collect() }
        follow("ids ...90 descending", try await authors.liveQuery(...90, order: .descending)) {
            try await $0.load(...90, order: .descending).collect()
        }
        follow(
            "where born in 1800..<1900, by name",
            try await authors.liveQuery(
                where: #Predicate { $0.born >= 1800 && $0.born < 1900 }, sortBy: [SortDescriptor(\.name)])
        ) {
            try await $0.fetch(
                where: #Predicate { $0.born >= 1800 && $0.born < 1900 }, sortBy: [SortDescriptor(\.name)]
            )
            .collect()
        }
        follow(
            "where born in 1720..<1850 and name != a7",
            try await authors.liveQuery(where: #Predicate { $0.born >= 1720 && $0.born < 1850 && $0.name != "a7" })
        ) { try await $0.fetch(where: #Predicate { $0.born >= 1720 && $0.born < 1850 && $0.name != "a7" }).collect() }
        follow(
            "where id in 100..<250, by born",
            try await authors.liveQuery(
                where: #Predicate { $0.id >= 100 && $0.id < 250 }, sortBy: [SortDescriptor(\.born)])
        ) {
            try await $0.fetch(where: #Predicate { $0.id >= 100 && $0.id < 250 }, sortBy: [SortDescriptor(\.born)])
                .collect()
        }
        follow("where !(born < 1880)", try await authors.liveQuery(where: #Predicate { !($0.born < 1880) })) {
            try await $0.fetch(where: #Predicate { !($0.born < 1880) }).collect()
        }

        for step in 0..<12 {
            var changed: [Author] = []
            var deleted: [Int] = []
            switch step % 4 {
            case 0:
                // Every author's born moves by a third of the domain: each window's results
                // are all replaced.
                changed = current.map { Author(id: $0.id, name: "\($0.name)+", born: Self.rotated($0.born, by: 100)) }
            case 1:
                // Every second author moves: each window loses and gains some.
                changed = current.filter { $0.id % 2 == 0 }.map {
                    Author(id: $0.id, name: $0.name, born: Self.rotated($0.born, by: 37))
                }
            case 2:
                // A block goes, a block comes back (ids past the end at first).
                let start = Int(random.next() % UInt64(Self.count))
                deleted = current.map(\.id).filter { $0 >= start && $0 < start + 40 }
                changed = (0..<20).map { offset in
                    let id = Self.count + step * 20 + offset
                    return Author(id: id, name: "n\(id)", born: Self.base + Int(random.next() % UInt64(Self.count)))
                }
            default:
                // A few records change.
                for _ in 0..<3 {
                    let author = current[Int(random.next() % UInt64(current.count))]
                    changed.append(
                        Author(
                            id: author.id, name: author.name, born: Self.base + Int(random.next() % UInt64(Self.count)))
                    )
                }
            }
            try await persistence.perform {
                for id in deleted { try await authors.deleteIfPresent(id) }
                for author in changed { try await authors.persist(author) }
            }
            current = try await authors.load(...).collect()
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

    /// `born` moved by `shift` within base..<base + count.
    static func rotated(_ born: Int, by shift: Int) -> Int {
        base + (born - base + shift) % count
    }
}
