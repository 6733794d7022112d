/// One end of a ``KeyRange``, under the name earlier releases gave it: a bound on key bytes
/// is a `RangeBound<[UInt8]>`, the same type as a bound on values.
@available(*, deprecated, message: "use RangeBound<[UInt8]>, the same type")
public typealias KeyBound = RangeBound<[UInt8]>

/// A range of keys in byte order. Every range query of the store is one of these
/// (Docs/Architecture.md invariant 8: keys compare as bytes).
public struct KeyRange: Sendable, Equatable {
    /// Where the range starts.
    public var lower: RangeBound<[UInt8]>
    /// Where the range ends.
    public var upper: RangeBound<[UInt8]>

    /// The range from `lower` to `upper` (every key by default).
    public init(lower: RangeBound<[UInt8]> = .unbounded, upper: RangeBound<[UInt8]> = .unbounded) {
        self.lower = lower
        self.upper = upper
    }

    /// Every key.
    public static let all = KeyRange()

    /// Every key that starts with `prefix`.
    public static func prefix(_ prefix: [UInt8]) -> KeyRange {
        guard let upper = KeyBytes.prefixUpperBound(prefix) else { return KeyRange(lower: .included(prefix)) }
        return KeyRange(lower: .included(prefix), upper: .excluded(upper))
    }

    /// True if `key` is at or after the lower bound.
    public func isAboveLower(_ key: [UInt8]) -> Bool { isAboveLower(key[...]) }

    /// True if `key` is at or before the upper bound.
    public func isBelowUpper(_ key: [UInt8]) -> Bool { isBelowUpper(key[...]) }

    func isAboveLower(_ key: ArraySlice<UInt8>) -> Bool {
        switch lower {
        case .unbounded: return true
        case .included(let bound): return ByteOrder.compare(key, bound) >= 0
        case .excluded(let bound): return ByteOrder.compare(key, bound) > 0
        }
    }

    func isBelowUpper(_ key: ArraySlice<UInt8>) -> Bool {
        switch upper {
        case .unbounded: return true
        case .included(let bound): return ByteOrder.compare(key, bound) <= 0
        case .excluded(let bound): return ByteOrder.compare(key, bound) < 0
        }
    }

    /// True if `key` is in the range.
    public func contains(_ key: [UInt8]) -> Bool { isAboveLower(key) && isBelowUpper(key) }
}

/// Which way a cursor walks.
public enum ScanDirection: Sendable, Equatable {
    /// Ascending byte order.
    case forward
    /// Descending byte order.
    case reverse
}

/// Walks the keys of one tree inside a range, in either direction, fetching a leaf at a
/// time (one descent per leaf, not per key): a scan of any length holds one leaf and its
/// path (Docs/Architecture.md invariant 5, memory is bounded).
///
/// A cursor of a read view sees the view's generation. A cursor of a write transaction
/// sees the transaction's state when the cursor was made, its own writes until then
/// included; the transaction may go on writing (a ranged delete removes the keys it
/// walks) without changing what the cursor returns (Docs/Architecture.md, invariant 7).
public struct Cursor {
    /// A key and its value.
    public struct Entry: Sendable, Equatable {
        /// The key.
        public let key: [UInt8]
        /// Its value.
        public let value: [UInt8]
    }

    // Internal, not private: the ordered lookups of Cursor+OrderedLookup.swift reuse them.
    let fetch: (SeekTarget) throws(StorageError) -> LeafBatch?
    let resolveValue: (LeafValue) throws(StorageError) -> ArraySlice<UInt8>
    /// The range the cursor walks.
    public let range: KeyRange
    /// The direction the cursor walks.
    public let direction: ScanDirection
    var batch: LeafBatch?
    var nextTarget: SeekTarget?
    var finished = false
    /// How many times the cursor has descended the tree (one per leaf fetched): what tests
    /// check to see that a walk or a run of ordered lookups costs one descent per leaf.
    package internal(set) var descents = 0

