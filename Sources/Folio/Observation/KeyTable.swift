/// A fixed set of keys for many membership tests, each with the key's hash computed once
/// beforehand (``hash(_:)``): open addressing over the hashes, so a test costs a probe or two
/// and compares bytes only when the hashes match. A live query keeps its results' hashes,
/// so matching a commit's changes against them hashes nothing per result.
struct KeyTable {
    private let keys: [[UInt8]]
    /// Per slot: the position in `keys` plus one (0: empty).
    private var slots: [Int32]
    private var slotHashes: [Int]
    private let mask: Int

    /// The hash ``contains(_:hash:)`` expects: one call over the key's bytes.
    static func hash(_ key: [UInt8]) -> Int {
        var hasher = Hasher()
        key.withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize()
    }

    init(_ keys: [[UInt8]]) {
        self.init(keys, hashes: keys.map(Self.hash))
    }

    /// A table of `keys` whose ``hash(_:)`` hashes, in the same order, are `hashes`.
    init(_ keys: [[UInt8]], hashes: [Int]) {
        self.keys = keys
        // At most half full, so a miss ends after a probe or two.
        var capacity = 8
        while capacity < keys.count * 2 { capacity *= 2 }
        mask = capacity - 1
        slots = Array(repeating: 0, count: capacity)
        slotHashes = Array(repeating: 0, count: capacity)
        for (position, hash) in hashes.enumerated() {
            var slot = hash & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(position + 1)
            slotHashes[slot] = hash
        }
    }

    var isEmpty: Bool { keys.isEmpty }

    func contains(_ key: [UInt8]) -> Bool {
        contains(key, hash: Self.hash(key))
    }

    /// Whether `key`, whose ``hash(_:)`` is `hash`, is in the table.
    func contains(_ key: [UInt8], hash: Int) -> Bool {
        var slot = hash & mask
        while slots[slot] != 0 {
            if slotHashes[slot] == hash && keys[Int(slots[slot]) - 1] == key { return true }
            slot = (slot + 1) & mask
        }
        return false
    }
}
