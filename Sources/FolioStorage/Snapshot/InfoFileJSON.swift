/// The info file read exactly as Docs/Format.md §2 defines it: one JSON text by RFC 8259's
/// grammar, in UTF-8, whose value is an object with no member name twice; its members are
/// returned by name, strings unescaped and numbers as their exact digits.
///
/// FolioStorage depends on nothing, and Foundation's `JSONDecoder` is not exact enough here:
/// it reads a number through `Double` (so `2.00000000000000000001` is 2), takes the first of
/// two members with one name, and accepts what is not JSON (a trailing comma, a byte order
/// mark). A reader of the specification has to get the same answer as the engine, so the
/// engine reads the file by the grammar alone.
struct InfoFileJSON {
    /// Why the bytes are not an info file's JSON, and where.
    struct Failure: Error, Equatable, CustomStringConvertible {
        /// The offset of the byte where reading stopped.
        var offset: Int
        /// What was wrong there.
        var reason: String

        var description: String { "\(reason) at byte \(offset)" }
    }

    /// A member's value, as far as the info file needs it.
    enum Value: Equatable {
        /// A string, unescaped, as UTF-8.
        case string([UInt8])
        /// A number, exactly as written.
        case number(Number)
        /// `true`, `false`, `null`, an array or an object (only checked for syntax).
        case other
    }

    /// A JSON number as written: its sign, its digits with the decimal point removed, how
    /// many of them followed the point, and its exponent.
    struct Number: Equatable {
        var negative: Bool
        /// Every digit of the integer and fraction parts, as values 0-9.
        var digits: [UInt8]
        var fractionDigits: Int
        /// The exponent, saturated far beyond any value that could matter here.
        var exponent: Int

        /// The value if it is a whole number from 0 to `UInt32.max`; `.notWhole` or
        /// `.outOfRange` otherwise. Exact: no floating point is involved.
        var wholeValue: WholeValue {
            var significant = digits.drop { $0 == 0 }
            guard !significant.isEmpty else { return .value(0) }  // 0, -0, 0.0e5
            var scale = exponent - fractionDigits
            while significant.last == 0 {
                significant.removeLast()
                scale += 1
            }
            guard scale >= 0 else { return .notWhole }
            guard !negative, significant.count + scale <= 10 else { return .outOfRange }
            var value: UInt64 = 0
            for digit in significant { value = value * 10 + UInt64(digit) }
            for _ in 0..<scale { value *= 10 }
            return value <= UInt64(UInt32.max) ? .value(UInt32(value)) : .outOfRange
        }
    }

    /// What a number is as a format version.
    enum WholeValue: Equatable {
        case value(UInt32)
        case notWhole
        case outOfRange
    }

    /// Exponents are clamped here: the longest meaningful scale is a few digits, and a
    /// clamped value keeps `exponent - fractionDigits` from overflowing.
    private static let exponentLimit = 1 << 40

    private let bytes: [UInt8]
    private var index = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The top-level object's members, in file order. Throws if the bytes are not one JSON
    /// text whose value is an object, or if a member name appears twice (names compared as
    /// unescaped UTF-8 bytes, with no Unicode normalization).
    static func members(of bytes: [UInt8]) throws(Failure) -> [(name: [UInt8], value: Value)] {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw Failure(offset: 0, reason: "not valid UTF-8")
        }
        var reader = InfoFileJSON(bytes)
        reader.skipWhitespace()
        guard reader.current == UInt8(ascii: "{") else { throw reader.fail("expected an object") }
        reader.index += 1
        var members: [(name: [UInt8], value: Value)] = []
        var names = Set<[UInt8]>()
        reader.skipWhitespace()
        if reader.current == UInt8(ascii: "}") {
            reader.index += 1
        } else {
            while true {
                reader.skipWhitespace()
                let nameOffset = reader.index
                let name = try reader.memberName()
                guard names.insert(name).inserted else {
                    throw Failure(
                        offset: nameOffset,
                        reason: "member \"\(String(decoding: name, as: UTF8.self))\" appears more than once")
                }
                reader.skipWhitespace()
                members.append((name, try reader.memberValue()))
                reader.skipWhitespace()
                if reader.current == UInt8(ascii: ",") {
                    reader.index += 1
                    continue
                }
                guard reader.current == UInt8(ascii: "}") else { throw reader.fail("expected ',' or '}'") }
                reader.index += 1
                break
            }
        }
        reader.skipWhitespace()
        guard reader.current == nil else { throw reader.fail("text after the object") }
        return members
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func fail(_ reason: String) -> Failure {
        Failure(offset: index, reason: current == nil ? "unexpected end" : reason)
    }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    /// A member name and its colon.
    private mutating func memberName() throws(Failure) -> [UInt8] {
        guard current == UInt8(ascii: "\"") else { throw fail("expected a member name") }
        let name = try string()
        skipWhitespace()
        guard current == UInt8(ascii: ":") else { throw fail("expected ':'") }
        index += 1
        return name
    }

