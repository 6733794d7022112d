import FolioStorage

// The cache of committed values: a `RecordCache` over the key-value tree, whose exactness
// argument (Docs/Cache.md §7.1) holds unchanged for it.

extension KeyValueMemory {
    /// The committed value of `key` as of `view`: from the cache, or read from the view
    /// (and then cached).
    func committed(_ key: [UInt8], in view: ReadView) throws(FolioError) -> ValueSlot {
        let generation = view.generation
        // A past generation's value is read from the store: the cache serves and learns the
        // newest generations only (its catch-up to an older one would keep old values).
        if view.isPast {
            return ValueSlot(
                bytes: try FolioError.wrap { () throws(StorageError) in try view.get(key, in: KeyValueLayout.tree) },
                decoded: nil, type: nil)
        }
        if let cache,
            let slot: ValueSlot = cache.instance(
                key, in: KeyValueLayout.tree, generation: generation, format: Self.slotFormat)
        {
            return slot
        }
        let bytes = try FolioError.wrap { () throws(StorageError) in try view.get(key, in: KeyValueLayout.tree) }
        let slot = ValueSlot(bytes: bytes, decoded: nil, type: nil)
        cache?.insert(
            slot, key, in: KeyValueLayout.tree, generation: generation, bytes: slot.cost + key.count,
            format: Self.slotFormat)
        return slot
    }

    /// The cached committed value of `name` as of `generation`, if any.
    func cached(_ key: [UInt8], generation: UInt64) -> ValueSlot? {
        cache?.instance(key, in: KeyValueLayout.tree, generation: generation, format: Self.slotFormat)
    }

    /// Keeps a decoded value beside its bytes in the cache, so the next read of the same
    /// type does not decode (only if the cache is still at `generation`).
    func rememberDecoded<Value: Sendable>(_ value: Value, of slot: ValueSlot, key: [UInt8], generation: UInt64) {
        guard let cache, let bytes = slot.bytes, !(Value.self is AnyObject.Type) else { return }
        let decoded = ValueSlot(bytes: bytes, decoded: value)
        cache.insert(
            decoded, key, in: KeyValueLayout.tree, generation: generation, bytes: decoded.cost + key.count,
            format: Self.slotFormat)
    }

    /// Every slot is cached under one format: the slot itself says which type it decoded.
    static let slotFormat = ObjectIdentifier(ValueSlot.self)
}
