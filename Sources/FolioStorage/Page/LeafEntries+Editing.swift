// Changing a leaf's entries in place: entries are appended to the buffer and the offset
// table points at them; bytes no entry uses are reclaimed once they outweigh the live ones.
extension LeafEntries {
    /// Entries `range` of `other`, in a buffer of their own that holds nothing else.
    init(_ other: LeafEntries, range: Range<Int>) {
        self.init()
        reserve(entries: range.count, bytes: other.entryBytes(in: range))
        append(contentsOf: other, range: range)
    }

    /// One entry.
    init(key: ArraySlice<UInt8>, value: LeafValue) {
        self.init()
        append(key: key, value: value)
    }

    /// The entries `keys[i]: values[i]`; `keys` strictly ascending.
    init(keys: [ArraySlice<UInt8>], values: [LeafValue]) {
        self.init()
        for index in keys.indices { append(key: keys[index], value: values[index]) }
    }

    /// Makes room for `entries` more entries of `bytes` bytes in all.
    mutating func reserve(entries: Int, bytes count: Int) {
        starts.reserveCapacity(starts.count + entries)
        bytes.reserveCapacity(bytes.count + count)
    }

    /// Bytes of entries `range`.
    func entryBytes(in range: Range<Int>) -> Int {
        bytes.withUnsafeBytes { raw in range.reduce(0) { $0 + Self.entrySize(in: raw, at: Int(starts[$1])) } }
    }

    /// Adds an entry after the last one; `key` must sort after every key already here.
    mutating func append(key: ArraySlice<UInt8>, value: LeafValue) {
        starts.append(writeEntry(key: .given(key), value: value))
    }

    /// Adds entry `index` of `other` after the last one; its key must sort after every key
    /// already here.
    mutating func append(entry index: Int, of other: LeafEntries) {
        append(contentsOf: other, range: index..<(index + 1))
    }

    /// Adds entries `range` of `other` after the last one, their bytes copied as they are;
    /// their keys must sort after every key already here.
    mutating func append(contentsOf other: LeafEntries, range: Range<Int>) {
        guard !range.isEmpty else { return }
        other.bytes.withUnsafeBytes { source in
            for index in range {
                let from = Int(other.starts[index])
                let size = Self.entrySize(in: source, at: from)
                let at = grow(by: size)
                bytes.withUnsafeMutableBytes { target in
                    target.baseAddress!.advanced(by: at).copyMemory(from: source.baseAddress! + from, byteCount: size)
                }
                if source[from + 2] == Self.pendingKind {
                    // The value moves to this buffer's list; the entry names its new place.
                    let keyCount = Int(
                        UInt16(littleEndian: source.loadUnaligned(fromByteOffset: from, as: UInt16.self)))
                    let pending = Int(
                        UInt64(littleEndian: source.loadUnaligned(fromByteOffset: from + 3 + keyCount, as: UInt64.self))
                    )
                    pendingValues.append(other.pendingValues[pending])
                    let place = UInt64(pendingValues.count - 1)
                    bytes.withUnsafeMutableBytes {
                        $0.storeBytes(of: place.littleEndian, toByteOffset: at + 3 + keyCount, as: UInt64.self)
                    }
                }
                starts.append(UInt32(at))
                entryBytes += size
            }
        }
    }

    /// Puts a new entry at `index` (its key sorts between entries `index - 1` and `index`).
    mutating func insert(key: ArraySlice<UInt8>, value: LeafValue, at index: Int) {
        starts.insert(writeEntry(key: .given(key), value: value), at: index)
        // Inserts and removals in turn grow the buffer as replacements do.
        compactIfWasteful()
    }

    /// Gives entry `index` a new value; returns the value it had.
    ///
    /// The entry is written anew at the end of the buffer and the old one left unused, so
    /// the value returned is read from bytes nothing writes over: it stays valid without a
    /// copy. (Held by the caller, that slice shares the buffer, so the next edit copies the
    /// buffer if the slice is still alive then.)
    mutating func replaceValue(at index: Int, with value: LeafValue) -> LeafValue {
        let old = Int(starts[index])
        let oldSize = entrySize(index)
        // The key is copied from the old entry inside the buffer: a slice of it held across
        // the write would make the buffer shared, and the write would copy all of it.
        let keyCount = bytes.withUnsafeBytes {
            Int(UInt16(littleEndian: $0.loadUnaligned(fromByteOffset: old, as: UInt16.self)))
        }
        starts[index] = writeEntry(key: .own(start: old + 3, count: keyCount), value: value)
        entryBytes -= oldSize
        let previous = self.value(atStart: old)
        releasePending(ofEntryAt: old)
        compactIfWasteful()
        return previous
    }

