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
        let value = Int64(bitPattern: try readBigEndianUInt64("a signed integer") ^ signBit)
        guard let narrowed = T(exactly: value) else {
            throw invalid("\(value) does not fit in \(T.self)", at: position)
        }
        return narrowed
    }
}

extension Int: KeyComponent {
    /// Appends the value widened to Int64, sign bit flipped, big-endian (8 bytes).
    public func appendKey(to encoder: inout KeyEncoder) {
        encoder.appendSigned(Int64(self))
    }

    /// Reads 8 bytes; rejects values that do not fit in `Int` (possible only where `Int` is 32 bits).
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Int {
        try decoder.decodeSigned(Int.self)
    }
}

extension Int8: KeyComponent {
    /// Appends the value widened to Int64, sign bit flipped, big-endian (8 bytes).
    public func appendKey(to encoder: inout KeyEncoder) {
        encoder.appendSigned(Int64(self))
    }

    /// Reads 8 bytes; rejects values outside -128...127.
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Int8 {
        try decoder.decodeSigned(Int8.self)
    }
}

extension Int16: KeyComponent {
    /// Appends the value widened to Int64, sign bit flipped, big-endian (8 bytes).
    public func appendKey(to encoder: inout KeyEncoder) {
        encoder.appendSigned(Int64(self))
    }

    /// Reads 8 bytes; rejects values outside `Int16`'s range.
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Int16 {
        try decoder.decodeSigned(Int16.self)
    }
}

extension Int32: KeyComponent {
    /// Appends the value widened to Int64, sign bit flipped, big-endian (8 bytes).
    public func appendKey(to encoder: inout KeyEncoder) {
        encoder.appendSigned(Int64(self))
    }

    /// Reads 8 bytes; rejects values outside `Int32`'s range.
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Int32 {
        try decoder.decodeSigned(Int32.self)
    }
}

extension Int64: KeyComponent {
    /// Appends the bit pattern with the sign bit flipped, big-endian (8 bytes).
    public func appendKey(to encoder: inout KeyEncoder) {
        encoder.appendSigned(self)
    }

    /// Reads 8 bytes.
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Int64 {
        try decoder.decodeSigned(Int64.self)
    }
}
