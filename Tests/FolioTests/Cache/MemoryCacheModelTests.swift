import Testing
import FolioTestSupport
@testable import Folio

/// The memory cache against ``ReferenceLRU`` over random operation sequences: with one shard
/// the eviction order is exact, so every result, the recency order, the total cost and the
/// statistics must match after every operation.
@Suite struct MemoryCacheModelTests {
    /// Random bounds: count and cost each off, 0, small or large; sometimes an age.
    static func randomLimits(_ rng: inout SplitMix64, age: Bool) -> MemoryCacheLimits {
        func bound(_ small: Int, _ large: Int) -> Int? {
            switch Int.random(in: 0..<8, using: &rng) {
            case 0, 1: return nil
            case 2: return 0
            case 3, 4, 5: return Int.random(in: 1...small, using: &rng)
            default: return Int.random(in: small...large, using: &rng)
            }
        }
        let ageBound: Duration? =
            age && Bool.random(using: &rng) ? .nanoseconds(Int.random(in: 0...200, using: &rng)) : nil
        return MemoryCacheLimits(count: bound(8, 60), cost: bound(60, 600), age: ageBound)
    }

    /// Runs `operations` random operations on a one-shard cache and on the reference,
    /// comparing everything after each; returns the first difference.
    static func compare(seed: UInt64, operations: Int, withAge: Bool) -> String? {
        var rng = SplitMix64(seed: seed)
        let clock = ManualCacheClock()
        let limits = randomLimits(&rng, age: withAge)
        let cache = MemoryCache<Int, Int>(limits: limits, shardCount: 1, clock: clock.clock)
        var model = ReferenceLRU(limits: limits)
        let keySpace = Int.random(in: 4...80, using: &rng)

        for step in 0..<operations {
            if withAge, Int.random(in: 0..<3, using: &rng) == 0 {
                clock.advance(by: Int64.random(in: 0...60, using: &rng))
            }
            let key = Int.random(in: 0..<keySpace, using: &rng)
            let now = clock.now
            var operation: String
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<40:
                let got = cache.value(forKey: key), expected = model.value(forKey: key, now: now)
                operation = "value(\(key))"
                if got != expected {
                    return
                        "step \(step) \(operation): \(String(describing: got)), expected \(String(describing: expected))"
                }
            case 40..<80:
                let value = Int.random(in: 0..<1_000_000, using: &rng), cost = Int.random(in: 0...40, using: &rng)
                cache.insert(value, forKey: key, cost: cost)
                model.insert(value, forKey: key, cost: cost, now: now)
                operation = "insert(\(value), \(key), cost \(cost))"
            case 80..<88:
                let got = cache.removeValue(forKey: key), expected = model.removeValue(forKey: key)
                operation = "removeValue(\(key))"
                if got != expected {
                    return
                        "step \(step) \(operation): \(String(describing: got)), expected \(String(describing: expected))"
                }
            case 88..<91:
                let keys = (0..<Int.random(in: 0...6, using: &rng)).map { _ in Int.random(in: 0..<keySpace, using: &rng)
                }
                cache.removeValues(forKeys: keys)
                for key in keys { _ = model.removeValue(forKey: key) }
                operation = "removeValues(\(keys))"
            case 91..<93:
                let modulus = Int.random(in: 2...5, using: &rng)
                cache.removeAll { _, value in value % modulus == 0 }
                model.removeAll { _, value in value % modulus == 0 }
                operation = "removeAll(where: value % \(modulus) == 0)"
            case 93:
                cache.removeAll()
                model.removeAll()
                operation = "removeAll()"
            case 94..<97:
                let newLimits = randomLimits(&rng, age: withAge)
                cache.limits = newLimits
                model.setLimits(newLimits, now: now)
                operation = "limits = \(newLimits)"
            default:
                cache.trim()
                model.trim(now: now)
                operation = "trim() at \(now)"
            }
            let keys = cache.keysByRecency[0]
            if keys != model.keys { return "step \(step) \(operation): keys \(keys), expected \(model.keys)" }
            if cache.totalCost != model.totalCost {
                return "step \(step) \(operation): cost \(cache.totalCost), expected \(model.totalCost)"
            }
            if cache.count != model.keys.count { return "step \(step) \(operation): count \(cache.count)" }
            if cache.statistics != model.statistics {
                return "step \(step) \(operation): statistics \(cache.statistics), expected \(model.statistics)"
            }
            if let problem = cache.invariantViolations.first { return "step \(step) \(operation): \(problem)" }
        }
        return nil
    }

    /// Count and cost bounds (no age): 300 random sequences of 400 operations.
    @Test func matchesTheReferenceWithCountAndCostBounds() {
        for seed in 0..<300 as Range<UInt64> {
            let difference = Self.compare(seed: seed, operations: 400, withAge: false)
            #expect(difference == nil, "seed \(seed): \(difference ?? "")")
            if difference != nil { return }
        }
    }

    /// The same with age bounds and a clock that moves forward between operations.
    @Test func matchesTheReferenceWithAges() {
        for seed in 1000..<1300 as Range<UInt64> {
            let difference = Self.compare(seed: seed, operations: 400, withAge: true)
            #expect(difference == nil, "seed \(seed): \(difference ?? "")")
            if difference != nil { return }
        }
    }

    /// The eviction order spelled out once: count bound 3, reads refresh.
    @Test func evictsTheLeastRecentlyUsed() {
        let cache = MemoryCache<String, Int>(limits: MemoryCacheLimits(count: 3), shardCount: 1)
        cache.insert(1, forKey: "a")
        cache.insert(2, forKey: "b")
        cache.insert(3, forKey: "c")
        #expect(cache.value(forKey: "a") == 1)  // a is now the most recent; b the least
        cache.insert(4, forKey: "d")
        #expect(cache.value(forKey: "b") == nil)
        #expect(cache.keysByRecency == [["d", "a", "c"]])
        #expect(cache.statistics == MemoryCacheStatistics(hits: 1, misses: 1, evictions: 1))
    }

    /// The cost bound: oldest entries go until the total fits; an entry above the whole
    /// bound is refused and takes its key's old value with it.
    @Test func costBound() {
        let cache = MemoryCache<Int, String>(limits: MemoryCacheLimits(cost: 100), shardCount: 1)
        cache.insert("a", forKey: 1, cost: 40)
        cache.insert("b", forKey: 2, cost: 40)
        cache.insert("c", forKey: 3, cost: 40)
        #expect(cache.keysByRecency == [[3, 2]])
        #expect(cache.totalCost == 80)
        cache.insert("C", forKey: 3, cost: 101)
        #expect(cache.keysByRecency == [[2]])
        #expect(cache.totalCost == 40)
        cache.insert("B", forKey: 2, cost: 10)  // replacing updates the cost
        #expect(cache.totalCost == 10)
        cache.limits = MemoryCacheLimits(cost: 5)  // lowering a bound evicts at once
        #expect(cache.count == 0 && cache.totalCost == 0)
    }
}