    /// Removes entry `index`; returns its value. Only the table changes (and a pending
    /// value's storage is let go).
    mutating func remove(at index: Int) -> LeafValue {
        let start = Int(starts[index])
        let removed = value(index)
        entryBytes -= entrySize(index)
        starts.remove(at: index)
        releasePending(ofEntryAt: start)
        return removed
    }

    /// Drops this buffer's reference to the pending value of the (no longer used) entry at
    /// `start`, if it has one: a value replaced or removed over and over would otherwise
    /// stay in memory until the next rewrite. The caller got the value already.
    private mutating func releasePending(ofEntryAt start: Int) {
        let place: Int? = bytes.withUnsafeBytes { raw in
            guard raw[start + 2] == Self.pendingKind else { return nil }
            let keyCount = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt16.self)))
            return Int(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: start + 3 + keyCount, as: UInt64.self)))
        }
        if let place { pendingValues[place] = [] }
    }

    /// Removes the entries from `index` on.
    mutating func removeSuffix(from index: Int) {
        entryBytes -= entryBytes(in: index..<count)
        starts.removeSubrange(index...)
        compactIfWasteful()
    }

    /// Rewrites the buffer with the live entries only, once unused bytes outweigh them (and
    /// a page's worth): bounds a leaf's memory at about twice its entries, at a cost
    /// proportional to the bytes written since the last rewrite.
    mutating func compactIfWasteful() {
        let unused = bytes.count - entryBytes
        guard unused > max(entryBytes, StorageLimits.splitPageSize) else { return }
        self = LeafEntries(self, range: 0..<count)
    }

    /// Where a new entry's key comes from.
    private enum KeySource {
        case given(ArraySlice<UInt8>)
        /// Bytes of this buffer (an entry's own key, written again with a new value).
        case own(start: Int, count: Int)

        var count: Int {
            switch self {
            case .given(let key): return key.count
            case .own(_, let count): return count
            }
        }
    }

    /// Writes an entry at the end of the buffer and counts it; returns where it starts.
    private mutating func writeEntry(key: KeySource, value: LeafValue) -> UInt32 {
        let size = Self.entrySize(keyCount: key.count, value: value)
        var pendingPlace: UInt64 = 0
        if case .pendingOverflow(let bytes) = value {
            pendingValues.append(bytes)
            pendingPlace = UInt64(pendingValues.count - 1)
        }
        let at = grow(by: size)
        bytes.withUnsafeMutableBytes { raw in
            var cursor = RawByteCursor(UnsafeMutableRawBufferPointer(rebasing: raw[at..<(at + size)]))
            cursor.write(UInt16(key.count))
            switch value {
            case .inline: cursor.write(Self.inlineKind)
            case .overflow: cursor.write(Self.overflowKind)
            case .pendingOverflow: cursor.write(Self.pendingKind)
            }
            switch key {
            case .given(let key): cursor.write(bytes: key)
            case .own(let start, let count):
                cursor.write(
                    raw: UnsafeRawBufferPointer(UnsafeMutableRawBufferPointer(rebasing: raw[start..<(start + count)])))
            }
            switch value {
            case .inline(let value):
                cursor.write(UInt32(value.count))
                cursor.write(bytes: value)
            case .overflow(let address):
                cursor.write(address.offset)
                cursor.write(address.length)
            case .pendingOverflow:
                cursor.write(pendingPlace)
                cursor.write(UInt32(0))
            }
        }
        entryBytes += size
        precondition(at <= Int(UInt32.max), "a leaf's buffer outgrew its 32-bit offset table")
        return UInt32(truncatingIfNeeded: at)
    }

    /// Adds `size` bytes at the end of the buffer (zeros, about to be written); returns
    /// where they start. In chunks of the shared zeros: an entry is far smaller than one
    /// (a page is at most 8 KiB), but a damaged page that passed its checksum could say
    /// otherwise, and must not make this read past them.
    private mutating func grow(by size: Int) -> Int {
        let at = bytes.count
        bytes.appendZeros(size)
        return at
    }
}
