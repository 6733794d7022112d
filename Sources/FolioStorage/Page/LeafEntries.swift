/// A leaf's entries as the bytes they are stored in, plus an offset table: the one
/// representation of a leaf, read from a page or changed by a transaction.
///
/// Each entry is laid out exactly as on a leaf page (Docs/Format.md §5): u16 key length,
/// u8 value kind, the key, then the value (kind 0: u32 length and the bytes; kind 1: the
/// u64 offset and u32 length of its overflow page). A leaf read from a file uses the page's
/// own array as ``bytes`` (read in place: no key or value is copied out), and its offset
/// table is the one thing decoding builds. Reading an entry costs no reference count: a
/// binary search compares keys inside one borrow of ``bytes``.
///
/// A transaction's leaf changes the same buffer (copy-on-write: a page shared with the
/// cache or a frozen node is copied on its first change): a new or replaced entry is
/// appended at the end of ``bytes`` and the table points at it; a removed entry only leaves
/// the table. The bytes no entry uses any more are reclaimed when they outweigh the live
/// ones (``compactIfWasteful()``). Encoding a page copies each entry's bytes as they are.
///
/// Kind 2 exists only in memory: a value longer than ``StorageLimits/inlineValueLimit``
/// that the transaction has not written yet. Its 12 bytes hold the index of the value in
/// ``pendingValues`` (u64) and zero (u32), the size of the overflow reference it becomes,
/// so an entry's size is the same before and after its value is written.
///
/// Its properties are set only by its own members (these files), which keep them consistent.
struct LeafEntries: Sendable {
    /// The entries' bytes, and unused bytes between them (a page's header, or entries
    /// replaced or removed since the buffer was made).
    var bytes: [UInt8]
    /// Where entry `i` starts in ``bytes``, in key order.
    var starts: [UInt32]
    /// Bytes of the entries the table names: the size of a page of them minus its header.
    var entryBytes: Int
    /// Values of kind 2 entries, by the index the entry holds.
    var pendingValues: [[UInt8]]

    /// Kind byte of an inline value.
    static let inlineKind: UInt8 = 0
    /// Kind byte of an overflow page reference.
    static let overflowKind: UInt8 = 1
    /// Kind byte of a value not yet written to its overflow page (memory only).
    static let pendingKind: UInt8 = 2

    /// No entries.
    init() {
        bytes = []
        starts = []
        entryBytes = 0
        pendingValues = []
    }

    /// The entries of a page whose structure has been checked (``TreePage``'s decoding):
    /// `bytes` is the page, `starts` where each entry begins in it.
    init(page bytes: [UInt8], starts: [UInt32], entryBytes: Int) {
        self.bytes = bytes
        self.starts = starts
        self.entryBytes = entryBytes
        pendingValues = []
    }

    /// Number of entries.
    var count: Int { starts.count }

    var isEmpty: Bool { starts.isEmpty }

    /// Bytes of an entry with a key of `keyCount` bytes and `value`: u16 key length, u8 value
    /// kind, the key, then the value (Docs/Format.md §5).
    @inline(__always)
    static func entrySize(keyCount: Int, value: LeafValue) -> Int { 3 + keyCount + value.encodedSize }

    // MARK: Reading

    /// Size of entry `index`, in bytes.
    @inline(__always)
    func entrySize(_ index: Int) -> Int {
        bytes.withUnsafeBytes { Self.entrySize(in: $0, at: Int(starts[index])) }
    }

