/// The critical section the `locks` suite puts under each lock: the same work as one shard
/// of Folio's memory cache (`Sources/Folio/Cache/MemoryCacheLRU.swift`, internal to Folio,
/// so not callable from here) does under its lock: a dictionary from key to node index and
/// a doubly linked use order over an array of nodes. A read looks up its key and moves the
/// node to the front; an insert of an absent key at capacity reuses the least recently used
/// node. Fixed capacity, no cost or age bookkeeping (a few more integer writes in Folio).
struct BenchLRU: Sendable {
    private var slots: [Int: Int32] = [:]
    private var keys: [Int] = []
    private var values: [Int] = []
    private var newer: [Int32] = []
    private var older: [Int32] = []
    private var newest: Int32 = -1
    private var oldest: Int32 = -1
    let capacity: Int

    /// An LRU of `capacity` entries holding keys 0..<capacity (value = key).
    init(filledTo capacity: Int) {
        self.capacity = capacity
        slots.reserveCapacity(capacity)
        for key in 0..<capacity { insert(key, forKey: key) }
    }

    /// The value of `key`, now the most recently used entry.
    mutating func value(forKey key: Int) -> Int? {
        guard let slot = slots[key] else { return nil }
        makeNewest(slot)
        return values[Int(slot)]
    }

    /// The value of `key`, leaving the use order alone (what a shared, read-only lock allows).
    func peek(_ key: Int) -> Int? {
        guard let slot = slots[key] else { return nil }
        return values[Int(slot)]
    }

    /// Stores `value` for `key` as the most recently used entry; at capacity an absent key
    /// takes the least recently used entry's node.
    mutating func insert(_ value: Int, forKey key: Int) {
        if let slot = slots[key] {
            values[Int(slot)] = value
            makeNewest(slot)
            return
        }
        let slot: Int32
        if keys.count < capacity {
            slot = Int32(keys.count)
            keys.append(key)
            values.append(value)
            newer.append(-1)
            older.append(-1)
        } else {
            slot = oldest
            slots.removeValue(forKey: keys[Int(slot)])
            unlink(slot)
            keys[Int(slot)] = key
            values[Int(slot)] = value
        }
        slots[key] = slot
        link(slot)
    }

    private mutating func makeNewest(_ slot: Int32) {
        guard slot != newest else { return }
        unlink(slot)
        link(slot)
    }

    private mutating func unlink(_ slot: Int32) {
        let n = newer[Int(slot)], o = older[Int(slot)]
        if n >= 0 { older[Int(n)] = o } else { newest = o }
        if o >= 0 { newer[Int(o)] = n } else { oldest = n }
    }

    private mutating func link(_ slot: Int32) {
        newer[Int(slot)] = -1
        older[Int(slot)] = newest
        if newest >= 0 { newer[Int(newest)] = slot } else { oldest = slot }
        newest = slot
    }
}
