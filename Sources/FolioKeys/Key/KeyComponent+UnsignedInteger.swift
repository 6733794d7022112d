// Every unsigned integer is widened to UInt64 and written as 8 big-endian bytes, so numeric order
// is byte order and the encoding does not depend on the width (UInt8(7) and UInt64(7) are the
// same bytes). Decoding into a narrower type checks the range. Signed and unsigned integers are
// different encodings: changing a key's signedness changes its bytes.

extension KeyEncoder {
    /// Appends an unsigned integer: 8 big-endian bytes.
    mutating func appendUnsigned(_ value: UInt64) {
        appendBigEndian(value)
    }
}

extension KeyDecoder {
    /// Reads an unsigned integer and narrows it to `T`, rejecting values outside `T`'s range.
    mutating func decodeUnsigned<T: FixedWidthInteger & UnsignedInteger>(_ type: T.Type) throws(StorageError) -> T {
        let position = offset
        return try narrowed(try readBigEndianUInt64("an unsigned integer"), at: position)
    }
}

/// Every unsigned integer type shares one encoding: the value widened to UInt64, big-endian (8 bytes).
extension KeyComponent where Self: FixedWidthInteger & UnsignedInteger {
    /// Appends the value widened to UInt64, big-endian (8 bytes).
    public func appendKey(to encoder: inout KeyEncoder) {
        encoder.appendUnsigned(UInt64(self))
    }

    /// Reads 8 bytes; rejects values outside the type's range.
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Self {
        try decoder.decodeUnsigned(Self.self)
    }
}

extension UInt: KeyComponent {}
extension UInt8: KeyComponent {}
extension UInt16: KeyComponent {}
extension UInt32: KeyComponent {}
extension UInt64: KeyComponent {}
