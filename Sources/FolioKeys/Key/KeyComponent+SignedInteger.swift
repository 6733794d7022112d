// Every signed integer is widened to Int64 and written as 8 big-endian bytes of its bit pattern
// with the sign bit flipped. Two's complement orders negatives after positives when read as
// unsigned; flipping the sign bit maps Int64.min...Int64.max onto 0...UInt64.max in order.
//
// Widening first (rather than writing each type at its own width) means the encoding does not
// depend on the width: Int8(5), Int32(5) and Int64(5) are the same 8 bytes, so a store whose
// identifier type changes width keeps its keys and their order. Decoding into a narrower type
// checks the range.

/// The bit that is flipped so that signed order becomes unsigned byte order.
private let signBit: UInt64 = 0x8000_0000_0000_0000

extension KeyEncoder {
    /// Appends a signed integer: 8 big-endian bytes of `value.bitPattern ^ 0x8000_0000_0000_0000`.
    mutating func appendSigned(_ value: Int64) {
        appendBigEndian(UInt64(bitPattern: value) ^ signBit)
    }
}

extension KeyDecoder {
    /// Reads a signed integer and narrows it to `T`, rejecting values outside `T`'s range.
    mutating func decodeSigned<T: FixedWidthInteger & SignedInteger>(_ type: T.Type) throws(StorageError) -> T {
        let position = offset
        return try narrowed(Int64(bitPattern: try readBigEndianUInt64("a signed integer") ^ signBit), at: position)
    }
}

/// Every signed integer type shares one encoding: the value widened to Int64, sign bit flipped, big-endian (8 bytes).
extension KeyComponent where Self: FixedWidthInteger & SignedInteger {
    /// Appends the value widened to Int64, sign bit flipped, big-endian (8 bytes).
    public func appendKey(to encoder: inout KeyEncoder) {
        encoder.appendSigned(Int64(self))
    }

    /// Reads 8 bytes; rejects values outside the type's range.
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Self {
        try decoder.decodeSigned(Self.self)
    }
}

extension Int: KeyComponent {}
extension Int8: KeyComponent {}
extension Int16: KeyComponent {}
extension Int32: KeyComponent {}
extension Int64: KeyComponent {}
