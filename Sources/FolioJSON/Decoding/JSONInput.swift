import Foundation

// The bytes being decoded and the low-level readers over them: the structural
// validator that runs once over the whole input, the value skipper, and the string and
// number readers. Offsets are `Int`s into the buffer; every read is bounds checked
// against `count` (the validator guarantees the structure, but containers can be
// misused, and a wrong offset must never read outside the buffer).

@usableFromInline
enum ASCII {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")
    static let minus = UInt8(ascii: "-")
    static let plus = UInt8(ascii: "+")
    static let dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
    static let lowerE = UInt8(ascii: "e")
    static let upperE = UInt8(ascii: "E")
    static let t = UInt8(ascii: "t")
    static let f = UInt8(ascii: "f")
    static let n = UInt8(ascii: "n")
    static let u = UInt8(ascii: "u")
}

/// The error every syntax, number and string problem becomes, as Foundation's decoder
/// reports them: `dataCorrupted` at the root path, whatever the nesting.
@inline(never)
func invalidJSON() -> DecodingError {
    DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "The given data was not valid JSON."))
}

/// Input nested deeper than the decoder's limit: dataCorrupted at the root, as Foundation
/// reports it, with a message that names the limit (it is lower than Foundation's).
func tooDeep(_ maximumDepth: Int) -> DecodingError {
    DecodingError.dataCorrupted(DecodingError.Context(
        codingPath: [],
        debugDescription: "The given data was not valid JSON: it nests arrays and objects deeper than maximumDepth (\(maximumDepth))."))
}

/// The kinds of the open containers during validation: a bit each for the first 64
/// levels, an array beyond (no allocation for ordinary documents).
struct DepthStack {
    private var bits: UInt64 = 0
    private var deeper: [Bool] = []
    private(set) var count = 0

    @inline(__always)
    mutating func append(_ isObject: Bool) {
        if count < 64 {
            if isObject { bits |= 1 << UInt64(count) } else { bits &= ~(1 << UInt64(count)) }
        } else {
            deeper.append(isObject)
        }
        count += 1
    }

    @inline(__always)
    mutating func removeLast() {
        count -= 1
        if count >= 64 { deeper.removeLast() }
    }

    @inline(__always)
    var last: Bool? {
        guard count > 0 else { return nil }
        let top = count - 1
        return top < 64 ? (bits >> UInt64(top)) & 1 == 1 : deeper[top - 64]
    }
}

/// The input bytes, valid for one synchronous decode.
struct JSONInput {
    let base: UnsafePointer<UInt8>
    let count: Int

    init(_ buffer: UnsafeRawBufferPointer) {
        if let address = buffer.baseAddress, buffer.count > 0 {
            base = address.assumingMemoryBound(to: UInt8.self)
            count = buffer.count
        } else {
            // An empty input: point at a static byte, never read (count is 0).
            base = JSONInput.emptyByte
            count = 0
        }
    }

    // Read-only after initialization.
    nonisolated(unsafe) private static let emptyByte: UnsafePointer<UInt8> = {
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        pointer.initialize(to: 0)
        return UnsafePointer(pointer)
    }()

    /// The byte at `i`, or 0 past the end (0 is never valid where a byte is expected).
    @inline(__always)
    func byte(_ i: Int) -> UInt8 {
        i < count && i >= 0 ? base[i] : 0
    }

    @inline(__always)
    static func isWhitespace(_ b: UInt8) -> Bool {
        b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09
    }

    @inline(__always)
    func skipWhitespace(_ i: Int) -> Int {
        var i = i
        while i < count, JSONInput.isWhitespace(base[i]) { i += 1 }
        return i
    }

    @inline(__always)
    static func isNumberByte(_ b: UInt8) -> Bool {
        (b >= ASCII.zero && b <= ASCII.nine) || b == ASCII.dot || b == ASCII.minus || b == ASCII.plus || b == ASCII.lowerE || b == ASCII.upperE
    }

    // MARK: Word-at-a-time scanning