    @inline(__always)
    static func entrySize(in raw: UnsafeRawBufferPointer, at start: Int) -> Int {
        let keyCount = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt16.self)))
        if raw[start + 2] == inlineKind {
            let valueCount = UInt32(
                littleEndian: raw.loadUnaligned(fromByteOffset: start + 3 + keyCount, as: UInt32.self))
            return 7 + keyCount + Int(valueCount)
        }
        return 15 + keyCount
    }

    /// The key of entry `index`: a slice of ``bytes`` (no copy).
    func key(_ index: Int) -> ArraySlice<UInt8> {
        let start = Int(starts[index])
        let keyCount = bytes.withUnsafeBytes {
            Int(UInt16(littleEndian: $0.loadUnaligned(fromByteOffset: start, as: UInt16.self)))
        }
        return bytes[(start + 3)..<(start + 3 + keyCount)]
    }

    /// The value of entry `index`: an inline value is a slice of ``bytes`` (no copy).
    func value(_ index: Int) -> LeafValue { value(atStart: Int(starts[index])) }

    /// The value of the entry that starts at `start` of ``bytes``.
    func value(atStart start: Int) -> LeafValue {
        let (kind, valueStart, first, second) = bytes.withUnsafeBytes { raw -> (UInt8, Int, UInt64, UInt32) in
            let keyCount = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt16.self)))
            let kind = raw[start + 2]
            let at = start + 3 + keyCount
            if kind == Self.inlineKind {
                return (kind, at + 4, 0, UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
            }
            return (
                kind, at, UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)),
                UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at + 8, as: UInt32.self))
            )
        }
        switch kind {
        case Self.inlineKind: return .inline(bytes[valueStart..<(valueStart + Int(second))])
        case Self.overflowKind: return .overflow(PageAddress(offset: first, length: second))
        default: return .pendingOverflow(pendingValues[Int(first)])
        }
    }

    /// Every key in order, as slices of ``bytes``: for checks, which read them all.
    var keys: [ArraySlice<UInt8>] { (0..<count).map(key) }

    /// Every value in order (see ``keys``).
    var values: [LeafValue] { (0..<count).map { value($0) } }

    /// The key of the first entry, if any.
    var firstKey: ArraySlice<UInt8>? { isEmpty ? nil : key(0) }

    /// The key of the last entry, if any.
    var lastKey: ArraySlice<UInt8>? { isEmpty ? nil : key(count - 1) }

    /// `key(index)` compared with `other`: negative, zero or positive as it sorts before,
    /// equal to or after it.
    @inline(__always)
    func compareKey(_ index: Int, with other: ArraySlice<UInt8>) -> Int {
        other.withUnsafeBytes { probe in
            bytes.withUnsafeBytes { Self.compareKey(in: $0, at: Int(starts[index]), probe) }
        }
    }

    @inline(__always)
    private static func compareKey(
        in raw: UnsafeRawBufferPointer, at start: Int, _ probe: UnsafeRawBufferPointer
    )
        -> Int
    {
        let keyCount = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt16.self)))
        return ByteOrder.compare(UnsafeRawBufferPointer(rebasing: raw[(start + 3)..<(start + 3 + keyCount)]), probe)
    }

    /// Index of the first key `>= key` (``count`` if none).
    func lowerBound(_ key: ArraySlice<UInt8>) -> Int { search(key, includingEqual: false) }

    /// Index of the first key `>= key` (``count`` if none).
    func lowerBound(_ key: [UInt8]) -> Int { search(key[...], includingEqual: false) }

    /// Index of the first key `> key` (``count`` if none).
    func upperBound(_ key: ArraySlice<UInt8>) -> Int { search(key, includingEqual: true) }

    /// The index of `key` if an entry has it.
    func index(of key: [UInt8]) -> Int? {
        let index = lowerBound(key)
        return index < count && compareKey(index, with: key[...]) == 0 ? index : nil
    }

    /// A binary search in one borrow of the bytes and the table: the first index whose key
    /// is above `key` (or at it, unless `includingEqual`).
    @inline(__always)
    private func search(_ key: ArraySlice<UInt8>, includingEqual: Bool) -> Int {
        key.withUnsafeBytes { probe in
            bytes.withUnsafeBytes { raw in
                starts.withUnsafeBufferPointer { table in
                    var low = 0, high = table.count
                    while low < high {
                        let mid = (low + high) >> 1
                        let order = Self.compareKey(in: raw, at: Int(table[mid]), probe)
                        if order < 0 || (includingEqual && order == 0) { low = mid + 1 } else { high = mid }
                    }
                    return low
                }
            }
        }
    }

    /// The entries' bytes summed from the table, which ``entryBytes`` must equal (the
    /// invariant checks compare them).
    func measuredEntryBytes() -> Int {
        bytes.withUnsafeBytes { raw in starts.reduce(0) { $0 + Self.entrySize(in: raw, at: Int($1)) } }
    }
}
