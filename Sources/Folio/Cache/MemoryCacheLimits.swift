/// The bounds of a ``MemoryCache``: how many entries, how much total cost, and how long an
/// entry may sit unused (Docs/Cache.md).
///
/// `nil` turns a bound off. A bound of 0 is a real bound: a count or cost of 0 holds
/// nothing (every insert is refused), an age of 0 drops an entry at the first access of its
/// shard one clock tick after it was last used. Negative bounds are a programming error.
struct MemoryCacheLimits: Sendable, Equatable {
    /// The most entries held; `nil`: no bound.
    var count: Int?
    /// The most total cost held (the sum of the costs given to `insert`; bytes by the
    /// caller's convention); `nil`: no bound.
    var cost: Int?
    /// How long an entry stays after it was last inserted or read (idle time, not time since
    /// the first insert); `nil`: no bound.
    var age: Duration?

    init(count: Int? = nil, cost: Int? = nil, age: Duration? = nil) {
        precondition((count ?? 0) >= 0 && (cost ?? 0) >= 0 && (age ?? .zero) >= .zero, "negative cache limit")
        self.count = count
        self.cost = cost
        self.age = age
    }

    /// No bound at all: the cache grows until entries are removed.
    static let unbounded = MemoryCacheLimits()

    /// The share of shard `index` of `shardCount`: count and cost divided evenly, the
    /// remainder spread over the first shards, so the shares add up to the whole bound and
    /// the cache as a whole never holds more than it. The age bound is not divided.
    func share(ofShard index: Int, of shardCount: Int) -> MemoryCacheLRULimits {
        func divide(_ bound: Int?) -> Int {
            guard let bound else { return .max }
            return bound / shardCount + (index < bound % shardCount ? 1 : 0)
        }
        return MemoryCacheLRULimits(count: divide(count), cost: divide(cost), age: age.map(Self.nanoseconds))
    }

    /// `duration` in whole nanoseconds, saturated at `Int64.max` (about 292 years).
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? .max : total
    }
}

/// The bounds of one shard, in the form its operations test cheaply: `Int.max` for "no
/// bound", the age in nanoseconds.
struct MemoryCacheLRULimits: Sendable, Equatable {
    var count: Int = .max
    var cost: Int = .max
    /// Nanoseconds; `nil`: entries never expire.
    var age: Int64?
}

/// What a ``MemoryCache`` has counted since it was made (``MemoryCache/removeAll()`` keeps
/// the counts).
struct MemoryCacheStatistics: Sendable, Equatable {
    /// Reads that found their key.
    var hits = 0
    /// Reads that did not (including keys whose entry had expired).
    var misses = 0
    /// Entries dropped to keep within the limits: least recently used ones pushed out by
    /// the count or cost bound, and expired ones. Explicit removals, replaced values and
    /// refused inserts are not evictions.
    var evictions = 0

    static func + (a: Self, b: Self) -> Self {
        Self(hits: a.hits + b.hits, misses: a.misses + b.misses, evictions: a.evictions + b.evictions)
    }
}

/// The monotonic time a ``MemoryCache`` measures ages with: time since an arbitrary origin.
/// Tests inject a clock they advance by hand.
struct MemoryCacheClock: Sendable {
    /// The current time, since the clock's origin; must never go backwards.
    let now: @Sendable () -> Duration

    init(now: @escaping @Sendable () -> Duration) { self.now = now }

    /// `ContinuousClock`: monotonic, and it keeps counting while the machine sleeps, so an
    /// entry's age is the wall time it sat unused.
    static let continuous: MemoryCacheClock = {
        let origin = ContinuousClock.now
        return MemoryCacheClock { ContinuousClock.now - origin }
    }()

    /// ``now`` in nanoseconds (the shards' time stamps).
    var nanoseconds: Int64 { MemoryCacheLimits.nanoseconds(now()) }
}
