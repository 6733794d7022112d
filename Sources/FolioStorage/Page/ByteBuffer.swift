/// Appends little-endian integers and byte strings to a growing buffer.
///
/// Every multi-byte integer in the format is little-endian (Docs/Format.md §1); keys are the
/// exception, since they are opaque byte strings compared with memcmp.
package struct ByteWriter {
    package var bytes: [UInt8]

    package init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    package var count: Int { bytes.count }

    package mutating func append(_ value: UInt8) { bytes.append(value) }

    package mutating func append(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    // Byte by byte rather than `append(contentsOf:)` of the value's bytes: that generic
    // append was the largest single cost of encoding a branch page (callgrind, a
    // single-record commit), where these inline to a store each.
    package mutating func append(_ value: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 24))
    }

    package mutating func append(_ value: UInt64) {
        append(UInt32(truncatingIfNeeded: value))
        append(UInt32(truncatingIfNeeded: value >> 32))
    }

    package mutating func append(bytes other: [UInt8]) { bytes.append(contentsOf: other) }

    package mutating func append(bytes other: ArraySlice<UInt8>) { bytes.append(contentsOf: other) }

    package mutating func append(raw other: UnsafeRawBufferPointer) { bytes.append(contentsOf: other) }

    /// Appends `count` zero bytes, copied from ``ZeroBytes`` a chunk at a time: appending
    /// `repeatElement(0, count:)` walks the elements one by one through generic code when the
    /// call is not specialised (debug builds), over a hundred instructions a byte.
    package mutating func appendZeros(_ count: Int) { bytes.appendZeros(count) }

    /// Appends `count` bytes that `body` writes through a ``RawByteCursor`` (which must write
    /// exactly `count`): one capacity check for a whole page instead of one per field. The
    /// space is zero-filled first, so a cursor that wrote less would leave zeros, never
    /// stale bytes.
    package mutating func append(count: Int, _ body: (inout RawByteCursor) -> Void) {
        let start = bytes.count
        appendZeros(count)
        bytes.withUnsafeMutableBytes { buffer in
            var cursor = RawByteCursor(UnsafeMutableRawBufferPointer(rebasing: buffer[start..<(start + count)]))
            body(&cursor)
            precondition(
                cursor.position == count, "a page encoder wrote \(cursor.position) of the \(count) bytes it sized")
        }
    }

    /// Overwrites 4 bytes at `offset` with a little-endian value.
    package mutating func set(_ value: UInt32, at offset: Int) {
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self) }
    }

    /// Overwrites 8 bytes at `offset` with a little-endian value.
    package mutating func set(_ value: UInt64, at offset: Int) {
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self) }
    }
}

/// Writes little-endian integers and byte strings into space a ``ByteWriter`` sized for
/// them (``ByteWriter/append(count:_:)``); each write is checked against that space.
package struct RawByteCursor {
    let buffer: UnsafeMutableRawBufferPointer
    package private(set) var position = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    package mutating func write(_ value: UInt8) {
        precondition(position < buffer.count, "page encoder overran its size")
        buffer[position] = value
        position += 1
    }

    package mutating func write(_ value: UInt16) { store(value.littleEndian) }
    package mutating func write(_ value: UInt32) { store(value.littleEndian) }
    package mutating func write(_ value: UInt64) { store(value.littleEndian) }

    private mutating func store<T: FixedWidthInteger>(_ value: T) {
        let size = MemoryLayout<T>.size
        precondition(buffer.count - position >= size, "page encoder overran its size")
        buffer.storeBytes(of: value, toByteOffset: position, as: T.self)
        position += size
    }

    /// Writes `raw`'s bytes (which must not overlap the space written to).
    package mutating func write(raw: UnsafeRawBufferPointer) {
        let count = raw.count
        precondition(buffer.count - position >= count, "page encoder overran its size")
        if let base = raw.baseAddress, count > 0 {
            (buffer.baseAddress! + position).copyMemory(from: base, byteCount: count)
        }
        position += count
    }

    package mutating func write(bytes: ArraySlice<UInt8>) {
        let count = bytes.count
        precondition(buffer.count - position >= count, "page encoder overran its size")
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress, count > 0 {
                (buffer.baseAddress! + position).copyMemory(from: base, byteCount: count)
            }
        }
        position += count
    }
}