    /// A top-level member's value: strings and numbers kept, anything else only checked.
    private mutating func memberValue() throws(Failure) -> Value {
        switch current {
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "-"), .some(UInt8(ascii: "0")...UInt8(ascii: "9")): return .number(try number())
        default:
            try skipValue()
            return .other
        }
    }

    /// Checks one value of any kind. Iterative, so no nesting depth can exhaust the stack
    /// and none needs a limit.
    private mutating func skipValue() throws(Failure) {
        var open: [Bool] = []  // one entry per open container: true for an object
        while true {
            skipWhitespace()
            switch current {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = current == UInt8(ascii: "{")
                index += 1
                skipWhitespace()
                if current == UInt8(ascii: isObject ? "}" : "]") {
                    index += 1
                } else {
                    open.append(isObject)
                    if isObject {
                        skipWhitespace()
                        _ = try memberName()
                    }
                    continue
                }
            case UInt8(ascii: "\""): _ = try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "-"), .some(UInt8(ascii: "0")...UInt8(ascii: "9")): _ = try number()
            default: throw fail("expected a value")
            }
            // A value ended: close what it ends, or go on to the next element or member.
            while true {
                guard let isObject = open.last else { return }
                skipWhitespace()
                if current == UInt8(ascii: ",") {
                    index += 1
                    if isObject {
                        skipWhitespace()
                        _ = try memberName()
                    }
                    break
                }
                guard current == UInt8(ascii: isObject ? "}" : "]") else {
                    throw fail(isObject ? "expected ',' or '}'" : "expected ',' or ']'")
                }
                index += 1
                open.removeLast()
            }
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for byte in expected {
            guard current == byte else { throw fail("expected \(word)") }
            index += 1
        }
    }

    /// A string from its opening quote, unescaped to UTF-8. Control characters must be
    /// escaped; a `\u` escape must denote a Unicode scalar (a surrogate only in a pair).
    private mutating func string() throws(Failure) -> [UInt8] {
        index += 1
        var result: [UInt8] = []
        while true {
            guard let byte = current else { throw fail("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return result
            case UInt8(ascii: "\\"):
                index += 1
                let escaped: UInt8
                switch current {
                case UInt8(ascii: "\""): escaped = UInt8(ascii: "\"")
                case UInt8(ascii: "\\"): escaped = UInt8(ascii: "\\")
                case UInt8(ascii: "/"): escaped = UInt8(ascii: "/")
                case UInt8(ascii: "b"): escaped = 0x08
                case UInt8(ascii: "f"): escaped = 0x0C
                case UInt8(ascii: "n"): escaped = 0x0A
                case UInt8(ascii: "r"): escaped = 0x0D
                case UInt8(ascii: "t"): escaped = 0x09
                case UInt8(ascii: "u"):
                    index += 1
                    result.append(contentsOf: String(Character(try unicodeEscape())).utf8)
                    continue
                default: throw fail("invalid escape")
                }
                index += 1
                result.append(escaped)
            case 0x00..<0x20:
                throw fail("unescaped control character in a string")
            default:
                index += 1
                result.append(byte)
            }
        }
    }

    /// The scalar of a `\u` escape whose four hex digits start at `index` (and of the low
    /// surrogate's escape that must follow a high surrogate).
    private mutating func unicodeEscape() throws(Failure) -> Unicode.Scalar {
        let first = try hexQuad()
        if (0xD800...0xDBFF).contains(first) {
            guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                throw fail("unpaired surrogate escape")
            }
            index += 2
            let second = try hexQuad()
            guard (0xDC00...0xDFFF).contains(second) else { throw fail("unpaired surrogate escape") }
            let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            return Unicode.Scalar(value)!  // in 0x10000...0x10FFFF by construction
        }
        guard let scalar = Unicode.Scalar(first) else { throw fail("unpaired surrogate escape") }
        return scalar
    }

    private mutating func hexQuad() throws(Failure) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current, let digit = Self.hexDigit(byte) else { throw fail("invalid \\u escape") }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A number by RFC 8259's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func number() throws(Failure) -> Number {
        var number = Number(negative: false, digits: [], fractionDigits: 0, exponent: 0)
        if current == UInt8(ascii: "-") {
            number.negative = true
            index += 1
        }
        guard let first = current, Self.isDigit(first) else { throw fail("expected a digit") }
        if first == UInt8(ascii: "0") {
            number.digits.append(0)
            index += 1
        } else {
            while let byte = current, Self.isDigit(byte) {
                number.digits.append(byte - UInt8(ascii: "0"))
                index += 1
            }
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let byte = current, Self.isDigit(byte) else { throw fail("expected a digit after '.'") }
            while let byte = current, Self.isDigit(byte) {
                number.digits.append(byte - UInt8(ascii: "0"))
                number.fractionDigits += 1
                index += 1
            }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            var negative = false
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") {
                negative = current == UInt8(ascii: "-")
                index += 1
            }
            guard let byte = current, Self.isDigit(byte) else { throw fail("expected a digit in the exponent") }
            var exponent = 0
            while let byte = current, Self.isDigit(byte) {
                exponent = min(exponent * 10 + Int(byte - UInt8(ascii: "0")), Self.exponentLimit)
                index += 1
            }
            number.exponent = negative ? -exponent : exponent
        }
        return number
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
