import Synchronization
@testable import Folio

/// The obvious LRU cache the memory cache is compared with: an array of entries, most
/// recently used first, searched linearly, with the documented rules written out plainly
/// (Docs/Cache.md).
struct ReferenceLRU {
    struct Entry: Equatable {
        var key: Int
        var value: Int
        var cost: Int
        var stamp: Int64
    }

    /// Most recently used first.
    private(set) var entries: [Entry] = []
    private(set) var limits: MemoryCacheLimits
    private(set) var statistics = MemoryCacheStatistics()

    init(limits: MemoryCacheLimits) { self.limits = limits }

    var keys: [Int] { entries.map(\.key) }
    var totalCost: Int { entries.reduce(0) { $0 + $1.cost } }

    private var ageNanoseconds: Int64? { limits.age.map(MemoryCacheLimits.nanoseconds) }

    /// Drops every entry idle for more than the age bound.
    private mutating func expire(_ now: Int64) {
        guard let age = ageNanoseconds else { return }
        let before = entries.count
        entries.removeAll { now - $0.stamp > age }
        statistics.evictions += before - entries.count
    }

    /// Drops the least recently used entries until the count and cost bounds hold.
    private mutating func evict() {
        while entries.count > (limits.count ?? .max) || totalCost > (limits.cost ?? .max) {
            entries.removeLast()
            statistics.evictions += 1
        }
    }

    mutating func value(forKey key: Int, now: Int64) -> Int? {
        expire(now)
        guard let index = entries.firstIndex(where: { $0.key == key }) else {
            statistics.misses += 1
            return nil
        }
        statistics.hits += 1
        var entry = entries.remove(at: index)
        entry.stamp = limits.age == nil ? 0 : now
        entries.insert(entry, at: 0)
        return entry.value
    }

    mutating func insert(_ value: Int, forKey key: Int, cost: Int, now: Int64) {
        expire(now)
        entries.removeAll { $0.key == key }
        if cost > (limits.cost ?? .max) || limits.count == 0 { return }
        entries.insert(Entry(key: key, value: value, cost: cost, stamp: limits.age == nil ? 0 : now), at: 0)
        evict()
    }

    mutating func removeValue(forKey key: Int) -> Int? {
        guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
        return entries.remove(at: index).value
    }

    mutating func removeAll(where shouldRemove: (Int, Int) -> Bool) {
        entries.removeAll { shouldRemove($0.key, $0.value) }
    }

    mutating func removeAll() { entries.removeAll() }

    mutating func setLimits(_ newLimits: MemoryCacheLimits, now: Int64) {
        if newLimits.age != nil, limits.age == nil {
            for index in entries.indices { entries[index].stamp = now }
        }
        limits = newLimits
        evict()
    }

    mutating func trim(now: Int64) {
        expire(now)
        evict()
    }
}

/// A clock tests move by hand.
final class ManualCacheClock: Sendable {
    private let nanoseconds = Atomic<Int64>(0)

    var now: Int64 { nanoseconds.load(ordering: .relaxed) }

    func advance(by step: Int64) { nanoseconds.add(step, ordering: .relaxed) }

    var clock: MemoryCacheClock { MemoryCacheClock { .nanoseconds(self.nanoseconds.load(ordering: .relaxed)) } }
}
