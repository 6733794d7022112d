import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage

/// Transactions that set values, running at once (Docs/Architecture.md invariant 9): a set
/// is a blind write, so two transactions setting the same and different keys both commit
/// in their shared turns, neither runs again, the later commit wins the key both set, and
/// observers see each change once, in generation order. A transaction that reads a value
/// and sets it is a read-write: it still conflicts and runs again. Deadlines only turn a
/// hang into a failure.
@Suite struct KeyValueConcurrentTransactionTests {
    static let durabilities: [FolioStorage.Durability] = [.full, .grouped(window: .milliseconds(5))]

    /// Counts the runs of each body and lets the bodies meet: each waits, before it
    /// returns, until both have started (so both transactions are open at once).
    final class Meeting: Sendable {
        let arrived = Atomic<Int>(0)
        let runs = Mutex<[String: Int]>([:])
        /// Set by a caller when the first `perform` returned (for orderings that need it).
        let firstReturned = Atomic<Bool>(false)

        func meet(_ label: String) async {
            runs.withLock { $0[label, default: 0] += 1 }
            arrived.add(1, ordering: .acquiringAndReleasing)
            // Never given up silently: a partner that never begins (a turn held back) is a
            // failure to see, not minutes of waiting for the hang guard in a passing test.
            if !(await KV.eventually { arrived.load(ordering: .acquiring) >= 2 }) {
                Issue.record("\(label): the other transaction never began, so they did not run at once")
            }
        }
    }

    /// The key-value tree's changes, as the store's observers receive them.
    final class Events: Sendable {
        let seen = Mutex<[(generation: UInt64, keys: [String])]>([])

        func record(_ event: StoreEvent) {
            guard case .committed(let commits) = event else { return }
            for commit in commits {
                let keys = commit.changes.trees.filter { $0.tree == KeyValueLayout.tree }
                    .flatMap(\.entries).map { String(decoding: $0.key, as: UTF8.self) }
                if !keys.isEmpty { seen.withLock { $0.append((commit.generation, keys)) } }
            }
        }
    }

    /// Two transactions set the key `shared` and one key of their own each, open at once.
    /// Both commit without running again; the one with the later generation wins `shared`;
    /// the store's observers see two commits, in generation order, each listing its keys
    /// once; the key's observer ends at the winner's value; reopened, the same.
    @Test(arguments: durabilities)
    func blindSetsCommitAtOnceAndTheLaterCommitWins(durability: FolioStorage.Durability) async throws {
        let path = KV.temporaryPath("blind")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let persistence = try Persistence(at: path, options: KV.options(durability: durability))
        defer { persistence.close() }
        let values = persistence.values
        let shared = ValueKey<String>("c/shared", default: "")
        let own = ["a": ValueKey<Int>("c/a", default: 0), "b": ValueKey<Int>("c/b", default: 0)]
        try values.set("before", for: shared)
        try await values.flush()
        let events = Events()
        let observation = persistence.core.store.observe { events.record($0) }
        defer { observation.cancel() }
        let observed = KeyValueObservationTests.Received<String>()
        let consumer = KeyValueObservationTests.consume(values.observe(shared), into: observed)
        defer { consumer.cancel() }
        #expect(await KV.eventually { observed.all == ["before"] })

        let meeting = Meeting()
        async let first: Void = persistence.perform {
            try values.set("a", for: shared)
            try values.set(1, for: own["a"]!)
            await meeting.meet("a")
        }
        async let second: Void = persistence.perform {
            try values.set("b", for: shared)
            try values.set(2, for: own["b"]!)
            await meeting.meet("b")
        }
        try await first
        try await second

        // Neither conflicted: each body ran once.
        #expect(meeting.runs.withLock { $0 } == ["a": 1, "b": 1])
        let seen = try #require(await waitForCommits(2, in: events))
        #expect(seen.map(\.generation) == seen.map(\.generation).sorted())
        #expect(seen.map { Set($0.keys) }.allSatisfy { $0.count == 2 && $0.contains("c/shared") })
        let winner = seen.last!.keys.contains("c/a") ? "a" : "b"
        #expect(Set(seen.flatMap(\.keys)) == ["c/shared", "c/a", "c/b"])
        #expect(values[shared] == winner)
        #expect(values[own["a"]!] == 1 && values[own["b"]!] == 2)
        #expect(await KV.eventually { observed.all.last == winner }, "observed \(observed.all)")
        // A key's observer may skip a value (keepLatest), never go back to one.
        #expect(observed.all.first == "before" && observed.all.count <= 3)
        let reopened = try persistence.reopened()
        defer { reopened.close() }
        #expect(reopened.values[shared] == winner)
        #expect(reopened.values[own["a"]!] == 1 && reopened.values[own["b"]!] == 2)
    }

    /// Two transactions each read a counter and set it one higher, open at once: a read
    /// makes the set a read-write, so the later one conflicts and runs again alone, and
    /// the counter ends at 2 (serializable), not 1.
    @Test func aReadThenSetStillConflicts() async throws {
        let persistence = Persistence.inMemory(options: KV.options())
        defer { persistence.close() }
        let values = persistence.values
        let counter = ValueKey<Int>("c/counter", default: 0)
        let meeting = Meeting()
        async let first: Void = persistence.perform {
            try values.set(try values.value(for: counter) + 1, for: counter)
            await meeting.meet("a")
        }
        async let second: Void = persistence.perform {
            try values.set(try values.value(for: counter) + 1, for: counter)
            await meeting.meet("b")
        }
        try await first
        try await second
        #expect(values[counter] == 2)
        #expect(meeting.runs.withLock { $0.values.reduce(0, +) } == 3)
    }

    /// A set outside transactions of a key a transaction sets, made while the transaction
    /// and another one are open at once, loses to the transaction (ordered at its commit),
    /// and is readable until that commit is published.
    @Test(arguments: durabilities)
    func aSetOutsideLosesToBothTransactions(durability: FolioStorage.Durability) async throws {
        let persistence = Persistence.inMemory(options: KV.options(durability: durability))
        defer { persistence.close() }
        let values = persistence.values
        let key = ValueKey<String>("c/k", default: "")
        let meeting = Meeting()
        async let first: Void = persistence.perform {
            try values.set("a", for: key)
            await meeting.meet("a")
        }
        async let second: Void = persistence.perform {
            try values.set("b", for: key)
            if !(await KV.eventually { meeting.arrived.load(ordering: .acquiring) >= 1 }) {
                Issue.record("the first transaction never began")
            }
            // Outside any transaction: a detached task does not inherit this one.
            try await Task.detached { try values.set("outside", for: key) }.value
            await meeting.meet("b")
        }
        try await first
        try await second
        let final = values[key]
        #expect(["a", "b"].contains(final))
        try await values.flush()
        let reopened = try persistence.reopened()
        defer { reopened.close() }
        #expect(reopened.values[key] == final)
    }

    private func waitForCommits(_ count: Int, in events: Events) async -> [(generation: UInt64, keys: [String])]? {
        let arrived = await KV.eventually { events.seen.withLock { $0.count } >= count }
        return arrived ? events.seen.withLock { $0 } : nil
    }
}
