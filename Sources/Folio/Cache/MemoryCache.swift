import Synchronization

/// A thread-safe in-memory cache with least-recently-used eviction and bounds on entry
/// count, total cost and idle age (Docs/Cache.md).
///
/// Entries are spread over a power-of-two number of shards by key hash; each shard is a
/// ``MemoryCacheLRU`` behind its own `Mutex` (the fastest lock measured here, Docs/Cache.md),
/// so threads touching different shards never wait for each other, and every operation on
/// one key holds one shard's lock for a dictionary operation and a few array writes. The
/// bounds are divided among the shards (``MemoryCacheLimits/share(ofShard:of:)``): the cache
/// never holds more than its bounds, but it evicts from a shard whose share is full even if
/// others have room, and an entry costing more than one shard's share of the cost bound is
/// not stored. Eviction is least recently used first within a shard; with one shard the
/// order is exact.
///
/// Ages are checked lazily: an operation on a shard first drops that shard's expired
/// entries (the oldest ones, so this costs nothing when none have expired), and ``trim()``
/// drops them everywhere. There are no timers.
final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// A shard's lock and entries. A class so the shards can sit in an array (a `Mutex`
    /// cannot be copied).
    private final class Shard: Sendable {
        let lru: Mutex<MemoryCacheLRU<Key, Value>>
        init(_ limits: MemoryCacheLRULimits) { lru = Mutex(MemoryCacheLRU(limits: limits)) }
    }

    private let shards: [Shard]
    /// Bits of the mixed hash below the shard number (`UInt.bitWidth` - log2 of the count).
    private let shardShift: Int
    /// The whole bounds, as last set. Held while the shards' shares change, so concurrent
    /// setters cannot leave shards with shares of different bounds (lock order: this, then
    /// a shard).
    private let wholeLimits: Mutex<MemoryCacheLimits>
    private let clock: MemoryCacheClock

    /// The number of shards, a power of two.
    var shardCount: Int { shards.count }

    /// A cache with `limits`, `shardCount` shards (rounded up to a power of two; default
    /// ``defaultShardCount(for:)``), measuring ages with `clock`.
    init(limits: MemoryCacheLimits = .unbounded, shardCount: Int? = nil, clock: MemoryCacheClock = .continuous) {
        let requested = shardCount ?? Self.defaultShardCount(for: limits)
        precondition(requested >= 1 && requested <= 1 << 16, "shard count out of range")
        var count = 1
        while count < requested { count <<= 1 }
        shards = (0..<count).map { Shard(limits.share(ofShard: $0, of: count)) }
        shardShift = UInt.bitWidth - count.trailingZeroBitCount
        wholeLimits = Mutex(limits)
        self.clock = clock
    }

    /// 8 shards (enough that two cores rarely meet on a lock; more only shrinks each
    /// shard's share of the bounds), halved while a count bound would give a shard fewer
    /// than 64 entries.
    static func defaultShardCount(for limits: MemoryCacheLimits) -> Int {
        var count = 8
        if let bound = limits.count {
            while count > 1, bound / count < 64 { count /= 2 }
        }
        return count
    }

    /// The bounds. Setting them divides them among the shards and evicts down to them at
    /// once; an age bound set where there was none counts ages from now.
    var limits: MemoryCacheLimits {
        get { wholeLimits.withLock { $0 } }
        set {
            let clock = clock, count = shards.count
            wholeLimits.withLock { whole in
                whole = newValue
                for (index, shard) in shards.enumerated() {
                    shard.lru.withLock {
                        $0.setLimits(newValue.share(ofShard: index, of: count), now: { clock.nanoseconds })
                    }
                }
            }
        }
    }

    // MARK: Entries

    /// The value cached for `key`, now the most recently used entry; `nil` if there is none
    /// or it has expired.
    func value(forKey key: Key) -> Value? {
        let clock = clock
        return shard(for: key).lru.withLock { $0.value(forKey: key, now: { clock.nanoseconds }) }
    }

    /// Caches `value` for `key` as the most recently used entry (replacing any value it
    /// had), with `cost` (≥ 0, bytes by convention) counted against the cost bound; then
    /// evicts least recently used entries of its shard until the bounds hold. An entry that
    /// cannot fit in its shard on its own is not cached, and the key's old value is removed.
    func insert(_ value: Value, forKey key: Key, cost: Int = 0) {
        let clock = clock
        shard(for: key).lru.withLock { $0.insert(value, forKey: key, cost: cost, now: { clock.nanoseconds }) }
    }

    /// ``insert(_:forKey:cost:)`` if `condition` holds, evaluated under the key's shard
    /// lock: an operation on the same key (a removal) is ordered either before the check or
    /// after the insert. The record cache inserts only if no newer generation has been seen
    /// (RecordCache.swift). `condition` must be quick and must not use the cache.
    func insert(_ value: Value, forKey key: Key, cost: Int = 0, if condition: () -> Bool) {
        let clock = clock
        shard(for: key).lru.withLock { lru in
            guard condition() else { return }
            lru.insert(value, forKey: key, cost: cost, now: { clock.nanoseconds })
        }
    }

    /// Removes the entry of `key`; returns its value.
    @discardableResult
    func removeValue(forKey key: Key) -> Value? {
        shard(for: key).lru.withLock { $0.removeValue(forKey: key) }
    }

    /// Removes the entries of `keys` (those present), taking each shard's lock once: what
    /// the record cache does with the identifiers a commit changed.
    func removeValues<Keys: Sequence<Key>>(forKeys keys: Keys) {
        if shards.count == 1 {
            shards[0].lru.withLock { lru in for key in keys { lru.removeValue(forKey: key) } }
            return
        }
        var byShard: [[Key]] = Array(repeating: [], count: shards.count)
        for key in keys { byShard[shardIndex(for: key)].append(key) }
        for (index, keys) in byShard.enumerated() where !keys.isEmpty {
            shards[index].lru.withLock { lru in for key in keys { lru.removeValue(forKey: key) } }
        }
    }

    /// Removes every entry for which `shouldRemove` is true. It runs under a shard's lock:
    /// it must be quick and must not use the cache (`@Sendable`: a closure of the calling task could
    /// not be run on state the lock hands out).
    func removeAll(where shouldRemove: @Sendable (Key, Value) -> Bool) {
        for shard in shards {
            shard.lru.withLock { $0.removeAll(where: shouldRemove) }
        }
    }

    /// Removes every entry (the statistics stay).
    func removeAll() {
        for shard in shards {
            shard.lru.withLock { $0.removeAll() }
        }
    }

    /// Entries held, counting expired ones no operation has dropped yet (``trim()`` first for
    /// live entries only). Each shard is read in turn, so under concurrent writes the sum is
    /// of moments close together, not of one instant.
    var count: Int { shards.reduce(0) { sum, shard in sum + shard.lru.withLock { $0.count } } }

    /// The sum of the costs of the entries held (as ``count``).
    var totalCost: Int { shards.reduce(0) { sum, shard in sum + shard.lru.withLock { $0.totalCost } } }

    /// Hits, misses and evictions so far, summed over the shards.
    var statistics: MemoryCacheStatistics {
        shards.reduce(MemoryCacheStatistics()) { sum, shard in sum + shard.lru.withLock { $0.statistics } }
    }

    // MARK: Trimming

    /// Drops every expired entry (ages at the clock's current time) and evicts down to the
    /// count and cost bounds.
    func trim() {
        trim(now: clock.now())
    }

    /// Drops the entries unused for more than the age bound at `now` (a time of the cache's
    /// clock), and evicts down to the count and cost bounds.
    func trim(now: Duration) {
        let time = MemoryCacheLimits.nanoseconds(now)
        for shard in shards {
            shard.lru.withLock { $0.trim(at: time) }
        }
    }

    /// Evicts least recently used entries down to the count and cost bounds, leaving ages
    /// alone. (Inserts and ``limits`` keep the bounds already; this is for symmetry with
    /// ``trim()``.)
    func trimToLimits() {
        for shard in shards {
            shard.lru.withLock { $0.trim(at: nil) }
        }
    }

    // MARK: Shards

    /// The shard of `key`: the top bits of its hash times a 64-bit odd constant (Fibonacci
    /// hashing), so shard choice does not follow the low bits the dictionaries inside use.
    private func shardIndex(for key: Key) -> Int {
        let mixed = UInt(bitPattern: key.hashValue) &* UInt(truncatingIfNeeded: 0x9E37_79B9_7F4A_7C15 as UInt64)
        return Int(truncatingIfNeeded: mixed >> UInt(shardShift))
    }

    private func shard(for key: Key) -> Shard { shards[shardIndex(for: key)] }

    /// Each shard's problems (tests): see ``MemoryCacheLRU/invariantViolations``.
    var invariantViolations: [String] {
        shards.enumerated().flatMap { index, shard in
            shard.lru.withLock { $0.invariantViolations }.map { "shard \(index): \($0)" }
        }
    }

    /// Keys from most to least recently used, shard by shard (tests; with one shard, the
    /// exact eviction order reversed).
    var keysByRecency: [[Key]] { shards.map { shard in shard.lru.withLock { $0.keysByRecency } } }
}
