import FolioStorage

/// The key-value store (``Persistence/values``) as the store describes it, without the
/// values' Swift types.
@_spi(Engine) public struct KeyValueSummary: Sendable, Equatable {
    /// Number of keys with a stored value (0 if no value was ever set).
    public var keyCount: Int
    /// Bytes of the keys and their stored values together, as written (each value's layout
    /// byte included; Docs/Format.md §25).
    public var storedBytes: Int
    /// Bytes of the pages of the tree that holds them, overflow pages included (the tree
    /// descriptor's total, Docs/Format.md §9).
    public var pageBytes: Int
}

/// A value of the key-value store, without its Swift type.
@_spi(Engine) public struct InspectedValue: Sendable, Equatable {
    /// The key's name (its bytes read as UTF-8; invalid sequences replaced).
    public var key: String
    /// The value's JSON as stored (after the layout byte).
    public var json: [UInt8]
}

@_spi(Engine) extension StoreInspector {
    /// How many keys the key-value store holds and how many bytes they take (reads every
    /// entry to add up their lengths).
    public func keyValueSummary() throws(FolioError) -> KeyValueSummary {
        try FolioError.wrap { () throws(StorageError) in
            let view = try store.readNewest()
            var cursor = try view.cursor(in: KeyValueLayout.tree)
            var summary = KeyValueSummary(
                keyCount: 0, storedBytes: 0,
                pageBytes: Int(try view.descriptor(of: KeyValueLayout.tree)?.bytes ?? 0))
            while let item = try cursor.next() {
                summary.keyCount += 1
                summary.storedBytes += item.key.count + item.value.count
            }
            return summary
        }
    }

    /// Calls `body` with the values of the key-value store in the order of their keys'
    /// bytes, from the key `from` through `to` (both inclusive, compared as UTF-8 bytes), at
    /// most `limit` of them. `body` returns false to stop. Reads one snapshot. Throws
    /// ``FolioError/corruptRecord(datastore:detail:)`` (datastore `folio/values`) for a value
    /// not stored in layout 1 (Docs/Format.md §25); its JSON is not checked here.
    public func forEachValue(
        from: String? = nil, to: String? = nil, order: RangeOrder = .ascending,
        limit: Int? = nil, _ body: (InspectedValue) throws -> Bool
    ) throws {
        let view = try FolioError.wrap { () throws(StorageError) in try store.readNewest() }
        var range = KeyRange()
        if let from { range.lower = .included(Array(from.utf8)) }
        if let to { range.upper = .included(Array(to.utf8)) }
        var cursor = try FolioError.wrap { () throws(StorageError) in
            try view.cursor(in: KeyValueLayout.tree, range: range, direction: order.direction)
        }
        var remaining = limit ?? Int.max
        while remaining > 0, let item = try FolioError.wrap({ () throws(StorageError) in try cursor.next() }) {
            guard item.value.first == KeyValueLayout.layoutByte else {
                let layout = item.value.first.map { "layout \($0)" } ?? "no layout byte (empty)"
                throw FolioError.corruptRecord(
                    datastore: KeyValueLayout.tree,
                    detail: "the value of key \(KeyValueVerifier.name(item.key)) has \(layout), not 1")
            }
            let value = InspectedValue(
                key: String(decoding: item.key, as: UTF8.self), json: Array(item.value.dropFirst()))
            guard try body(value) else { return }
            remaining -= 1
        }
    }
}
