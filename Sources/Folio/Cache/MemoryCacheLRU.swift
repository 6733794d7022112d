/// One shard of a ``MemoryCache``: entries in least-recently-used order, with count, cost
/// and age bounds. Single-threaded; the cache keeps each inside its shard's lock.
///
/// The entries live in one array of nodes linked both ways by index (newest to oldest), with
/// a free list threading the unused nodes, and a dictionary from key to node index. So
/// reading, inserting and removing an entry cost one dictionary operation and a few array
/// writes, with no allocation per entry (the array grows to the most entries the shard has
/// held at once, and is released by ``removeAll()``).
struct MemoryCacheLRU<Key: Hashable, Value> {
    /// An entry, or (key and value `nil`) a free node whose `older` link is the next free one.
    private struct Node {
        var key: Key?
        var value: Value?
        var cost: Int
        /// When the entry was last inserted or read (clock nanoseconds); 0 while no age
        /// bound is set.
        var stamp: Int64
        /// Neighbours in the use order; -1 at either end.
        var newer: Int32
        var older: Int32
    }

    private var nodes: [Node] = []
    private var slots: [Key: Int32] = [:]
    private var newest: Int32 = -1
    private var oldest: Int32 = -1
    private var firstFree: Int32 = -1
    private(set) var totalCost = 0
    private(set) var limits: MemoryCacheLRULimits
    private(set) var statistics = MemoryCacheStatistics()

    init(limits: MemoryCacheLRULimits) {
        self.limits = limits
    }

    /// Entries held, expired ones not yet dropped included.
    var count: Int { slots.count }

    // MARK: Operations

    /// The value of `key`, which becomes the most recently used entry; `nil` if absent or
    /// expired. Drops the expired entries first. `now` is called only under an age bound.
    mutating func value(forKey key: Key, now: () -> Int64) -> Value? {
        var time: Int64 = 0
        if let age = limits.age {
            time = now()
            expire(olderThan: age, at: time)
        }
        guard let slot = slots[key] else {
            statistics.misses &+= 1
            return nil
        }
        statistics.hits &+= 1
        nodes[Int(slot)].stamp = time
        makeNewest(slot)
        return nodes[Int(slot)].value
    }

    /// Stores `value` for `key` as the most recently used entry, replacing any value it had,
    /// then evicts least recently used entries until the bounds hold. An entry that cannot
    /// fit on its own (cost above the cost bound, or a count bound of 0) is not stored, and
    /// the key's previous value is removed. Drops the expired entries first.
    mutating func insert(_ value: Value, forKey key: Key, cost: Int, now: () -> Int64) {
        precondition(cost >= 0, "negative cache cost")
        var time: Int64 = 0
        if let age = limits.age {
            time = now()
            expire(olderThan: age, at: time)
        }
        guard cost <= limits.cost, limits.count > 0 else {
            removeValue(forKey: key)
            return
        }
        // One hash of the key: the slot a new entry would take is known before the lookup,
        // and the defaulted subscript inserts it when the key is absent.
        let fresh = firstFree >= 0 ? firstFree : Int32(truncatingIfNeeded: nodes.count)
        precondition(nodes.count < Int32.max, "cache shard too large")
        let slot = Self.claim(&slots[key, default: -1], fresh)
        if slot >= 0 {
            let index = Int(slot)
            totalCost += cost - nodes[index].cost
            nodes[index].value = value
            nodes[index].cost = cost
            nodes[index].stamp = time
            makeNewest(slot)
        } else {
            let node = Node(key: key, value: value, cost: cost, stamp: time, newer: -1, older: newest)
            if fresh == firstFree {
                firstFree = nodes[Int(fresh)].older
                nodes[Int(fresh)] = node
            } else {
                nodes.append(node)
            }
            linkAsNewest(fresh)
            totalCost += cost
        }
        evictToBounds()
    }