/// Reads little-endian integers and byte strings from a buffer, bounds-checked: a read past
/// the end reports failure instead of trapping, so damaged input can never crash a reader.
///
/// Reads a slice in place (a record inside a page is never copied to be read); positions
/// are indices of the slice's base array, so for a whole array they are plain offsets.
package struct ByteReader {
    package let bytes: ArraySlice<UInt8>
    package private(set) var position: Int
    package let end: Int

    package init(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil) {
        self.init(bytes[...], from: start, to: end)
    }

    /// A reader of `bytes` from index `start` (the slice's start by default) to `end`.
    package init(_ bytes: ArraySlice<UInt8>, from start: Int? = nil, to end: Int? = nil) {
        self.bytes = bytes
        self.position = max(start ?? bytes.startIndex, bytes.startIndex)
        self.end = min(end ?? bytes.endIndex, bytes.endIndex)
    }

    package var remaining: Int { end - position }
    package var isAtEnd: Bool { position >= end }

    package mutating func readUInt8() -> UInt8? {
        guard position < end else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    package mutating func readUInt16() -> UInt16? {
        guard remaining >= 2 else { return nil }
        defer { position += 2 }
        return UInt16(bytes[position]) | UInt16(bytes[position + 1]) << 8
    }

    package mutating func readUInt32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        defer { position += 4 }
        return bytes.withUnsafeBytes {
            UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: position - bytes.startIndex, as: UInt32.self))
        }
    }

    package mutating func readUInt64() -> UInt64? {
        guard remaining >= 8 else { return nil }
        defer { position += 8 }
        return bytes.withUnsafeBytes {
            UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: position - bytes.startIndex, as: UInt64.self))
        }
    }

    package mutating func readBytes(_ count: Int) -> [UInt8]? {
        readSlice(count).map { Array($0) }
    }

    /// The next `count` bytes as a slice of the buffer itself (no copy), or nil past the end.
    package mutating func readSlice(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, remaining >= count else { return nil }
        defer { position += count }
        return bytes[position..<(position + count)]
    }

    package mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, remaining >= count else { return false }
        position += count
        return true
    }
}

extension Array where Element == UInt8 {
    /// Appends `count` zero bytes from ``ZeroBytes``, a chunk at a time (see
    /// ``ByteWriter/appendZeros(_:)`` for why not `repeatElement`).
    mutating func appendZeros(_ count: Int) {
        let zeros = ZeroBytes.buffer.bindMemory(to: UInt8.self)
        var remaining = count
        while remaining > 0 {
            let chunk = Swift.min(remaining, zeros.count)
            append(contentsOf: UnsafeBufferPointer(rebasing: zeros[..<chunk]))
            remaining -= chunk
        }
    }

    /// Reads a little-endian `UInt32` at `offset` (caller checks bounds).
    func littleEndianUInt32(at offset: Int) -> UInt32 {
        withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    }

    /// Reads a little-endian `UInt64` at `offset` (caller checks bounds).
    func littleEndianUInt64(at offset: Int) -> UInt64 {
        withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    }

    /// `withUnsafeBytes` for a body that throws a ``StorageError``, which the standard one
    /// (untyped `rethrows`) would widen to `any Error`.
    func withRawBytes<Result>(
        _ body: (UnsafeRawBufferPointer) throws(StorageError) -> Result
    ) throws(StorageError) -> Result {
        let outcome = withUnsafeBytes { raw in Swift.Result { () throws(StorageError) in try body(raw) } }
        return try outcome.get()
    }
}