    @inline(__always)
    func word(_ i: Int) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
    }

    /// High bit set in each byte of `w` that is zero (exact for the lowest such byte).
    @inline(__always)
    static func zeroBytes(_ w: UInt64) -> UInt64 {
        (w &- 0x0101_0101_0101_0101) & ~w & 0x8080_8080_8080_8080
    }

    /// High bit set in the bytes that are a quote or a backslash (lowest one exact).
    @inline(__always)
    static func quoteOrBackslash(_ w: UInt64) -> UInt64 {
        zeroBytes(w ^ 0x2222_2222_2222_2222) | zeroBytes(w ^ 0x5C5C_5C5C_5C5C_5C5C)
    }

    /// High bit set in the bytes below 0x20 (lowest one exact) or at/above 0x80.
    @inline(__always)
    static func controlOrNonASCII(_ w: UInt64) -> UInt64 {
        ((w &- 0x2020_2020_2020_2020) & ~w & 0x8080_8080_8080_8080) | (w & 0x8080_8080_8080_8080)
    }

    /// From `i` inside a string, the offset of the first quote or backslash at or after
    /// `i`, or `count`.
    @inline(__always)
    func nextQuoteOrBackslash(_ i: Int) -> Int {
        var i = i
        while i + 8 <= count {
            let hits = JSONInput.quoteOrBackslash(word(i))
            if hits != 0 { return i + hits.trailingZeroBitCount >> 3 }
            i += 8
        }
        while i < count {
            let c = base[i]
            if c == ASCII.quote || c == ASCII.backslash { return i }
            i += 1
        }
        return count
    }

    // MARK: Validation

    /// Checks the whole input's structure as Foundation's scanner does, and returns the
    /// offset of the top-level value. Like Foundation's, it accepts trailing commas in
    /// arrays and objects, a UTF-8 byte order mark, and defers the checks of number
    /// syntax, string escapes, control characters and UTF-8 validity to the moment a
    /// value is decoded. Iterative: nesting costs one bit per level, never stack.
    ///
    /// When the top-level value is an object, its members are recorded in `recorder`'s
    /// member table on the way (so its keyed container needs no second scan).
    func validate(maximumDepth: Int, recorder: DecoderState? = nil) throws -> Int {
        var start = 0
        if count >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF { start = 3 }
        var i = skipWhitespace(start)
        let top = i
        guard i < count else { throw invalidJSON() }
        // One flag per open container: true for an object.
        var stack = DepthStack()
        value: while true {
            // A value is expected at i (whitespace skipped).
            guard i < count else { throw invalidJSON() }
            let c = base[i]
            switch c {
            case ASCII.openBrace:
                guard stack.count < maximumDepth else { throw tooDeep(maximumDepth) }
                stack.append(true)
                i = skipWhitespace(i + 1)
                guard i < count else { throw invalidJSON() }
                if base[i] == ASCII.closeBrace {
                    stack.removeLast()
                    i += 1
                } else {
                    if stack.count == 1, let recorder {
                        recorder.beginTopLevelObject(at: top)
                        i = try recordMemberKey(i, recorder)
                    } else {
                        i = try validateMemberKey(i)
                    }
                    continue value
                }
            case ASCII.openBracket:
                guard stack.count < maximumDepth else { throw tooDeep(maximumDepth) }
                stack.append(false)
                i = skipWhitespace(i + 1)
                guard i < count else { throw invalidJSON() }
                if base[i] == ASCII.closeBracket {
                    stack.removeLast()
                    i += 1
                } else {
                    continue value
                }
            case ASCII.quote:
                i = try skipStringValidating(i)
            case ASCII.minus, ASCII.zero...ASCII.nine:
                i += 1
                while i < count, JSONInput.isNumberByte(base[i]) { i += 1 }
            case ASCII.t:
                guard i + 4 <= count, base[i + 1] == UInt8(ascii: "r"), base[i + 2] == UInt8(ascii: "u"), base[i + 3] == UInt8(ascii: "e") else { throw invalidJSON() }
                i += 4
            case ASCII.f:
                guard i + 5 <= count, base[i + 1] == UInt8(ascii: "a"), base[i + 2] == UInt8(ascii: "l"), base[i + 3] == UInt8(ascii: "s"), base[i + 4] == UInt8(ascii: "e") else { throw invalidJSON() }
                i += 5
            case ASCII.n:
                guard i + 4 <= count, base[i + 1] == UInt8(ascii: "u"), base[i + 2] == UInt8(ascii: "l"), base[i + 3] == UInt8(ascii: "l") else { throw invalidJSON() }
                i += 4
            default:
                throw invalidJSON()
            }
            // After a value: close containers, or move to the next element or member.
            while true {
                guard let isObject = stack.last else {
                    i = skipWhitespace(i)
                    guard i == count else { throw invalidJSON() }
                    return top
                }
                i = skipWhitespace(i)
                guard i < count else { throw invalidJSON() }
                let c = base[i]
                if c == ASCII.comma {
                    i = skipWhitespace(i + 1)
                    guard i < count else { throw invalidJSON() }
                    let close = isObject ? ASCII.closeBrace : ASCII.closeBracket
                    if base[i] == close {
                        // Trailing comma, accepted as Foundation does.
                        stack.removeLast()
                        i += 1
                        continue
                    }
                    if isObject {
                        if stack.count == 1, let recorder {
                            i = try recordMemberKey(i, recorder)
                        } else {
                            i = try validateMemberKey(i)
                        }
                    }
                    continue value
                } else if c == (isObject ? ASCII.closeBrace : ASCII.closeBracket) {
                    stack.removeLast()
                    i += 1
                    continue
                } else {
                    throw invalidJSON()
                }
            }
        }
    }

    /// `validateMemberKey` for a member of the top-level object, recorded.
    private func recordMemberKey(_ i: Int, _ recorder: DecoderState) throws -> Int {
        guard i < count, base[i] == ASCII.quote else { throw invalidJSON() }
        let (keyEnd, simple) = stringExtent(i)
        var v = simple ? keyEnd + 1 : try skipStringValidating(i)
        guard v <= count, base[v - 1] == ASCII.quote else { throw invalidJSON() }
        v = skipWhitespace(v)
        guard v < count, base[v] == ASCII.colon else { throw invalidJSON() }
        v = skipWhitespace(v + 1)
        recorder.recordTopLevelMember(keyStart: i + 1, keyEnd: keyEnd, value: v, simple: simple)
        return v
    }

    /// At a member's key: checks `"key" :` and returns the offset of its value.
    private func validateMemberKey(_ i: Int) throws -> Int {
        guard i < count, base[i] == ASCII.quote else { throw invalidJSON() }
        var i = try skipStringValidating(i)
        i = skipWhitespace(i)
        guard i < count, base[i] == ASCII.colon else { throw invalidJSON() }
        return skipWhitespace(i + 1)
    }

    /// Skips a string starting at its opening quote, checking only its shape (closed,
    /// `\u` followed by four bytes none of which is a quote). Returns the offset after
    /// the closing quote.
    private func skipStringValidating(_ start: Int) throws -> Int {
        var i = start + 1
        while i < count {
            i = nextQuoteOrBackslash(i)
            guard i < count else { break }
            let c = base[i]
            if c == ASCII.quote { return i + 1 }
            if c == ASCII.backslash {
                guard i + 1 < count else { throw invalidJSON() }
                if base[i + 1] == ASCII.u {
                    guard i + 6 <= count else { throw invalidJSON() }
                    for k in 2..<6 where base[i + k] == ASCII.quote { throw invalidJSON() }
                    i += 6
                } else {
                    i += 2
                }
            } else {
                i += 1
            }
        }
        throw invalidJSON()
    }

    // MARK: Skipping validated values

    /// The offset after the string whose opening quote is at `start` (validated input).
    @inline(__always)
    func skipString(_ start: Int) -> Int {
        var i = start + 1
        while i < count {
            i = nextQuoteOrBackslash(i)
            guard i < count else { break }
            let c = base[i]
            if c == ASCII.quote { return i + 1 }
            if c == ASCII.backslash {
                i += (i + 1 < count && base[i + 1] == ASCII.u) ? 6 : 2
            } else {
                i += 1
            }
        }
        return count
    }

    /// The offset after the value at `start` (validated input). Iterative.
    func skipValue(_ start: Int) -> Int {
        guard start < count else { return count }
        switch base[start] {
        case ASCII.quote:
            return skipString(start)
        case ASCII.openBrace, ASCII.openBracket:
            var depth = 0
            var i = start
            while i < count {
                let c = base[i]
                switch c {
                case ASCII.quote:
                    i = skipString(i)
                    continue
                case ASCII.openBrace, ASCII.openBracket:
                    depth += 1
                case ASCII.closeBrace, ASCII.closeBracket:
                    depth -= 1
                    if depth == 0 { return i + 1 }
                default:
                    break
                }
                i += 1
            }
            return count
        case ASCII.t, ASCII.n:
            return min(start + 4, count)
        case ASCII.f:
            return min(start + 5, count)
        default:
            var i = start + 1
            while i < count, JSONInput.isNumberByte(base[i]) { i += 1 }
            return i
        }
    }

    /// Where the element or member after a value ending at `end` starts, or `nil` when the
    /// container closes there (validated input: `,` or the closing bracket follows,
    /// trailing commas allowed).
    @inline(__always)
    func nextElement(after end: Int) -> Int? {
        var i = skipWhitespace(end)
        guard i < count, base[i] == ASCII.comma else { return nil }
        i = skipWhitespace(i + 1)
        guard i < count else { return nil }
        let c = base[i]
        if c == ASCII.closeBracket || c == ASCII.closeBrace { return nil }
        return i
    }

    // MARK: Strings

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

    // MARK: Numbers

    /// The end of the number token at `start` (Foundation's scanner's lax token:
    /// digits, `.`, `+`, `-`, `e`, `E`).
    @inline(__always)
    func numberEnd(_ start: Int) -> Int {
        var i = start + 1
        while i < count, JSONInput.isNumberByte(base[i]) { i += 1 }
        return i
    }

    /// The token as a string (for the slow parsers).
    func tokenString(_ start: Int, _ end: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: base + start, count: end - start), as: UTF8.self)
    }

    /// Whether `start..<end` is a number in JSON's grammar.
    func isValidNumber(_ start: Int, _ end: Int) -> Bool {
        var i = start
        if i < end, base[i] == ASCII.minus { i += 1 }
        guard i < end else { return false }
        if base[i] == ASCII.zero {
            i += 1
        } else if base[i] > ASCII.zero && base[i] <= ASCII.nine {
            while i < end, base[i] >= ASCII.zero && base[i] <= ASCII.nine { i += 1 }
        } else {
            return false
        }
        if i < end, base[i] == ASCII.dot {
            i += 1
            let digits = i
            while i < end, base[i] >= ASCII.zero && base[i] <= ASCII.nine { i += 1 }
            guard i > digits else { return false }
        }
        if i < end, base[i] == ASCII.lowerE || base[i] == ASCII.upperE {
            i += 1
            if i < end, base[i] == ASCII.plus || base[i] == ASCII.minus { i += 1 }
            let digits = i
            while i < end, base[i] >= ASCII.zero && base[i] <= ASCII.nine { i += 1 }
            guard i > digits else { return false }
        }
        return i == end
    }

    /// Whether a number that parsed to zero is a true zero, by Foundation's test (which
    /// rejects non-zero numbers that round to zero): bytes in groups of four from the
    /// front, then the last few from the back; a non-zero digit says no, an exponent
    /// mark says yes. Kept exactly, quirk included ("0e5" is not a true zero there).
    func isTrueZero(_ start: Int, _ end: Int) -> Bool {
        @inline(__always) func check(_ i: Int) -> Bool? {
            let c = base[i]
            if c > ASCII.zero && c <= ASCII.nine { return false }
            if c == ASCII.lowerE || c == ASCII.upperE { return true }
            return nil
        }
        var i = start
        while end - i >= 4 {
            for k in 0..<4 { if let answer = check(i + k) { return answer } }
            i += 4
        }
        var k = end - 1
        while k >= i {
            if let answer = check(k) { return answer }
            k -= 1
        }
        return true
    }

    /// A plain integer token (`-?(0|[1-9][0-9]*)`) read into `T`, or `nil` if the token
    /// is not plain or overflows `T`.
    @inline(__always)
    func plainInteger<T: FixedWidthInteger>(_ start: Int, _ end: Int, as: T.Type) -> T? {
        var i = start
        let negative = base[i] == ASCII.minus
        if negative { i += 1 }
        guard i < end else { return nil }
        if base[i] == ASCII.zero {
            return i + 1 == end ? 0 : nil
        }
        var value: T = 0
        if negative {
            while i < end {
                let d = base[i] &- ASCII.zero
                guard d <= 9 else { return nil }
                let (m, o1) = value.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.subtractingReportingOverflow(T(d))
                guard !o1, !o2 else { return nil }
                value = s
                i += 1
            }
        } else {
            while i < end {
                let d = base[i] &- ASCII.zero
                guard d <= 9 else { return nil }
                let (m, o1) = value.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.addingReportingOverflow(T(d))
                guard !o1, !o2 else { return nil }
                value = s
                i += 1
            }
        }
        return value
    }
}