    /// Removes `key`'s entry; returns its value.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let slot = slots.removeValue(forKey: key) else { return nil }
        return release(slot)
    }

    /// Removes every entry for which `shouldRemove` is true, oldest first.
    mutating func removeAll(where shouldRemove: (Key, Value) -> Bool) {
        var slot = oldest
        while slot >= 0 {
            let node = nodes[Int(slot)]
            let next = node.newer
            if let key = node.key, let value = node.value, shouldRemove(key, value) {
                slots.removeValue(forKey: key)
                release(slot)
            }
            slot = next
        }
    }

    /// Removes every entry and gives back the memory of the nodes (statistics stay).
    mutating func removeAll() {
        nodes = []
        slots = [:]
        newest = -1
        oldest = -1
        firstFree = -1
        totalCost = 0
    }

    /// Sets the bounds and evicts down to them. An age bound turned on starts every entry's
    /// age now (no time stamps are taken without one).
    mutating func setLimits(_ newLimits: MemoryCacheLRULimits, now: () -> Int64) {
        if newLimits.age != nil, limits.age == nil {
            let time = now()
            var slot = newest
            while slot >= 0 {
                nodes[Int(slot)].stamp = time
                slot = nodes[Int(slot)].older
            }
        }
        limits = newLimits
        evictToBounds()
    }

    /// Drops the entries older than the age bound at `time` (nanoseconds), then evicts down
    /// to the count and cost bounds.
    mutating func trim(at time: Int64?) {
        if let age = limits.age, let time { expire(olderThan: age, at: time) }
        evictToBounds()
    }

    // MARK: List

    /// Stores `fresh` in `slot` if it holds no node yet (-1); returns what it held.
    private static func claim(_ slot: inout Int32, _ fresh: Int32) -> Int32 {
        let held = slot
        if held < 0 { slot = fresh }
        return held
    }

    private mutating func evictToBounds() {
        while slots.count > limits.count || totalCost > limits.cost, oldest >= 0 {
            evictOldest()
        }
    }

    /// Drops entries unused for more than `age` nanoseconds at `time`: they are the oldest
    /// ones, since reads and inserts stamp the entry they make newest.
    private mutating func expire(olderThan age: Int64, at time: Int64) {
        while oldest >= 0, time &- nodes[Int(oldest)].stamp > age {
            evictOldest()
        }
    }

    private mutating func evictOldest() {
        let slot = oldest
        if let key = nodes[Int(slot)].key { slots.removeValue(forKey: key) }
        release(slot)
        statistics.evictions &+= 1
    }

    /// Unlinks node `slot` (already out of `slots`), frees it and returns its value.
    @discardableResult
    private mutating func release(_ slot: Int32) -> Value? {
        unlink(slot)
        let index = Int(slot)
        totalCost -= nodes[index].cost
        let value = nodes[index].value
        nodes[index] = Node(key: nil, value: nil, cost: 0, stamp: 0, newer: -1, older: firstFree)
        firstFree = slot
        return value
    }

    private mutating func makeNewest(_ slot: Int32) {
        guard slot != newest else { return }
        unlink(slot)
        linkAsNewest(slot)
    }

    private mutating func unlink(_ slot: Int32) {
        let index = Int(slot)
        let newer = nodes[index].newer, older = nodes[index].older
        if newer >= 0 { nodes[Int(newer)].older = older } else { newest = older }
        if older >= 0 { nodes[Int(older)].newer = newer } else { oldest = newer }
    }

    private mutating func linkAsNewest(_ slot: Int32) {
        let index = Int(slot)
        nodes[index].newer = -1
        nodes[index].older = newest
        if newest >= 0 { nodes[Int(newest)].newer = slot } else { oldest = slot }
        newest = slot
    }

    // MARK: Checks (tests)

    /// The keys from most to least recently used.
    var keysByRecency: [Key] {
        var keys: [Key] = []
        var slot = newest
        while slot >= 0 {
            if let key = nodes[Int(slot)].key { keys.append(key) }
            slot = nodes[Int(slot)].older
        }
        return keys
    }

    /// What is wrong with the structure (empty if nothing): links both ways, the dictionary,
    /// the free list, the total cost, the count and cost bounds.
    var invariantViolations: [String] {
        var problems: [String] = []
        var seen = 0, cost = 0, slot = newest, previous: Int32 = -1
        while slot >= 0, seen <= nodes.count {
            let node = nodes[Int(slot)]
            if node.newer != previous { problems.append("node \(slot): newer \(node.newer), expected \(previous)") }
            if let key = node.key {
                if slots[key] != slot {
                    problems.append("node \(slot): dictionary has \(String(describing: slots[key]))")
                }
            } else {
                problems.append("node \(slot): linked without a key")
            }
            if node.value == nil { problems.append("node \(slot): linked without a value") }
            seen += 1
            cost += node.cost
            previous = slot
            slot = node.older
        }
        if previous != oldest { problems.append("oldest \(oldest), list ends at \(previous)") }
        if seen != slots.count { problems.append("\(seen) linked nodes, \(slots.count) keys") }
        if cost != totalCost { problems.append("cost \(cost) linked, totalCost \(totalCost)") }
        var free = 0
        slot = firstFree
        while slot >= 0, free <= nodes.count {
            if nodes[Int(slot)].key != nil { problems.append("free node \(slot) has a key") }
            free += 1
            slot = nodes[Int(slot)].older
        }
        if free + seen != nodes.count { problems.append("\(free) free + \(seen) live nodes of \(nodes.count)") }
        if slots.count > limits.count { problems.append("\(slots.count) entries above the bound \(limits.count)") }
        if totalCost > limits.cost { problems.append("cost \(totalCost) above the bound \(limits.cost)") }
        return problems
    }
}
