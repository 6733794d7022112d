import Foundation

// String readers: the fast path for strings without escapes, and the unescaping one.

extension JSONInput {
    /// The string whose opening quote is at `start`, unescaped and UTF-8 validated.
    @inline(__always)
    func readString(_ start: Int) throws -> String {
        var end = 0
        return try readString(start, end: &end)
    }

    /// The string whose opening quote is at `start`; `end` is set to the offset after
    /// its closing quote.
    @inline(__always)
    func readString(_ start: Int, end: inout Int) throws -> String {
        var i = start + 1
        var flags: UInt64 = 0
        while i + 8 <= count {
            let w = word(i)
            let stops = JSONInput.quoteOrBackslash(w)
            if stops != 0 {
                let at = stops.trailingZeroBitCount >> 3
                // Only the bytes before the stop count.
                let mask: UInt64 = at == 0 ? 0 : (~0 as UInt64) >> UInt64(64 - 8 * at)
                flags |= JSONInput.controlOrNonASCII(w & mask | (0x2020_2020_2020_2020 & ~mask))
                i += at
                break
            }
            flags |= JSONInput.controlOrNonASCII(w)
            i += 8
        }
        while i < count {
            let c = base[i]
            if c == ASCII.quote || c == ASCII.backslash { break }
            if c < 0x20 || c >= 0x80 { flags |= 0x80 }
            i += 1
        }
        if i < count, base[i] == ASCII.quote {
            let buffer = UnsafeBufferPointer(start: base + start + 1, count: i - start - 1)
            end = i + 1
            if flags == 0 { return String(decoding: buffer, as: UTF8.self) }
            if let string = String(validating: buffer, as: UTF8.self), !buffer.contains(where: { $0 < 0x20 }) {
                return string
            }
        }
        end = skipString(start)
        return try readStringSlow(start)
    }

    /// The end of the string's contents (the offset of the closing quote) and whether the
    /// contents can be compared byte for byte (no escape, no control or non-ASCII byte).
    @inline(__always)
    func stringExtent(_ start: Int) -> (end: Int, simple: Bool) {
        var i = start + 1
        var simple = true
        while i + 8 <= count {
            let w = word(i)
            let stops = JSONInput.quoteOrBackslash(w)
            if stops != 0 {
                let at = stops.trailingZeroBitCount >> 3
                let mask: UInt64 = at == 0 ? 0 : (~0 as UInt64) >> UInt64(64 - 8 * at)
                if JSONInput.controlOrNonASCII(w & mask | (0x2020_2020_2020_2020 & ~mask)) != 0 { simple = false }
                i += at
                break
            }
            if JSONInput.controlOrNonASCII(w) != 0 { simple = false }
            i += 8
        }
        while i < count {
            let c = base[i]
            if c == ASCII.quote { return (i, simple) }
            if c == ASCII.backslash {
                simple = false
                i += (i + 1 < count && base[i + 1] == ASCII.u) ? 6 : 2
                continue
            }
            if c < 0x20 || c >= 0x80 { simple = false }
            i += 1
        }
        return (count, false)
    }

    @inline(never)
    func readStringSlow(_ start: Int) throws -> String {
        var bytes: [UInt8] = []
        var i = start + 1
        func appendScalar(_ scalar: Unicode.Scalar) {
            for b in UTF8.encode(scalar)! { bytes.append(b) }
        }
        while i < count {
            let c = base[i]
            if c == ASCII.quote {
                guard let string = String(validating: bytes, as: UTF8.self) else { throw invalidJSON() }
                return string
            }
            if c < 0x20 { throw invalidJSON() }
            if c != ASCII.backslash {
                bytes.append(c)
                i += 1
                continue
            }
            let e = byte(i + 1)
            i += 2
            switch e {
            case ASCII.quote: bytes.append(ASCII.quote)
            case ASCII.backslash: bytes.append(ASCII.backslash)
            case UInt8(ascii: "/"): bytes.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case ASCII.u:
                let high = try hex4(i)
                i += 4
                if UTF16.isLeadSurrogate(high) {
                    guard byte(i) == ASCII.backslash, byte(i + 1) == ASCII.u else { throw invalidJSON() }
                    let low = try hex4(i + 2)
                    guard UTF16.isTrailSurrogate(low) else { throw invalidJSON() }
                    i += 6
                    let value = 0x10000 + ((UInt32(high) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                    appendScalar(Unicode.Scalar(value)!)
                } else {
                    guard let scalar = Unicode.Scalar(high) else { throw invalidJSON() }
                    appendScalar(scalar)
                }
            default:
                throw invalidJSON()
            }
        }
        throw invalidJSON()
    }

    private func hex4(_ i: Int) throws -> UInt16 {
        guard i + 4 <= count else { throw invalidJSON() }
        var value: UInt16 = 0
        for k in 0..<4 {
            let c = base[i + k]
            let digit: UInt8
            switch c {
            case ASCII.zero...ASCII.nine: digit = c - ASCII.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: throw invalidJSON()
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }
}
