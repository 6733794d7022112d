import FolioJSON

/// Whether bytes are exactly one JSON text as RFC 8259 defines it (UTF-8; any value at the
/// top level, surrounded by optional whitespace), checked without building the value. The
/// verifier uses it for the key-value store's values (Docs/Format.md §25): strict, so a
/// value it passes is read by every JSON reader, where the decoders (Foundation's and
/// Folio's) also tolerate some non-JSON, such as a trailing comma.
struct JSONSyntax {
    /// Why bytes are not one JSON text, and where.
    struct Failure: Error, Equatable, CustomStringConvertible {
        /// The offset of the byte where reading stopped.
        let offset: Int
        /// What was wrong there.
        let reason: String

        var description: String { "\(reason) at byte \(offset)" }
    }

    /// The most arrays and objects open at once: a value nested in 100 of them passes, a
    /// 101st array or object is refused, exactly as `FolioJSONDecoder` with its default
    /// limit (the key-value store's) counts. Scalars add no level.
    static let maximumDepth = FolioJSONDecoder.defaultMaximumDepth

    private let bytes: ArraySlice<UInt8>
    private var index: Int

    /// Checks that `bytes` are one JSON text; throws where and why they are not.
    static func check(_ bytes: ArraySlice<UInt8>) throws(Failure) {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw Failure(offset: 0, reason: "not valid UTF-8")
        }
        var syntax = JSONSyntax(bytes: bytes, index: bytes.startIndex)
        syntax.skipWhitespace()
        try syntax.value(depth: 0)
        syntax.skipWhitespace()
        guard syntax.current == nil else { throw syntax.fail("text after the value") }
    }

    private var current: UInt8? { index < bytes.endIndex ? bytes[index] : nil }

    private func fail(_ reason: String) -> Failure {
        Failure(offset: index - bytes.startIndex, reason: current == nil ? "unexpected end" : reason)
    }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    /// A value inside `depth` open arrays and objects.
    private mutating func value(depth: Int) throws(Failure) {
        switch current {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            // This container would be level `depth + 1`.
            guard depth < Self.maximumDepth else { throw fail("nesting deeper than \(Self.maximumDepth) levels") }
            let members = current == UInt8(ascii: "{")
            try container(closing: UInt8(ascii: members ? "}" : "]"), members: members, depth: depth)
        case UInt8(ascii: "\""): try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: try number()
        }
    }

    /// An object (`members`: name, colon, value) or an array, from its opening bracket.
    private mutating func container(closing: UInt8, members: Bool, depth: Int) throws(Failure) {
        index += 1
        skipWhitespace()
        if current == closing {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            if members {
                guard current == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                try string()
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                skipWhitespace()
            }
            try value(depth: depth + 1)
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard current == closing else { throw fail("expected ',' or '\(Character(Unicode.Scalar(closing)))'") }
            index += 1
            return
        }
    }

    private mutating func string() throws(Failure) {
        index += 1
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return
            case UInt8(ascii: "\\"):
                index += 1
                guard let escaped = current else { break }
                if escaped == UInt8(ascii: "u") {
                    for _ in 0..<4 {
                        index += 1
                        guard let digit = current, digit.isHexDigit else {
                            throw fail("expected four hexadecimal digits after \\u")
                        }
                    }
                } else if !Array(#""\/bfnrt"#.utf8).contains(escaped) {
                    throw fail("invalid escape")
                }
                index += 1
            case 0..<0x20:
                throw fail("control character in a string")
            default:
                index += 1
            }
        }
        throw fail("unterminated string")
    }

    private mutating func number() throws(Failure) {
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
        } else {
            guard try digits() > 0 else { throw fail("expected a value") }
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard try digits() > 0 else { throw fail("expected a digit after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard try digits() > 0 else { throw fail("expected a digit in the exponent") }
        }
    }

    /// Skips decimal digits; how many.
    private mutating func digits() throws(Failure) -> Int {
        let start = index
        while let byte = current, byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") { index += 1 }
        return index - start
    }

    private mutating func literal(_ word: String) throws(Failure) {
        for expected in word.utf8 {
            guard current == expected else { throw fail("invalid literal (expected \(word))") }
            index += 1
        }
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
