import Foundation

/// How a container puts a child: through the container's own methods (`encode(_:forKey:)`,
/// nested containers), as a separate `DiffGenerated` value (`encode(DiffGenerated)`), or through a
/// `superEncoder`/`superDecoder`. Stored in the shape so encoding and decoding agree.
enum ChildMode: Sendable, CustomStringConvertible {
    case direct, boxed, superCoder
    var description: String {
        switch self {
        case .direct: return "d"
        case .boxed: return "b"
        case .superCoder: return "s"
        }
    }
}

struct ShapeField: Sendable {
    var name: String
    var shape: DiffShape
    var mode: ChildMode
}

struct ShapeCase: Sendable {
    var name: String
    /// Associated values; a `nil` label is written `_0`, `_1`, ... as synthesized Codable does.
    var fields: [(label: String?, shape: DiffShape)]

    func key(_ index: Int) -> String { fields[index].label ?? "_\(index)" }
}

/// The description of a Codable type, built at run time because Swift cannot make types.
indirect enum DiffShape: Sendable, CustomStringConvertible {
    case bool, string
    case int8, int16, int32, int64, int
    case uint8, uint16, uint32, uint64, uint
    case float, double, date, data
    case optional(DiffShape)
    case array(DiffShape, ChildMode)
    case stringDictionary(DiffShape)
    case intDictionary(DiffShape)
    case structure([ShapeField])
    case enumeration([ShapeCase])

    static let scalars: [DiffShape] = [
        .bool, .string, .int8, .int16, .int32, .int64, .int, .uint8, .uint16, .uint32, .uint64, .uint, .float, .double,
        .date, .data,
    ]

    var isOptional: Bool { if case .optional = self { return true } else { return false } }

    var hasDictionary: Bool {
        switch self {
        case .stringDictionary, .intDictionary: return true
        case .optional(let s), .array(let s, _): return s.hasDictionary
        case .structure(let fields): return fields.contains { $0.shape.hasDictionary }
        case .enumeration(let cases): return cases.contains { $0.fields.contains { $0.shape.hasDictionary } }
        default: return false
        }
    }

    var description: String {
        switch self {
        case .bool: return "Bool"
        case .string: return "String"
        case .int8: return "Int8"
        case .int16: return "Int16"
        case .int32: return "Int32"
        case .int64: return "Int64"
        case .int: return "Int"
        case .uint8: return "UInt8"
        case .uint16: return "UInt16"
        case .uint32: return "UInt32"
        case .uint64: return "UInt64"
        case .uint: return "UInt"
        case .float: return "Float"
        case .double: return "Double"
        case .date: return "Date"
        case .data: return "Data"
        case .optional(let s): return "\(s)?"
        case .array(let s, let m): return "[\(s)]\(m)"
        case .stringDictionary(let s): return "[String: \(s)]"
        case .intDictionary(let s): return "[Int: \(s)]"
        case .structure(let fields):
            return "struct{"
                + fields.map { "\(String(reflecting: $0.name))/\($0.mode): \($0.shape)" }.joined(separator: ", ") + "}"
        case .enumeration(let cases):
            return "enum{"
                + cases.map { c in
                    "\(c.name)(" + c.fields.map { "\($0.label ?? "_"): \($0.shape)" }.joined(separator: ", ") + ")"
                }.joined(separator: " | ") + "}"
        }
    }
}

/// A value of a shape.
indirect enum DiffValue: Sendable, CustomStringConvertible {
    case bool(Bool), string(String)
    case int8(Int8), int16(Int16), int32(Int32), int64(Int64), int(Int)
    case uint8(UInt8), uint16(UInt16), uint32(UInt32), uint64(UInt64), uint(UInt)
    case float(Float), double(Double), date(Date), data(Data)
    case none, some(DiffValue)
    case array([DiffValue])
    case stringDictionary([String: DiffValue])
    case intDictionary([Int: DiffValue])
    case structure([DiffValue])
    case enumeration(Int, [DiffValue])

    var description: String {
        switch self {
        case .bool(let v): return "\(v)"
        case .string(let v): return String(reflecting: v)
        case .int8(let v): return "\(v)"
        case .int16(let v): return "\(v)"
        case .int32(let v): return "\(v)"
        case .int64(let v): return "\(v)"
        case .int(let v): return "\(v)"
        case .uint8(let v): return "\(v)"
        case .uint16(let v): return "\(v)"
        case .uint32(let v): return "\(v)"
        case .uint64(let v): return "\(v)"
        case .uint(let v): return "\(v)"
        case .float(let v): return "Float(\(v))"
        case .double(let v): return "Double(\(v))"
        case .date(let v): return "Date(\(v.timeIntervalSinceReferenceDate))"
        case .data(let v): return "Data(\(Array(v)))"
        case .none: return "nil"
        case .some(let v): return "some(\(v))"
        case .array(let vs): return "[" + vs.map(\.description).joined(separator: ", ") + "]"
        case .stringDictionary(let d):
            return "[" + d.map { "\(String(reflecting: $0.key)): \($0.value)" }.joined(separator: ", ") + "]"
        case .intDictionary(let d): return "[" + d.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "]"
        case .structure(let vs): return "{" + vs.map(\.description).joined(separator: ", ") + "}"
        case .enumeration(let c, let vs): return ".case\(c)(" + vs.map(\.description).joined(separator: ", ") + ")"
        }
    }
}

