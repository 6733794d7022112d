// Doubles are written as 8 big-endian bytes of a transformed bit pattern:
//
//   1. Canonicalise. -0.0 becomes +0.0, because -0.0 == 0.0 in Swift and the encoding must make
//      equal values identical bytes (otherwise a unique index could hold both, and a lookup for
//      0.0 would miss a key stored as -0.0). Every NaN becomes one canonical NaN (the bits of
//      `Double.nan`, 0x7FF8_0000_0000_0000): Swift's `<` leaves NaN unordered, but a B+tree
//      needs a total order, so keys follow the PostgreSQL policy: all NaNs are equal to each
//      other and greater than every number, including +infinity. Without this step a negative
//      NaN would sort below -infinity and NaNs with different payloads would be different keys.
//   2. If the sign bit is set (a negative number), flip all 64 bits: a larger magnitude has a
//      larger bit pattern, and flipping reverses that, so more negative sorts first, and every
//      result has the top bit clear. Otherwise flip only the sign bit: positive numbers keep their
//      bit order (IEEE 754 orders non-negative doubles like their bit patterns) and land above
//      all negatives.
//
// Floats are converted to Double (exact, order-preserving) and encoded as a Double, so a Float
// key and a Double key of the same value are the same bytes.

/// The sign bit of an IEEE 754 binary64 value.
private let signBit: UInt64 = 0x8000_0000_0000_0000

/// The transformed bits of the canonical NaN: `Double.nan.bitPattern | signBit`.
private let canonicalNaNKey: UInt64 = 0xFFF8_0000_0000_0000

/// The transformed bits of -0.0, which the encoder never writes (it writes +0.0 instead).
private let negativeZeroKey: UInt64 = 0x7FFF_FFFF_FFFF_FFFF

extension KeyEncoder {
    /// Appends a Double: canonicalised, sign-transformed, big-endian (8 bytes).
    mutating func appendDouble(_ value: Double) {
        appendBigEndian(DoubleKeyBits.encode(value))
    }
}

extension KeyDecoder {
    /// Reads a Double, rejecting the two bit patterns the encoder never writes: -0.0 and any NaN
    /// other than the canonical one.
    mutating func decodeDouble() throws(StorageError) -> Double {
        let position = offset
        let key = try readBigEndianUInt64("a Double")
        guard let value = DoubleKeyBits.decode(key) else {
            throw invalid(
                "0x\(String(key, radix: 16)) is not a canonical Double key (-0.0 and non-canonical NaNs are never written)",
                at: position)
        }
        return value
    }
}

/// The bit transformation between a Double and its 64-bit key.
enum DoubleKeyBits {
    /// The 64-bit key of `value` (written big-endian).
    static func encode(_ value: Double) -> UInt64 {
        if value.isNaN {
            return canonicalNaNKey
        }
        // `value == 0` is true for both zeros; both become the bits of +0.0.
        let bits = value == 0 ? 0 : value.bitPattern
        return bits & signBit != 0 ? ~bits : bits | signBit
    }

    /// The Double whose key is `key`, or nil if the encoder never produces `key`.
    static func decode(_ key: UInt64) -> Double? {
        if key == negativeZeroKey {
            return nil
        }
        let bits = key & signBit != 0 ? key & ~signBit : ~key
        let value = Double(bitPattern: bits)
        if value.isNaN && key != canonicalNaNKey {
            return nil
        }
        return value
    }
}

extension Double: KeyComponent {
    /// Appends the canonicalised, sign-transformed bits, big-endian (8 bytes). -0.0 is written
    /// as +0.0 and every NaN as one NaN that sorts after +infinity.
    public func appendKey(to encoder: inout KeyEncoder) {
        encoder.appendDouble(self)
    }

    /// Reads 8 bytes. A NaN key decodes to `Double.nan`; the zero key decodes to +0.0.
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Double {
        try decoder.decodeDouble()
    }
}

extension Float: KeyComponent {
    /// Appends the value converted to Double (exactly), encoded as a Double (8 bytes).
    public func appendKey(to encoder: inout KeyEncoder) {
        encoder.appendDouble(Double(self))
    }

    /// Reads a Double key and converts it back, rejecting values a Float cannot hold exactly
    /// (they were never written by a Float). A NaN key decodes to `Float.nan`.
    public static func decodeKey(from decoder: inout KeyDecoder) throws(StorageError) -> Float {
        let position = decoder.offset
        let value = try decoder.decodeDouble()
        if value.isNaN {
            return .nan
        }
        guard let narrowed = Float(exactly: value) else {
            throw decoder.invalid("\(value) is not exactly representable as a Float", at: position)
        }
        return narrowed
    }
}
