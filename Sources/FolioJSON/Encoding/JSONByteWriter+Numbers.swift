import Foundation

/// Numbers as JSON text: integers of every width, and floating point as Foundation writes it.
extension JSONByteWriter {
    /// Writes the decimal digits of `value` (at most 20).
    @inline(__always)
    mutating func putUnsigned(_ value: UInt64) {
        if value < 10 {
            put(UInt8(truncatingIfNeeded: value) &+ 0x30)
            return
        }
        var digits = 1
        var rest = value / 10
        while rest != 0 { digits &+= 1; rest /= 10 }
        reserve(digits)
        var position = count &+ digits
        var remaining = value
        while position > count {
            position &-= 1
            let quotient = remaining / 10
            base[position] = UInt8(truncatingIfNeeded: remaining &- quotient &* 10) &+ 0x30
            remaining = quotient
        }
        count &+= digits
    }

    @inline(__always)
    mutating func putSigned(_ value: Int64) {
        if value < 0 {
            put(UInt8(ascii: "-"))
            putUnsigned(value.magnitude)
        } else {
            putUnsigned(UInt64(value))
        }
    }

    mutating func putUnsigned128(_ value: UInt128) {
        if value <= UInt128(UInt64.max) {
            putUnsigned(UInt64(value))
            return
        }
        var digits: [UInt8] = []
        var remaining = value
        while remaining != 0 {
            let (quotient, digit) = remaining.quotientAndRemainder(dividingBy: 10)
            digits.append(UInt8(truncatingIfNeeded: digit) &+ 0x30)
            remaining = quotient
        }
        reserve(digits.count)
        for digit in digits.reversed() { base[count] = digit; count &+= 1 }
    }

    mutating func putSigned128(_ value: Int128) {
        if value < 0 { put(UInt8(ascii: "-")) }
        putUnsigned128(value.magnitude)
    }

    // MARK: Floating point

    /// Writes a finite `Double` in its shortest round-tripping form, as Foundation does:
    /// `description`, with a trailing `.0` dropped (`5`, `-0`, `0.1`, `1e-05`, `1e+300`).
    mutating func putFinite(_ value: Double) {
        // Whole numbers within 2^53 are exact integers: write their digits directly.
        if value == value.rounded(.towardZero), value.magnitude < 9_007_199_254_740_992 {
            if value == 0 {
                if value.sign == .minus { put(UInt8(ascii: "-"), UInt8(ascii: "0")) } else { put(UInt8(ascii: "0")) }
                return
            }
            putSigned(Int64(value))
            return
        }
        if value.magnitude < 1e9, putShortDecimal(value) { return }
        putFloatDescription(value.description)
    }

    /// Writes `value` with at most 4 decimals when such a decimal reads back as `value`
    /// (prices, scores: most values people type). Below 1e9 a double's spacing is far
    /// finer than 1e-4, so the first (fewest-decimals) decimal found is the only one of
    /// its length that reads back, hence the shortest, as `description` would write it.
    private mutating func putShortDecimal(_ value: Double) -> Bool {
        let magnitude = value.magnitude
        var scale = 10.0
        var decimals = 1
        while decimals <= 4 {
            let scaled = (magnitude * scale).rounded()
            if scaled / scale == magnitude {
                let digits = UInt64(scaled)
                let whole = digits / UInt64(scale)
                var fraction = digits - whole * UInt64(scale)
                if value < 0 { put(UInt8(ascii: "-")) }
                putUnsigned(whole)
                reserve(decimals + 1)
                base[count] = UInt8(ascii: ".")
                var position = count + decimals
                while position > count {
                    base[position] = UInt8(truncatingIfNeeded: fraction % 10) &+ 0x30
                    fraction /= 10
                    position -= 1
                }
                count += decimals + 1
                return true
            }
            scale *= 10
            decimals += 1
        }
        return false
    }

    /// Writes a finite `Float` in its shortest round-tripping form, as Foundation does.
    mutating func putFinite(_ value: Float) {
        if value == value.rounded(.towardZero), value.magnitude < 16_777_216 {
            if value == 0 {
                if value.sign == .minus { put(UInt8(ascii: "-"), UInt8(ascii: "0")) } else { put(UInt8(ascii: "0")) }
                return
            }
            putSigned(Int64(value))
            return
        }
        putFloatDescription(value.description)
    }

    mutating func putFloatDescription(_ description: String) {
        var text = description
        text.withUTF8 { utf8 in
            var length = utf8.count
            if length >= 2, utf8[length - 2] == UInt8(ascii: "."), utf8[length - 1] == UInt8(ascii: "0") {
                length -= 2
            }
            put(UnsafeBufferPointer(rebasing: utf8[0..<length]))
        }
    }
}
