/// A JSON value as `dump` prints it. Numbers keep the exact text they were stored with (no
/// round trip through `Double`), strings are decoded and re-escaped minimally, and object
/// members are printed sorted by key (by Unicode code point, i.e. UTF-8 byte order).
indirect enum JSONValue: Sendable, Equatable {
    case object([(key: String, value: JSONValue)])
    case array([JSONValue])
    case string(String)
    /// The number's text, as it appears in the source (validated against the JSON grammar).
    case number(String)
    case bool(Bool)
    case null

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.array(let a), .array(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null): true
        default: false
        }
    }

    // MARK: Printing

    /// One line, no spaces: `{"id":1,"record":{...},"version":"2025-01"}`.
    func compact() -> String {
        var out = ""
        write(to: &out, indent: nil, level: 0)
        return out
    }

    /// Indented by two spaces per level, `"key": value`, one member or element per line;
    /// empty containers as `{}` and `[]`.
    func pretty() -> String {
        var out = ""
        write(to: &out, indent: "  ", level: 0)
        return out
    }

    private func write(to out: inout String, indent: String?, level: Int) {
        func newline(_ level: Int) {
            guard let indent else { return }
            out += "\n" + String(repeating: indent, count: level)
        }
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let text): out += text
        case .string(let text): Self.quote(text, into: &out)
        case .array(let elements):
            if elements.isEmpty { out += "[]"; return }
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                newline(level + 1)
                element.write(to: &out, indent: indent, level: level + 1)
            }
            newline(level)
            out += "]"
        case .object(let members):
            if members.isEmpty { out += "{}"; return }
            out += "{"
            let sorted = members.enumerated().sorted { a, b in
                if a.element.key == b.element.key { return a.offset < b.offset }
                return a.element.key.utf8.lexicographicallyPrecedes(b.element.key.utf8)
            }
            for (index, member) in sorted.enumerated() {
                if index > 0 { out += "," }
                newline(level + 1)
                Self.quote(member.element.key, into: &out)
                out += indent == nil ? ":" : ": "
                member.element.value.write(to: &out, indent: indent, level: level + 1)
            }
            newline(level)
            out += "}"
        }
    }

    private static func quote(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    // MARK: Parsing

    /// Why bytes are not one JSON document.
    struct SyntaxError: Error, Sendable, CustomStringConvertible {
        let offset: Int
        let reason: String
        var description: String { "\(reason) at byte \(offset)" }
    }

    /// Parses exactly one JSON document (surrounding whitespace allowed).
    static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> JSONValue {
        var parser = Parser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.fail("unexpected text after the value") }
        return value
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0
        /// Deeper nesting is refused rather than risking the stack.
        static let maximumDepth = 512

        func fail(_ reason: String) -> SyntaxError { SyntaxError(offset: index, reason: reason) }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func expect(_ literal: String, _ value: JSONValue) throws(SyntaxError) -> JSONValue {
            let expected = Array(literal.utf8)
            guard bytes.count - index >= expected.count, Array(bytes[index..<(index + expected.count)]) == expected
            else {
                throw fail("invalid literal")
            }
            index += expected.count
            return value
        }

        mutating func value(depth: Int) throws(SyntaxError) -> JSONValue {
            guard depth < Self.maximumDepth else { throw fail("nesting deeper than \(Self.maximumDepth) levels") }
            guard let byte = current else { throw fail("unexpected end") }
            switch byte {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try expect("true", .bool(true))
            case UInt8(ascii: "f"): return try expect("false", .bool(false))
            case UInt8(ascii: "n"): return try expect("null", .null)
            default: return .number(try number())
            }
        }

        mutating func object(depth: Int) throws(SyntaxError) -> JSONValue {
            index += 1
            var members: [(key: String, value: JSONValue)] = []
            skipWhitespace()
            if current == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                let key = try string()
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                skipWhitespace()
                members.append((key, try value(depth: depth + 1)))
                skipWhitespace()
                if current == UInt8(ascii: ",") { index += 1; continue }
                if current == UInt8(ascii: "}") { index += 1; return .object(members) }
                throw fail("expected ',' or '}'")
            }
        }

        mutating func array(depth: Int) throws(SyntaxError) -> JSONValue {
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if current == UInt8(ascii: "]") { index += 1; return .array(elements) }
            while true {
                skipWhitespace()
                elements.append(try value(depth: depth + 1))
                skipWhitespace()
                if current == UInt8(ascii: ",") { index += 1; continue }
                if current == UInt8(ascii: "]") { index += 1; return .array(elements) }
                throw fail("expected ',' or ']'")
            }
        }

        mutating func number() throws(SyntaxError) -> String {
            let start = index
            func digits() -> Int {
                let from = index
                while let byte = current, byte >= 0x30 && byte <= 0x39 { index += 1 }
                return index - from
            }
            if current == UInt8(ascii: "-") { index += 1 }
            if current == UInt8(ascii: "0") {
                index += 1
            } else if digits() == 0 {
                throw fail("invalid value")
            }
            if current == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw fail("invalid number") }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw fail("invalid number") }
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            guard bytes.count - index >= 4 else { throw fail("short \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case 0x30...0x39: digit = byte - 0x30
                case 0x41...0x46: digit = byte - 0x41 + 10
                case 0x61...0x66: digit = byte - 0x61 + 10
                default: throw fail("invalid \\u escape")
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        mutating func string() throws(SyntaxError) -> String {
            index += 1
            var scalars = String.UnicodeScalarView()
            var run = index
            func flushRun(to end: Int) throws(SyntaxError) {
                guard run < end else { return }
                // Validate the raw UTF-8 of the run.
                guard let text = String(validating: bytes[run..<end], as: UTF8.self) else {
                    throw fail("invalid UTF-8 in a string")
                }
                scalars.append(contentsOf: text.unicodeScalars)
            }
            while true {
                guard let byte = current else { throw fail("unterminated string") }
                if byte == UInt8(ascii: "\"") {
                    try flushRun(to: index)
                    index += 1
                    return String(scalars)
                }
                if byte < 0x20 { throw fail("control character in a string") }
                if byte != UInt8(ascii: "\\") { index += 1; continue }
                try flushRun(to: index)
                index += 1
                guard let escape = current else { throw fail("unterminated escape") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else {
                            throw fail("unpaired surrogate")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("unpaired surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fail("unpaired surrogate") }
                    scalars.append(scalar)
                default:
                    throw fail("invalid escape")
                }
                run = index
            }
        }
    }
}
