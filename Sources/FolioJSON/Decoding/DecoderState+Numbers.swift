import Foundation

// Reading numbers in place as Swift values: integers of every width (with Foundation's
// rules for fractions and exponents), correctly rounded floats, non-conforming floats
// from strings, and Decimal. The token scanning they rest on is JSONInput+Numbers.swift.

extension DecoderState {
    @inline(__always)
    func readInteger<T: FixedWidthInteger>(_ type: T.Type, at p: Int) throws -> T? {
        let c = input.byte(p)
        guard c == ASCII.minus || (c >= ASCII.zero && c <= ASCII.nine) else { return nil }
        let end = input.numberEnd(p)
        lastEnd = end
        if let value = input.plainInteger(p, end, as: T.self) { return value }
        return try slowInteger(T.self, p, end)
    }

    @inline(__always)
    func readFloat<T: BinaryFloatingPoint & LosslessStringConvertible>(_ type: T.Type, at p: Int) throws -> T? {
        let c = input.byte(p)
        if c == ASCII.minus || (c >= ASCII.zero && c <= ASCII.nine) {
            let end = input.numberEnd(p)
            lastEnd = end
            if let value: T = fastFloat(p, end) { return value }
            return try slowFloat(T.self, p, end)
        }
        if c == ASCII.quote,
            case .convertFromString(let positiveInfinity, let negativeInfinity, let nan) = options
                .nonConformingFloatDecodingStrategy
        {
            if let value: T = nonConforming(p, positiveInfinity, negativeInfinity, nan) {
                lastEnd = input.skipString(p)
                return value
            }
        }
        return nil
    }

    @inline(__always)
    func decodeInteger<T: FixedWidthInteger>(
        _ type: T.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?
    ) throws -> T {
        if let value = try readInteger(T.self, at: p) { return value }
        throw failure(T.self, at: p, node, key)
    }

    @inline(__always)
    func decodeFloat<T: BinaryFloatingPoint & LosslessStringConvertible>(
        _ type: T.Type, at p: Int, _ node: PathNode?, _ key: (any CodingKey)?
    ) throws -> T {
        if let value = try readFloat(T.self, at: p) { return value }
        throw failure(T.self, at: p, node, key)
    }

    /// Foundation's rules for a number that is not a plain integer of the type: read
    /// it as a Double and keep it if exactly integral and below 2^53; above, read its
    /// decimal digits, truncating any fraction.
    @inline(never)
    func slowInteger<T: FixedWidthInteger>(_ type: T.Type, _ start: Int, _ end: Int) throws -> T {
        guard input.isValidNumber(start, end) else { throw invalidJSON() }
        let token = input.tokenString(start, end)
        if let double = Double(token) {
            guard let value = T(exactly: double) else { throw invalidJSON() }
            if double.magnitude < 9007199254740992.0 { return value }
        }
        // Exact decimal arithmetic on the digits (as Foundation's Decimal fallback).
        var negative = false
        var mantissa: UInt64 = 0
        var overflow = false
        var exponent = 0
        var i = start
        if input.base[i] == ASCII.minus { negative = true; i += 1 }
        var afterDot = false
        // Trailing zeros of the digits go to the exponent (Decimal keeps its mantissa
        // compact), so "9223372036854775807.0" fits a UInt64 mantissa.
        var pendingZeros = 0
        while i < end {
            let c = input.base[i]
            if c == ASCII.dot { afterDot = true; i += 1; continue }
            if c == ASCII.lowerE || c == ASCII.upperE { break }
            if afterDot { exponent -= 1 }
            i += 1
            if c == ASCII.zero { pendingZeros += 1; continue }
            for _ in 0...pendingZeros {
                let (m, o) = mantissa.multipliedReportingOverflow(by: 10)
                if o { overflow = true }
                mantissa = m
            }
            pendingZeros = 0
            let (s, o) = mantissa.addingReportingOverflow(UInt64(c - ASCII.zero))
            if o { overflow = true }
            mantissa = s
        }
        if mantissa == 0 { pendingZeros = 0 }
        exponent += pendingZeros
        if i < end {
            i += 1
            var expNegative = false
            if input.base[i] == ASCII.minus {
                expNegative = true; i += 1
            } else if input.base[i] == ASCII.plus {
                i += 1
            }
            var e = 0
            while i < end { e = min(e * 10 + Int(input.base[i] - ASCII.zero), 100_000); i += 1 }
            exponent += expNegative ? -e : e
        }
        guard !overflow else { throw invalidJSON() }
        if exponent < 0 {
            for _ in 0..<min(-exponent, 40) { mantissa /= 10 }
        } else {
            for _ in 0..<exponent {
                let (m, o) = mantissa.multipliedReportingOverflow(by: 10)
                guard !o else { throw invalidJSON() }
                mantissa = m
            }
        }
        if negative {
            guard mantissa != 0, let value = T(exactly: mantissa), T.isSigned else { throw invalidJSON() }
            return value * -1
        }
        guard let value = T(exactly: mantissa) else { throw invalidJSON() }
        return value
    }