/// Strict equality: strings by Unicode scalars (not canonical equivalence), floats by bit
/// pattern (so `-0.0 != 0.0`), any NaN equal to any NaN.
func strictlyEqual(_ a: DiffValue, _ b: DiffValue) -> Bool {
    switch (a, b) {
    case (.bool(let x), .bool(let y)): return x == y
    case (.string(let x), .string(let y)): return x.unicodeScalars.elementsEqual(y.unicodeScalars)
    case (.int8(let x), .int8(let y)): return x == y
    case (.int16(let x), .int16(let y)): return x == y
    case (.int32(let x), .int32(let y)): return x == y
    case (.int64(let x), .int64(let y)): return x == y
    case (.int(let x), .int(let y)): return x == y
    case (.uint8(let x), .uint8(let y)): return x == y
    case (.uint16(let x), .uint16(let y)): return x == y
    case (.uint32(let x), .uint32(let y)): return x == y
    case (.uint64(let x), .uint64(let y)): return x == y
    case (.uint(let x), .uint(let y)): return x == y
    case (.float(let x), .float(let y)): return (x.isNaN && y.isNaN) || x.bitPattern == y.bitPattern
    case (.double(let x), .double(let y)): return sameDouble(x, y)
    case (.date(let x), .date(let y)):
        return sameDouble(x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
    case (.data(let x), .data(let y)): return x == y
    case (.none, .none): return true
    case (.some(let x), .some(let y)): return strictlyEqual(x, y)
    case (.array(let xs), .array(let ys)):
        return xs.count == ys.count && zip(xs, ys).allSatisfy { strictlyEqual($0, $1) }
    case (.structure(let xs), .structure(let ys)):
        return xs.count == ys.count && zip(xs, ys).allSatisfy { strictlyEqual($0, $1) }
    case (.enumeration(let c, let xs), .enumeration(let d, let ys)):
        return c == d && xs.count == ys.count && zip(xs, ys).allSatisfy { strictlyEqual($0, $1) }
    case (.stringDictionary(let x), .stringDictionary(let y)):
        return x.count == y.count
            && x.allSatisfy { key, value in
                guard let index = y.index(forKey: key) else { return false }
                return y[index].key.unicodeScalars.elementsEqual(key.unicodeScalars)
                    && strictlyEqual(value, y[index].value)
            }
    case (.intDictionary(let x), .intDictionary(let y)):
        return x.count == y.count && x.allSatisfy { key, value in y[key].map { strictlyEqual(value, $0) } ?? false }
    default: return false
    }
}

func sameDouble(_ x: Double, _ y: Double) -> Bool { (x.isNaN && y.isNaN) || x.bitPattern == y.bitPattern }

/// What values a generator makes: the default round trip needs values every strategy
/// writes exactly; strategy tests narrow dates (ISO 8601 is whole seconds) or add non-finite floats.
struct ValueOptions: Sendable {
    var nonFinite = false
    var wholeSecondDates = false
    var camelCaseNames = false
}

/// Shapes and values from a seed.
struct DiffGenerator {
    var random: DiffRandom
    var options: ValueOptions

    init(seed: UInt64, options: ValueOptions = ValueOptions()) {
        random = DiffRandom(seed: seed)
        self.options = options
    }

    // MARK: Shapes

    mutating func shape(depth: Int = 4) -> DiffShape {
        if depth <= 0 || random.chance(2, in: 5) { return random.pick(DiffShape.scalars) }
        switch random.below(7) {
        case 0: return .optional(nonOptionalShape(depth: depth - 1))
        case 1: return .array(shape(depth: depth - 1), mode())
        case 2: return .stringDictionary(shape(depth: depth - 1))
        case 3: return .intDictionary(shape(depth: depth - 1))
        case 4: return .enumeration(cases(depth: depth - 1))
        default: return .structure(fields(depth: depth - 1))
        }
    }

    mutating func nonOptionalShape(depth: Int) -> DiffShape {
        while true {
            let s = shape(depth: depth)
            if !s.isOptional { return s }
        }
    }

    mutating func mode() -> ChildMode { random.pick([.direct, .direct, .boxed, .superCoder]) }

    mutating func fields(depth: Int) -> [ShapeField] {
        (0..<random.below(5)).map { i in
            ShapeField(name: fieldName(i), shape: shape(depth: depth), mode: mode())
        }
    }

    mutating func cases(depth: Int) -> [ShapeCase] {
        (0..<(1 + random.below(3))).map { i in
            let labels = random.chance(1, in: 2)
            let fields: [(label: String?, shape: DiffShape)] = (0..<random.below(3)).map { j in
                (labels ? "v\(j)" : nil, shape(depth: depth))
            }
            return ShapeCase(
                name: random.pick(["a", "case", "some", "none", "value", "x_y", "émoji😀"]) + "\(i)", fields: fields)
        }
    }

    static let namePieces = [
        "id", "name", "x", "", "é", "e\u{301}", "😀", "\"", "\\", "/", "\n", "\u{0}", "\u{1F}", "\t", "key with space",
        "\u{7F}", "\u{2028}", "𝄞",
    ]
    static let camelNames = [
        "imageURL", "userID", "firstName", "a", "aB", "ABC", "already_snake", "_leading", "trailing_", "__double",
        "x1Y2", "URLString", "oneTwoThree", "ünïcodeKey", "HTTPResponseCode", "isOK",
    ]

    mutating func fieldName(_ index: Int) -> String {
        if options.camelCaseNames { return random.pick(DiffGenerator.camelNames) + (index == 0 ? "" : "F\(index)") }
        let piece = random.pick(DiffGenerator.namePieces)
        // The index keeps names in one struct distinct (even under canonical equivalence).
        return random.chance(1, in: 2) ? "\(piece)\(index)" : "f\(index)\(piece)"
    }

    // MARK: Values

    mutating func value(_ shape: DiffShape, depth: Int = 0) -> DiffValue {
        switch shape {
        case .bool: return .bool(random.chance(1, in: 2))
        case .string: return .string(string())
        case .int8: return .int8(integer(Int8.self))
        case .int16: return .int16(integer(Int16.self))
        case .int32: return .int32(integer(Int32.self))
        case .int64: return .int64(integer(Int64.self))
        case .int: return .int(integer(Int.self))
        case .uint8: return .uint8(integer(UInt8.self))
        case .uint16: return .uint16(integer(UInt16.self))
        case .uint32: return .uint32(integer(UInt32.self))
        case .uint64: return .uint64(integer(UInt64.self))
        case .uint: return .uint(integer(UInt.self))
        case .float: return .float(float())
        case .double: return .double(double())
        case .date: return .date(date())
        case .data: return .data(Data((0..<random.below(12)).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
        case .optional(let inner): return random.chance(1, in: 3) ? .none : .some(value(inner, depth: depth + 1))
        case .array(let element, _): return .array((0..<count()).map { _ in value(element, depth: depth + 1) })
        case .stringDictionary(let element):
            var d: [String: DiffValue] = [:]
            for _ in 0..<count() { d[string()] = value(element, depth: depth + 1) }
            return .stringDictionary(d)
        case .intDictionary(let element):
            var d: [Int: DiffValue] = [:]
            for _ in 0..<count() { d[integer(Int.self)] = value(element, depth: depth + 1) }
            return .intDictionary(d)
        case .structure(let fields): return .structure(fields.map { value($0.shape, depth: depth + 1) })
        case .enumeration(let cases):
            let c = random.below(cases.count)
            return .enumeration(c, cases[c].fields.map { value($0.shape, depth: depth + 1) })
        }
    }

    mutating func count() -> Int { random.chance(1, in: 6) ? 0 : 1 + random.below(4) }

    mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T {
        switch random.below(8) {
        case 0: return .min
        case 1: return .max
        case 2: return 0
        case 3: return T.isSigned ? -1 : 1
        case 4: return T(truncatingIfNeeded: random.below(1000))
        case 5:
            return T.isSigned
                ? T(truncatingIfNeeded: -random.below(1000)) : .max - T(truncatingIfNeeded: random.below(100))
        default: return T(truncatingIfNeeded: random.next())
        }
    }

    static let specialDoubles: [Double] = [
        0, -0.0, 1, -1, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 5e-324, -5e-324, 1e300, 1e-300, 1e23, 9_007_199_254_740_993,
        9_007_199_254_740_992,
        123_456_789_012_345_680_000, 1.7976931348623157e308, -1.7976931348623157e308, 2.2250738585072014e-308,
        2.225073858507201e-308,
        .leastNonzeroMagnitude, .greatestFiniteMagnitude, .leastNormalMagnitude, .pi, .ulpOfOne, 1e21, 1e22, 1e-7, 1e-6,
        100, 1e16,
        0.000001, 123.456, 4.35, 2.5, -2.5, 1e15, 1.5e-10, Double(Int64.max), Double(UInt64.max),
    ]
    static let specialFloats: [Float] = [
        0, -0.0, 1, -1, 0.1, 1.0 / 3, 1e30, 1e-30, 16_777_217, 3.4028235e38, -3.4028235e38, 1.1754944e-38, 1e-45,
        .leastNonzeroMagnitude, .greatestFiniteMagnitude, .leastNormalMagnitude, .pi, .ulpOfOne, 1e10, 0.3, 7.0e-45,
    ]

    mutating func double() -> Double {
        if options.nonFinite && random.chance(1, in: 4) { return random.pick([.infinity, -.infinity, .nan]) }
        switch random.below(4) {
        case 0, 1: return random.pick(DiffGenerator.specialDoubles)
        case 2: return Double(random.below(2_000_001) - 1_000_000) / Double(random.pick([1, 10, 100, 1000, 7, 3]))
        default:
            // Any finite bit pattern, subnormals included.
            while true {
                let d = Double(bitPattern: random.next())
                if d.isFinite { return d }
            }
        }
    }

    mutating func float() -> Float {
        if options.nonFinite && random.chance(1, in: 4) { return random.pick([.infinity, -.infinity, .nan]) }
        switch random.below(4) {
        case 0, 1: return random.pick(DiffGenerator.specialFloats)
        case 2: return Float(random.below(20001) - 10000) / Float(random.pick([1, 10, 100, 3]))
        default:
            while true {
                let f = Float(bitPattern: UInt32(truncatingIfNeeded: random.next()))
                if f.isFinite { return f }
            }
        }
    }

    mutating func date() -> Date {
        if options.wholeSecondDates {
            // Years 1900...2300, whole seconds: what ISO 8601 with seconds can carry.
            return Date(timeIntervalSince1970: Double(random.below(13_000_000_000) - 2_208_988_800))
        }
        switch random.below(4) {
        case 0:
            return Date(
                timeIntervalSinceReferenceDate: random.pick([
                    0, -0.0, 1, -1, 0.001, 1e9, -978_307_200, 1.5, 694_224_000.123,
                ]))
        case 1: return Date(timeIntervalSince1970: Double(random.below(4_000_000_000)))
        case 2: return Date(timeIntervalSince1970: Double(random.below(4_000_000_000_000)) / 1000)
        default: return Date(timeIntervalSinceReferenceDate: double())
        }
    }

    static let stringPieces: [String] = [
        "", "a", "hello", "\"", "\\", "/", "\\/", "\u{0}", "\u{8}", "\u{C}", "\n", "\r", "\t", "\u{1}", "\u{1F}",
        "\u{7F}", "\u{80}", "\u{9F}",
        "é", "e\u{301}", "a\u{301}\u{302}\u{303}", "😀", "👨‍👩‍👧‍👦", "🇫🇷", "𝄞", "\u{10FFFF}", "\u{FFFF}", "\u{FEFF}", "\u{2028}",
        "\u{2029}",
        "日本語", "\u{D7FF}", "\u{E000}", "ﬀ", " ", "  ", "0", "-1", "1e5", "true", "null", "{", "}", "[", "]", ",", ":",
        "\\u0041", "\\ud800",
    ]

    mutating func string() -> String {
        var s = ""
        for _ in 0..<random.below(5) {
            if random.chance(1, in: 5) {
                // Any scalar (never a surrogate: String has none).
                let v = UInt32(random.below(0x110000))
                s.unicodeScalars.append(Unicode.Scalar(v) ?? "?")
            } else if random.chance(1, in: 5) {
                s.unicodeScalars.append(Unicode.Scalar(UInt8(random.below(0x20))))
            } else {
                s += random.pick(DiffGenerator.stringPieces)
            }
        }
        return s
    }
}
