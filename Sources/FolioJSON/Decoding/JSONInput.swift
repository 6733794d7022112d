import Foundation

// The bytes being decoded and the low-level readers over them (the structural
// validator, strings and numbers are in the `JSONInput+` files beside this one; the value
// skipper is here). Offsets are `Int`s into the buffer; every read is bounds checked
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
    DecodingError.dataCorrupted(
        DecodingError.Context(codingPath: [], debugDescription: "The given data was not valid JSON."))
}

/// Input nested deeper than the decoder's limit: dataCorrupted at the root, as Foundation
/// reports it, with a message that names the limit (it is lower than Foundation's).
func tooDeep(_ maximumDepth: Int) -> DecodingError {
    DecodingError.dataCorrupted(
        DecodingError.Context(
            codingPath: [],
            debugDescription:
                "The given data was not valid JSON: it nests arrays and objects deeper than maximumDepth (\(maximumDepth))."
        ))
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
        (b >= ASCII.zero && b <= ASCII.nine) || b == ASCII.dot || b == ASCII.minus || b == ASCII.plus
            || b == ASCII.lowerE || b == ASCII.upperE
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
}

extension JSONInput {
    /// A `null`, the value of a `superDecoder(forKey:)` whose key is absent.
    // Read-only after initialization.
    nonisolated(unsafe) static let null: JSONInput = {
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 4)
        for (i, b) in "null".utf8.enumerated() { pointer[i] = b }
        return JSONInput(UnsafeRawBufferPointer(start: pointer, count: 4))
    }()
}
