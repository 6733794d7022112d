import Testing
@testable import Folio

/// Age bounds with an injected clock: ages count from the last insert or read, expired
/// entries go at the next access of their shard or at `trim`, and no test reads the wall clock.
@Suite struct MemoryCacheAgeTests {
    @Test func anEntryExpiresAfterItsIdleTime() {
        let time = ManualCacheClock()
        let cache = MemoryCache<String, Int>(
            limits: MemoryCacheLimits(age: .seconds(10)), shardCount: 1, clock: time.clock)
        cache.insert(1, forKey: "a")
        time.advance(by: 10_000_000_000)  // exactly 10 s idle: still there
        #expect(cache.value(forKey: "a") == 1)  // and the read restarts its age
        time.advance(by: 9_000_000_000)
        #expect(cache.value(forKey: "a") == 1)
        time.advance(by: 10_000_000_001)
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.count == 0)
        #expect(cache.statistics == MemoryCacheStatistics(hits: 2, misses: 1, evictions: 1))
    }

    /// Expired entries are dropped oldest first at the next operation on the shard, and
    /// `trim` drops them in every shard without reading anything.
    @Test func expiryIsLazyAndTrimDropsEverything() {
        let time = ManualCacheClock()
        let cache = MemoryCache<Int, Int>(
            limits: MemoryCacheLimits(age: .milliseconds(5)), shardCount: 4, clock: time.clock)
        for key in 0..<100 { cache.insert(key, forKey: key) }
        time.advance(by: 3_000_000)
        for key in 100..<150 { cache.insert(key, forKey: key) }
        time.advance(by: 3_000_000)  // the first 100 are 6 ms idle, the last 50 3 ms
        #expect(cache.count == 150)  // nothing dropped without an operation
        cache.trim()
        #expect(cache.count == 50)
        #expect(cache.statistics.evictions == 100)
        cache.trim(now: .milliseconds(100))
        #expect(cache.count == 0)
        #expect(cache.invariantViolations.isEmpty)
    }

    /// An age bound set on a full cache counts from when it is set, not from the inserts.
    @Test func anAgeBoundSetLaterStartsNow() {
        let time = ManualCacheClock()
        let cache = MemoryCache<Int, Int>(shardCount: 1, clock: time.clock)
        cache.insert(1, forKey: 1)
        time.advance(by: 1_000_000_000)
        cache.limits = MemoryCacheLimits(age: .milliseconds(500))
        #expect(cache.value(forKey: 1) == 1)
        time.advance(by: 600_000_000)
        #expect(cache.value(forKey: 1) == nil)
    }

    /// A zero age keeps an entry only while the clock has not moved.
    @Test func zeroAge() {
        let time = ManualCacheClock()
        let cache = MemoryCache<Int, Int>(limits: MemoryCacheLimits(age: .zero), shardCount: 1, clock: time.clock)
        cache.insert(7, forKey: 1)
        #expect(cache.value(forKey: 1) == 7)
        time.advance(by: 1)
        #expect(cache.value(forKey: 1) == nil)
    }
}