    /// Exact conversions of a decimal `m × 10^k` with at most 19 significant digits:
    /// with at most 15 digits and |k| ≤ 22 in one correctly rounded Double operation;
    /// on x86-64, up to 19 digits and |k| ≤ 27 in one Float80 operation, kept unless
    /// it lands exactly on a halfway point between two Doubles (then the slow path
    /// decides, so the result is always the correctly rounded one).
    @inline(__always)
    func fastFloat<T: BinaryFloatingPoint>(_ start: Int, _ end: Int) -> T? {
        var i = start
        let base = input.base
        let negative = base[i] == ASCII.minus
        if negative { i += 1 }
        guard i < end else { return nil }
        var mantissa: UInt64 = 0
        var digits = 0
        if base[i] == ASCII.zero {
            i += 1
        } else {
            while i < end {
                let d = base[i] &- ASCII.zero
                guard d <= 9 else { break }
                mantissa = mantissa &* 10 &+ UInt64(d)
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
        }
        var exponent = 0
        if i < end, base[i] == ASCII.dot {
            i += 1
            let first = i
            while i < end {
                let d = base[i] &- ASCII.zero
                guard d <= 9 else { break }
                mantissa = mantissa &* 10 &+ UInt64(d)
                if mantissa != 0 { digits += 1 }
                i += 1
            }
            guard i > first else { return nil }
            exponent = first - i
        }
        if i < end {
            guard base[i] == ASCII.lowerE || base[i] == ASCII.upperE else { return nil }
            i += 1
            var negativeExponent = false
            if i < end, base[i] == ASCII.minus || base[i] == ASCII.plus {
                negativeExponent = base[i] == ASCII.minus; i += 1
            }
            let first = i
            var e = 0
            while i < end {
                let d = base[i] &- ASCII.zero
                guard d <= 9, e < 10_000 else { return nil }
                e = e * 10 + Int(d)
                i += 1
            }
            guard i > first, i == end else { return nil }
            exponent += negativeExponent ? -e : e
        }
        guard digits <= 19 else { return nil }
        if mantissa == 0 {
            // Foundation's zero test has a quirk; a number it rejects takes the slow path.
            guard input.isTrueZero(start, end) else { return nil }
            return negative ? -T(0) : T(0)
        }
        if T.significandBitCount >= 52 {
            if digits <= 15, exponent >= -22, exponent <= 22 {
                var value = Double(mantissa)
                if exponent < 0 { value /= JSONInput.powers[-exponent] } else { value *= JSONInput.powers[exponent] }
                return T(negative ? -value : value)
            }
            #if arch(x86_64) && !os(Windows) && !os(Android)
            if exponent >= -27, exponent <= 27 {
                var wide = Float80(mantissa)
                if exponent < 0 {
                    wide /= JSONInput.widePowers[-exponent]
                } else {
                    wide *= JSONInput.widePowers[exponent]
                }
                // Exactly halfway between two Doubles (low 11 of 64 significand bits
                // 0b100_0000_0000): rounding again could be wrong; let strtod decide.
                if wide.significandBitPattern & 0x7FF == 0x400 { return nil }
                let value = Double(wide)
                return T(negative ? -value : value)
            }
            #endif
            return nil
        }
        guard digits <= 7, exponent >= -10, exponent <= 10 else { return nil }
        var value = T(mantissa)
        if exponent < 0 { value /= T(JSONInput.powers[-exponent]) } else { value *= T(JSONInput.powers[exponent]) }
        return negative ? -value : value
    }

    @inline(never)
    func slowFloat<T: BinaryFloatingPoint & LosslessStringConvertible>(
        _ type: T.Type, _ start: Int, _ end: Int
    ) throws -> T {
        guard input.isValidNumber(start, end), let value = T(input.tokenString(start, end)) else { throw invalidJSON() }
        guard value.isFinite, value != 0 || input.isTrueZero(start, end) else { throw invalidJSON() }
        return value
    }

    func nonConforming<T: BinaryFloatingPoint>(
        _ p: Int, _ positiveInfinity: String, _ negativeInfinity: String, _ nan: String
    ) -> T? {
        // Only strings without escapes or control characters, compared byte for byte.
        var i = p + 1
        while i < input.count {
            let c = input.base[i]
            if c == ASCII.quote { break }
            if c == ASCII.backslash || c < 0x20 { return nil }
            i += 1
        }
        let bytes = UnsafeRawBufferPointer(start: input.base + p + 1, count: i - p - 1)
        if positiveInfinity.utf8.elementsEqual(bytes) { return T.infinity }
        if negativeInfinity.utf8.elementsEqual(bytes) { return -T.infinity }
        if nan.utf8.elementsEqual(bytes) { return T.nan }
        return nil
    }

    func decodeDecimal(at p: Int, _ node: PathNode?, _ key: (any CodingKey)?) throws -> Decimal {
        try checkNotNull(Decimal.self, at: p, node, key)
        let c = input.byte(p)
        guard c == ASCII.minus || (c >= ASCII.zero && c <= ASCII.nine) else {
            throw DecodingError.typeMismatch(
                Decimal.self, DecodingError.Context(codingPath: PathNode.path(node, key), debugDescription: ""))
        }
        let end = input.numberEnd(p)
        guard input.isValidNumber(p, end),
            let decimal = Decimal(string: input.tokenString(p, end), locale: Locale(identifier: "en_US_POSIX")),
            !decimal.isNaN
        else { throw invalidJSON() }
        lastEnd = end
        return decimal
    }
}
