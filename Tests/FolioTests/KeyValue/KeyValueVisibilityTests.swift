import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage

/// What this process has set is what every later read of it sees, whichever path answers:
/// a `read { }` begun after a set, a prefix listing while background commits publish, and a
/// reopen right after sets (close commits them). Each check is repeated, since the window
/// it probes (a background commit publishing) is short.
@Suite struct KeyValueVisibilityTests {
    /// `set` returns, then `read { }` begins: the snapshot must include the set (the
    /// documented "a read sees every value this process set before it", and the reads
    /// outside right before and after do). It fails every run if `Persistence.read` takes
    /// `core.store.read()` and `KeyValueStore.slot(named:)` answers a `.read(view)` context
    /// from `memory.committed(_:key:in:)` only, never from `memory.pendingWrite`.
    @Test(arguments: [FolioStorage.Durability.full, .grouped(window: .milliseconds(5))])
    func aReadScopeBegunAfterASetSeesIt(durability: FolioStorage.Durability) async throws {
        let persistence = Persistence.inMemory(options: KV.options(durability: durability))
        defer { persistence.close() }
        let values = persistence.values
        let key = ValueKey<Int>("v/read", default: 0)
        var stale: [String] = []
        for n in 1...(KV.isLong ? 2_000 : 100) {
            try values.set(n, for: key)
            let outside = values[key]
            let inside = try await persistence.read { values[key] }
            if inside != n, stale.count < 5 { stale.append("set \(n), read outside \(outside), read { } \(inside)") }
        }
        #expect(stale.isEmpty, "read { } did not see sets made before it began: \(stale)")
    }

    /// One task sets new keys and removes old ones; after each call returns, the listing
    /// includes every key set so far and none removed, while the background commits that
    /// take those writes publish concurrently. It fails most runs if `keys(withPrefix:)`
    /// scans a store view first and reads `memory.pendingWrites` after: a batch published in
    /// between (its writes leave `writes`) is then in neither.
    @Test(arguments: [FolioStorage.Durability.full, .grouped(window: .milliseconds(1))])
    func keysByPrefixNeverMissASetOrShowARemovalWhileCommitsPublish(durability: FolioStorage.Durability) async throws {
        let persistence = Persistence.inMemory(options: KV.options(durability: durability))
        defer { persistence.close() }
        let values = persistence.values
        // Enough committed keys that a listing takes a while to scan.
        for i in 0..<1_000 { try values.set(i, for: ValueKey<Int>("l/base/\(i)", default: 0)) }
        try await values.flush()
        var present = Set((0..<1_000).map { "l/base/\($0)" })
        var problems: [String] = []
        let rounds = KV.isLong ? 2_000 : 120
        for n in 0..<rounds where problems.count < 5 {
            let name = "l/new/\(n)"
            try values.set(n, for: ValueKey<Int>(name, default: 0))
            present.insert(name)
            if n % 3 == 0 {
                let removed = "l/base/\(n % 1_000)"
                try values.removeValue(for: ValueKey<Int>(removed, default: 0))
                present.remove(removed)
            }
            let listed = Set(try values.keys(withPrefix: "l/"))
            if listed != present {
                problems.append(
                    "after step \(n): missing \(present.subtracting(listed).sorted()), extra \(listed.subtracting(present).sorted())"
                )
            }
            if n % 50 == 0 { await Task.yield() }
        }
        #expect(problems.isEmpty, "\(problems)")
    }

    /// Sets, then at once a reopen (no flush): close commits what is queued, so the reopened
    /// store has every value, also when the persistence's own background commit holds the
    /// writer at the moment of close (it is not a transaction of the caller's). It fails most
    /// runs if close gives up when its `writer.tryAcquire()` fails while a background
    /// `commitInBackground` holds the slot: close then commits nothing, closes the store, and
    /// the background commit fails on the closed store, so the sets are lost silently.
    @Test func reopeningRightAfterSetsKeepsThemAll() async throws {
        let path = KV.temporaryPath("reopen")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var persistence = try Persistence(at: path, options: KV.options(durability: .grouped(window: .milliseconds(1))))
        defer { persistence.close() }
        let keys = (0..<4).map { ValueKey<Int>("r/\($0)", default: -1) }
        var lost: [String] = []
        for round in 0..<(KV.isLong ? 1_000 : 150) where lost.count < 5 {
            for (i, key) in keys.enumerated() {
                try persistence.values.set(round * 10 + i, for: key)
                if round % 2 == 0 { await Task.yield() }  // let the background commit start
            }
            persistence = try persistence.reopened()
            for (i, key) in keys.enumerated() where persistence.values[key] != round * 10 + i {
                lost.append(
                    "round \(round): \(key.name) is \(persistence.values[key]) after reopen, set \(round * 10 + i)")
            }
        }
        #expect(lost.isEmpty, "\(lost)")
    }
}
