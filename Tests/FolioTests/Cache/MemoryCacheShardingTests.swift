import Testing
import Synchronization
import FolioTestSupport
@testable import Folio

/// The sharded cache: bounds divided among shards are never exceeded, a hit returns the last
/// value inserted, and concurrent use from several tasks leaves a consistent structure.
@Suite struct MemoryCacheShardingTests {
    /// Counters the tasks of a test share.
    final class Tally: Sendable {
        /// Wrong values seen.
        let wrong = Atomic<Int>(0)
        /// Reads made.
        let reads = Atomic<Int>(0)
    }

    @Test func shardCounts() {
        #expect(MemoryCache<Int, Int>(shardCount: 5).shardCount == 8)
        #expect(MemoryCache<Int, Int>(shardCount: 1).shardCount == 1)
        #expect(MemoryCache<Int, Int>().shardCount == 8)
        #expect(MemoryCache<Int, Int>(limits: MemoryCacheLimits(count: 100)).shardCount == 1)
        #expect(MemoryCache<Int, Int>(limits: MemoryCacheLimits(count: 300)).shardCount == 4)
        // The shares add up to the bound.
        let limits = MemoryCacheLimits(count: 13, cost: 1001)
        let shares = (0..<8).map { limits.share(ofShard: $0, of: 8) }
        #expect(shares.reduce(0) { $0 + $1.count } == 13)
        #expect(shares.reduce(0) { $0 + $1.cost } == 1001)
    }

    /// Random operations on an 8-shard cache with random bounds: after every insert the
    /// count and cost are within the bounds, and reading the key back gives the value just
    /// inserted, always when the entry fits its shard's share.
    @Test func boundsHoldAndHitsReturnTheLastValue() {
        for seed in 0..<100 as Range<UInt64> {
            var rng = SplitMix64(seed: seed)
            let countBound = Int.random(in: 8...200, using: &rng), costBound = Int.random(in: 50...2000, using: &rng)
            let cache = MemoryCache<Int, Int>(
                limits: MemoryCacheLimits(count: countBound, cost: costBound), shardCount: 8)
            var last: [Int: Int] = [:]
            for step in 0..<500 {
                let key = Int.random(in: 0..<300, using: &rng)
                if Int.random(in: 0..<10, using: &rng) < 7 {
                    let value = Int.random(in: 0..<1_000_000, using: &rng), cost = Int.random(in: 0...60, using: &rng)
                    cache.insert(value, forKey: key, cost: cost)
                    last[key] = value
                    #expect(cache.count <= countBound && cache.totalCost <= costBound, "seed \(seed) step \(step)")
                    let got = cache.value(forKey: key)
                    if cost <= costBound / 8 && countBound / 8 >= 1 {
                        #expect(got == value, "seed \(seed) step \(step): a fitting entry must be there")
                    } else if let got {
                        #expect(got == value, "seed \(seed) step \(step)")
                    }
                } else if let got = cache.value(forKey: key) {
                    #expect(got == last[key], "seed \(seed) step \(step): stale value")
                }
            }
            #expect(cache.invariantViolations.isEmpty, "seed \(seed): \(cache.invariantViolations)")
        }
    }

    /// Four tasks hammer one cache. Each writes only its own keys (key % 4 == task), so a
    /// hit on its own key must return the last value it inserted or nothing after its
    /// removal, and any hit must carry its key; one task also changes the bounds and trims.
    /// At the end the structure is consistent, within the bounds, and hits plus misses equal
    /// the reads made.
    @Test func concurrentUseStaysConsistent() async {
        let cache = MemoryCache<Int, Int>(limits: MemoryCacheLimits(count: 600, cost: 40_000), shardCount: 8)
        let tally = Tally()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    var rng = SplitMix64(seed: UInt64(task) + 77)
                    var mine: [Int: Int] = [:]  // key → last value inserted; absent after removal
                    var version = 0, myReads = 0
                    for step in 0..<20_000 {
                        let key = Int.random(in: 0..<2_000, using: &rng)
                        let own = key % 4 == task
                        switch Int.random(in: 0..<100, using: &rng) {
                        case 0..<50:
                            myReads += 1
                            if let got = cache.value(forKey: key) {
                                if got / 1_000_000 != key || (own && got != mine[key]) {
                                    tally.wrong.add(1, ordering: .relaxed)
                                }
                            }
                        case 50..<90 where own:
                            version += 1
                            let value = key * 1_000_000 + version % 1_000_000
                            cache.insert(value, forKey: key, cost: Int.random(in: 0...200, using: &rng))
                            mine[key] = value
                        case 90..<95 where own:
                            let removed = cache.removeValue(forKey: key)
                            if let removed, removed != mine[key] { tally.wrong.add(1, ordering: .relaxed) }
                            mine[key] = nil
                        case 95..<97 where own:
                            let keys = [key, key + 4, key + 8].filter { $0 < 2_000 }
                            cache.removeValues(forKeys: keys)
                            for key in keys { mine[key] = nil }
                        case 97..<99 where task == 0:
                            cache.limits =
                                step % 2 == 0
                                ? MemoryCacheLimits(count: 300, cost: 20_000)
                                : MemoryCacheLimits(count: 600, cost: 40_000)
                        case 99:
                            cache.trim()
                        default:
                            break
                        }
                    }
                    tally.reads.add(myReads, ordering: .relaxed)
                }
            }
        }
        #expect(tally.wrong.load(ordering: .relaxed) == 0)
        #expect(cache.invariantViolations.isEmpty, "\(cache.invariantViolations)")
        let limits = cache.limits
        #expect(cache.count <= limits.count! && cache.totalCost <= limits.cost!)
        let statistics = cache.statistics
        #expect(statistics.hits + statistics.misses == tally.reads.load(ordering: .relaxed))
        #expect(statistics.hits > 0 && statistics.evictions > 0)
    }
}