    init(
        fetch: @escaping (SeekTarget) throws(StorageError) -> LeafBatch?,
        resolve: @escaping (LeafValue) throws(StorageError) -> ArraySlice<UInt8>,
        range: KeyRange, direction: ScanDirection
    ) {
        self.fetch = fetch
        self.resolveValue = resolve
        self.range = range
        self.direction = direction
        nextTarget = Self.start(of: range, direction)
    }

    init(reader: TreeReader, root: @escaping () -> NodeRef?, range: KeyRange, reverse: Bool) {
        self.init(
            fetch: { (target) throws(StorageError) in try reader.seek(root: root(), target) },
            resolve: { (value) throws(StorageError) in try reader.resolve(value) },
            range: range, direction: reverse ? .reverse : .forward)
    }

    private static func start(of range: KeyRange, _ direction: ScanDirection) -> SeekTarget {
        switch direction {
        case .forward:
            switch range.lower {
            case .unbounded: return .forward(from: [], inclusive: true)
            case .included(let key): return .forward(from: key[...], inclusive: true)
            case .excluded(let key): return .forward(from: key[...], inclusive: false)
            }
        case .reverse:
            switch range.upper {
            case .unbounded: return .backward(from: nil, inclusive: true)
            case .included(let key): return .backward(from: key[...], inclusive: true)
            case .excluded(let key): return .backward(from: key[...], inclusive: false)
            }
        }
    }

    /// The next key and value, or nil at the end of the range.
    public mutating func next() throws(StorageError) -> Entry? {
        guard let (key, value) = try advance() else { return nil }
        return Entry(key: Array(key), value: Array(try resolveValue(value)))
    }

    /// The next key and value as slices of the page that holds them (no copy; the slices
    /// keep the page's bytes alive), or nil at the end of the range: what the datastore
    /// layer reads records with.
    package mutating func nextSlices() throws(StorageError) -> (key: ArraySlice<UInt8>, value: ArraySlice<UInt8>)? {
        guard let (key, value) = try advance() else { return nil }
        return (key, try resolveValue(value))
    }

    /// The next key, without reading its value (no overflow page is read), or nil at the end.
    public mutating func nextKey() throws(StorageError) -> [UInt8]? {
        try advance().map { Array($0.0) }
    }

    /// The next key as a slice of its page (no copy), without reading its value.
    package mutating func nextKeySlice() throws(StorageError) -> ArraySlice<UInt8>? {
        try advance()?.0
    }

    /// Moves the cursor so that the next key it returns is the first at or after `key`
    /// (forward) or the last at or before `key` (reverse), still within its range.
    public mutating func seek(to key: [UInt8]) {
        batch = nil
        finished = false
        switch direction {
        case .forward:
            nextTarget =
                range.isAboveLower(key) ? .forward(from: key[...], inclusive: true) : Self.start(of: range, direction)
        case .reverse:
            nextTarget =
                range.isBelowUpper(key) ? .backward(from: key[...], inclusive: true) : Self.start(of: range, direction)
        }
    }

    private mutating func advance() throws(StorageError) -> (ArraySlice<UInt8>, LeafValue)? {
        if finished { return nil }
        if batch == nil {
            descents += 1
            guard let target = nextTarget, let fetched = try fetch(target) else {
                finished = true
                return nil
            }
            batch = fetched
        }
        guard let current = batch else { return nil }
        let key = current.entries.key(current.index)
        let value = current.entries.value(current.index)
        let inRange = direction == .forward ? range.isBelowUpper(key) : range.isAboveLower(key)
        guard inRange else {
            finished = true
            batch = nil
            return nil
        }
        let nextIndex = current.index + (direction == .forward ? 1 : -1)
        if nextIndex >= 0 && nextIndex < current.entries.count {
            batch!.index = nextIndex
        } else {
            batch = nil
            nextTarget = continuation(after: key)
        }
        return (key, value)
    }

    private func continuation(after key: ArraySlice<UInt8>) -> SeekTarget {
        direction == .forward ? .forward(from: key, inclusive: false) : .backward(from: key, inclusive: false)
    }
}
