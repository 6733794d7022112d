import Foundation
import FolioJSON
import Testing

// Each test decodes the same bytes with FolioJSONDecoder and Foundation's JSONDecoder
// and expects the same outcome: equal values, or the same DecodingError case at the
// same coding path.

struct Person: Codable, Equatable {
    var name: String
    var age: Int
    var email: String?
    var tags: [String]
    var scores: [Double]
}

struct Team: Codable, Equatable {
    var id: Int
    var people: [Person]
    var meta: [String: Int]
    var lead: Person?
    var flag: Bool?
}

struct Record: Codable, Equatable {
    var id: Int
    var name: String
    var email: String
    var age: Int
    var score: Double
    var active: Bool
    var tags: [String]
    var createdAt: Date
}

struct AllIntegers: Codable, Equatable {
    var i: Int, i8: Int8, i16: Int16, i32: Int32, i64: Int64
    var u: UInt, u8: UInt8, u16: UInt16, u32: UInt32, u64: UInt64
}

struct OptionalIntegers: Codable, Equatable {
    var i: Int?, i8: Int8?, i16: Int16?, i32: Int32?, i64: Int64?
    var u: UInt?, u8: UInt8?, u16: UInt16?, u32: UInt32?, u64: UInt64?
    var f: Float?, d: Double?, b: Bool?, s: String?
}

struct Floats: Codable, Equatable {
    var f: Float
    var d: Double
}

struct Box<T: Codable & Equatable>: Codable, Equatable {
    var value: T
}

@Suite struct DecoderPrimitiveTests {
    @Test func integerLimitsOfEveryWidth() throws {
        func limits<T: FixedWidthInteger & Codable>(_ type: T.Type) {
            expectSame(T.self, "\(T.min)")
            expectSame(T.self, "\(T.max)")
            expectSame(T.self, "0")
            expectSame(T.self, "-0")
            // One past each end.
            expectSame(T.self, "\(Int128(T.min) - 1)")
            expectSame(T.self, "\(Int128(T.max) + 1)")
            expectSame([T].self, "[\(T.min), \(T.max), 1, 2]")
            expectSame(Box<T>.self, "{\"value\": \(Int128(T.max) + 1)}")
        }
        limits(Int.self); limits(Int8.self); limits(Int16.self); limits(Int32.self); limits(Int64.self)
        limits(UInt.self); limits(UInt8.self); limits(UInt16.self); limits(UInt32.self); limits(UInt64.self)
        try expectRoundTrip(
            AllIntegers(
                i: .min, i8: .min, i16: .min, i32: .min, i64: .min, u: .max, u8: .max, u16: .max, u32: .max, u64: .max))
        try expectRoundTrip(
            AllIntegers(i: .max, i8: .max, i16: .max, i32: .max, i64: .max, u: 0, u8: 0, u16: 0, u32: 0, u64: 0))
    }

    @Test func integersWrittenAsNonIntegers() {
        for text in [
            "1.0", "1e2", "1E2", "100e-2", "1.0e1", "1.5", "1e20", "1e-1", "0.0000", "-0.0", "-1.0", "1.",
            ".5", "01", "-01", "-", "+1", "1e", "1e+", "9223372036854775807.0", "9007199254740993.0",
            "12345678901234567890123", "1e400", "-1e400", "2147483648.0", "1.0000000000000001",
            "18446744073709551615.0", "-9223372036854775808.0", "123456789012345678.9", "1e18", "1e19",
        ] {
            expectSame(Int.self, text)
            expectSame(Int8.self, text)
            expectSame(Int32.self, text)
            expectSame(Int64.self, text)
            expectSame(UInt.self, text)
            expectSame(UInt64.self, text)
            expectSame(UInt8.self, text)
        }
    }

    @Test func doublesAndFloats() {
        let doubles: [Double] = [
            0, -0.0, 1, -1, 0.1, 1.5, 3.141592653589793, Double.leastNonzeroMagnitude, -Double.leastNonzeroMagnitude,
            Double.leastNormalMagnitude, Double.greatestFiniteMagnitude, -Double.greatestFiniteMagnitude,
            1e-300, 123456789.123456789, Double("2.2250738585072011e-308")!, Double("9007199254740993")!, 1e22, 1e23,
            0.3,
        ]
        for d in doubles {
            expectSame(Double.self, Array("\(d)".utf8), same: sameBits)
            expectSame(
                [Double].self, Array("[\(d)]".utf8),
                same: { zip($0, $1).allSatisfy { sameBits($0, $1) } && $0.count == $1.count })
        }
        let floats: [Float] = [
            0, -0.0, 1, 0.1, Float.leastNonzeroMagnitude, Float.leastNormalMagnitude, Float.greatestFiniteMagnitude,
            Float("16777217")!, 3.4028235e38,
        ]
        for f in floats {
            expectSame(Float.self, Array("\(f)".utf8), same: sameBits)
        }
        for text in [
            "1e400", "-1e400", "1e-400", "2.4703282292062327e-324", "2.4703282292062328e-324", "1e39", "1e-50", "1e-46",
            "0e10", "0.000e-999",
            "123456789012345678901234567890", "1.7976931348623157e308", "1.7976931348623159e308", "5e-324", "0.1e1",
            "1.e5",
            "-0", "-0.0", "1E+2", "1e-2", "12.5e-1", "0.30000000000000004", "16777217", "1.00000017881393432617187499",
            "true", "null", "\"1\"", "[1]", "{}", "01.5", "1.5.5", "1-2", "--1", "1e5.5",
            "0e5", "0E5", "-0e5", "0e0", "0e-5", "0.0e5", "0.00e12", "0.000e1", "0e00", "-0.0e-0", "1e-400", "0.1e-400",
            "0.000001e-400",
        ] {
            expectSame(Double.self, Array(text.utf8), same: sameBits)
            expectSame(Float.self, Array(text.utf8), same: sameBits)
            expectSame(Box<Double>.self, Array("{\"value\":\(text)}".utf8), same: { sameBits($0.value, $1.value) })
        }
    }

    @Test func manyDigitDecimalsRoundCorrectly() {
        // Up to 19 significant digits and exponents around the exact-power range, where
        // the decoder's fast paths work; halfway cases among them.
        var generator = SeededGenerator(seed: 42)
        var texts = [
            "9007199254740993", "9007199254740993.0", "18014398509481985", "1.0000000000000001110223024625156540",
            "0.1000000000000000055511151231257827", "4503599627370496.5", "4503599627370497.5",
            "2.2250738585072014e-308",
            "1.7976931348623157e308", "123456789012345678e-27", "123456789012345678e27", "9999999999999999999e-27",
        ]
        for _ in 0..<2000 {
            let digits = Int.random(in: 1...19, using: &generator)
            var mantissa = String(Int.random(in: 1...9, using: &generator))
            for _ in 1..<digits { mantissa += String(Int.random(in: 0...9, using: &generator)) }
            let exponent = Int.random(in: -30...30, using: &generator)
            let dot = Int.random(in: 0...digits, using: &generator)
            let withDot =
                dot == digits
                ? mantissa
                : String(mantissa.prefix(dot == 0 ? 1 : dot)) + "." + String(mantissa.dropFirst(dot == 0 ? 1 : dot))
            texts.append(Bool.random(using: &generator) ? withDot + "e\(exponent)" : withDot)
        }
        for _ in 0..<2000 {
            texts.append("\(Double.random(in: -1e6...1e6, using: &generator))")
            texts.append("\(Double(bitPattern: UInt64.random(in: 0...0x7FEF_FFFF_FFFF_FFFF, using: &generator)))")
        }
        for text in texts {
            expectSame(Double.self, Array(text.utf8), same: sameBits)
            expectSame(Float.self, Array(text.utf8), same: sameBits)
        }
    }

    @Test func nonConformingFloats() {
        let strategy = Strategies(nonConforming: ("inf", "-inf", "nan"))
        for text in ["\"inf\"", "\"-inf\"", "\"nan\"", "\"Inf\"", "\"x\"", "\"in\\u0066\"", "1.5", "null"] {
            expectSame(Double.self, Array(text.utf8), strategy, same: sameBits)
            expectSame(Float.self, Array(text.utf8), strategy, same: sameBits)
            expectSame(Double.self, Array(text.utf8), same: sameBits)
            expectSame(Int.self, text, strategy)
        }
        expectSame(
            [Double].self, Array("[\"inf\", 1, \"nan\", \"-inf\"]".utf8), strategy,
            same: { $0.count == $1.count && zip($0, $1).allSatisfy { sameBits($0, $1) } })
    }

    @Test func boolsAndMismatches() {
        for text in ["true", "false", "1", "0", "\"true\"", "null", "tru", "truex", "[true]"] {
            expectSame(Bool.self, text)
            expectSame(Bool?.self, text)
            expectSame(String.self, text)
            expectSame(Int.self, text)
        }
    }

    @Test func strings() {
        let texts = [
            "\"\"", "\"plain\"", "\"\\u00e9\\n\\t\\/\\\\\\\"\\b\\f\\r\"", "\"\\ud83d\\ude00\"", "\"\\uD83D\\uDE00x\"",
            "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800x\"", "\"\\ud800\\u0041\"", "\"\\ud800\\ud800\"", "\"\\x\"",
            "\"\\u12\"",
            "\"\\u12G4\"", "\"\\u0000\"", "\"caf\u{e9} \u{1F600} \u{65}\u{301}\"", "\"a\u{7F}b\"", "\"tab\there\"",
            "\"unterminated", "\"\\", "\"\\u00\"", "\"a\\\"b\"",
        ]
        for text in texts {
            expectSame(String.self, text)
            expectSame([String].self, "[\(text)]")
            expectSame(Box<String>.self, "{\"value\":\(text)}")
        }
        // Raw bytes Foundation refuses inside strings: control characters, invalid UTF-8.
        let raw: [[UInt8]] = [
            [0x22, 0x61, 0x00, 0x22], [0x22, 0x61, 0x0A, 0x22], [0x22, 0x1F, 0x22], [0x22, 0xFF, 0x22],
            [0x22, 0xC3, 0x22], [0x22, 0xC3, 0xA9, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x22, 0xF0, 0x9F, 0x98, 0x22],
            [0x22, 0xC0, 0x80, 0x22], [0x22, 0xC3, 0x5C, 0x6E, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],
        ]
        for bytes in raw {
            expectSame(String.self, bytes: bytes)
            expectSame([String].self, bytes: [0x5B] + bytes + [0x5D])
        }
    }

    @Test func specialTypes() throws {
        for text in ["\"https://example.com/a?b=c\"", "\"\"", "\"a b\"", "\"relative/path\"", "3", "null"] {
            expectSame(URL.self, text)
            expectSame(Box<URL>.self, "{\"value\":\(text)}")
            expectSame(URL?.self, text)
        }
        for text in [
            "1.25", "-0", "0", "12345678901234567890.123456789", "1e10", "1E-5", "\"1.25\"", "1e400", "null", "01",
            "1.",
        ] {
            expectSame(Decimal.self, text)
            expectSame(Box<Decimal>.self, "{\"value\":\(text)}")
        }
        try expectRoundTrip(Box(value: Decimal(string: "3.14159")!))
        try expectRoundTrip(Box(value: URL(string: "https://example.com/x")!))
    }
}

@Suite struct DecoderStrategyTests {
    @Test func dates() throws {
        let dates = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_700_000_000),
            Date(timeIntervalSinceReferenceDate: -1e9),
            Date(timeIntervalSince1970: 1_700_000_000.25),
        ]
        let cases: [(Strategies.Date, JSONEncoder.DateEncodingStrategy)] = [
            (.deferred, .deferredToDate), (.seconds, .secondsSince1970), (.milliseconds, .millisecondsSince1970),
            (.iso8601, .iso8601),
        ]
        for (strategy, encoding) in cases {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = encoding
            for date in dates {
                let bytes = Array(try encoder.encode(Box(value: date)))
                expectSame(Box<Date>.self, bytes: bytes, Strategies(date: strategy))
                expectSame([Date].self, bytes: Array(try encoder.encode([date, date])), Strategies(date: strategy))
            }
            for text in [
                "1.5", "\"1.5\"", "null", "1e300", "true", "\"2025-03-01T12:00:00Z\"", "\"2025-03-01T12:00:00.123Z\"",
                "\"2025-03-01T12:00:00+02:00\"", "\"2025-03-01\"", "\"2025-13-01T12:00:00Z\"", "\"garbage\"",
            ] {
                expectSame(Date.self, text, Strategies(date: strategy))
                expectSame(Box<Date>.self, "{\"value\":\(text)}", Strategies(date: strategy))
                expectSame(Box<Date?>.self, "{\"value\":\(text)}", Strategies(date: strategy))
                expectSame([Date].self, "[\(text)]", Strategies(date: strategy))
            }
        }
    }

    @Test func data() throws {
        let values = [Data(), Data([1, 2, 3]), Data((0..<200).map { UInt8($0) })]
        for base64 in [true, false] {
            let encoder = JSONEncoder()
            encoder.dataEncodingStrategy = base64 ? .base64 : .deferredToData
            for value in values {
                expectSame(
                    Box<Data>.self, bytes: Array(try encoder.encode(Box(value: value))), Strategies(base64: base64))
            }
            for text in [
                "\"AQID\"", "\"AQI\"", "\"A=QI\"", "\"\"", "[1,2]", "[1,256]", "[-1]", "null", "3", "\"AQ\\u0049D\"",
                "\"AQ ID\"",
            ] {
                expectSame(Data.self, text, Strategies(base64: base64))
                expectSame(Box<Data>.self, "{\"value\":\(text)}", Strategies(base64: base64))
            }
        }
    }

    struct SnakeKeys: Codable, Equatable {
        var fooBar: Int?
        var imageURL: String?
        var imageUrl: String?
        // swift-format-ignore: NoLeadingUnderscores
        var _private: Int?  // a leading underscore is what the snake-case rules are tested on
        // swift-format-ignore: AlwaysUseLowerCamelCase
        var trailing_: Int?
        var aB: Int?
        var simple: Int?
        var value2Go: Int?
    }

    @Test func snakeCaseKeys() throws {
        let keys = [
            "foo_bar", "_foo_bar", "foo_bar_", "__foo__bar__", "FOO_BAR", "fooBar", "foo__bar", "foo_bAR", "image_url",
            "image_u_r_l", "_private", "trailing_", "a_b", "simple", "value_2_go", "value2_go", "_", "__", "",
            "ünï_cödé",
        ]
        for key in keys {
            expectSame(SnakeKeys.self, "{\"\(key)\": 1}", Strategies(snakeCase: true))
            expectSame([String: Int].self, "{\"\(key)\": 1}", Strategies(snakeCase: true))
            expectSame(Box<[String: Int]>.self, "{\"value\": {\"\(key)\": 1}}", Strategies(snakeCase: true))
        }
        expectSame(SnakeKeys.self, "{\"foo_bar\": 1, \"fooBar\": 2}", Strategies(snakeCase: true))
        expectSame(SnakeKeys.self, "{\"fooBar\": 1, \"foo_bar\": 2}", Strategies(snakeCase: true))
        expectSame(SnakeKeys.self, "{\"foo_bar\": \"x\"}", Strategies(snakeCase: true))
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let value = SnakeKeys(
            fooBar: 1, imageURL: "u", imageUrl: nil, _private: 3, trailing_: 4, aB: 5, simple: 6, value2Go: 7)
        expectSame(SnakeKeys.self, bytes: Array(try encoder.encode(value)), Strategies(snakeCase: true))
        expectSame(Team.self, bytes: Array(try encoder.encode(sampleTeam)), Strategies(snakeCase: true))
    }
}

let sampleTeam = Team(
    id: 7,
    people: [
        Person(name: "Ada", age: 36, email: "ada@example.com", tags: ["math", "engines"], scores: [1.5, 2, -0.25]),
        Person(name: "Grace \u{1F600}", age: 85, email: nil, tags: [], scores: []),
        Person(
            name: "Line\nbreak \"quoted\" \\ slash", age: 0, email: "g@example.com", tags: ["a", "é"], scores: [1e-10]),
    ],
    meta: ["wins": 3, "losses": -1, "": 0, "with space": 5],
    lead: Person(name: "Lead", age: 1, email: nil, tags: ["x"], scores: [3]),
    flag: nil)

@Suite struct DecoderStructureTests {
    @Test func nestedStructsRoundTrip() throws {
        try expectRoundTrip(sampleTeam)
        try expectRoundTrip([sampleTeam, sampleTeam])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try expectRoundTrip(sampleTeam, encoder: encoder)
        try expectRoundTrip(
            Record(
                id: 1, name: "n", email: "e@x", age: 3, score: 0.1, active: true, tags: ["t"],
                createdAt: Date(timeIntervalSince1970: 5)))
        try expectRoundTrip(
            OptionalIntegers(
                i: 1, i8: nil, i16: 3, i32: nil, i64: 5, u: nil, u8: 7, u16: nil, u32: 9, u64: nil, f: 1.5, d: nil,
                b: true, s: nil))
        try expectRoundTrip(OptionalIntegers())
    }

    struct Inner: Codable, Equatable { var a: Int; var b: [String: Int]? }
    struct Outer: Codable, Equatable { var inner: Inner; var list: [Inner]; var tail: Int }

    @Test func arraysOfObjectsWithOddSpacing() {
        // Elements whose end the decoder learns from their own scan, with trailing commas,
        // whitespace, nested objects and members the types do not ask for.
        let texts = [
            "[ {\"a\":1 , \"b\":{\"x\":1,} ,} , {\"a\":2}\n,{ \"z\":[{}], \"a\" : 3 } ,]",
            "[{\"a\":1,\"b\":{}},{\"a\":2,\"b\":null},{\"b\":{\"y\":2},\"a\":4}]",
            "[{\"a\":1,\"b\":{\"x\":\"s\"}}]",
            "[{\"a\":1},[],{\"a\":2}]",
            "[{}]",
            "[ ]",
        ]
        for text in texts {
            expectSame([Inner].self, text)
            expectSame(Outer.self, "{\"tail\":9,\"list\":\(text),\"inner\":{\"a\":0}}")
            expectSame(
                [Outer].self,
                "[{\"inner\":{\"a\":0,\"b\":{\"k\":1}},\"list\":\(text),\"tail\":1},{\"list\":[],\"inner\":{\"a\":1},\"tail\":2}]"
            )
        }
    }

    @Test func missingKeysNullsAndMismatches() {
        expectSame(Person.self, "{}")
        expectSame(Person.self, "{\"name\":\"a\"}")
        expectSame(Person.self, "{\"name\":null,\"age\":1,\"tags\":[],\"scores\":[]}")
        expectSame(Person.self, "{\"name\":\"a\",\"age\":\"1\",\"tags\":[],\"scores\":[]}")
        expectSame(Person.self, "{\"name\":\"a\",\"age\":1,\"email\":3,\"tags\":[],\"scores\":[]}")
        expectSame(Person.self, "{\"name\":\"a\",\"age\":1,\"email\":null,\"tags\":[1],\"scores\":[]}")
        expectSame(Person.self, "{\"name\":\"a\",\"age\":1,\"tags\":[\"x\",null],\"scores\":[]}")
        expectSame(Person.self, "{\"name\":\"a\",\"age\":1,\"tags\":{},\"scores\":[]}")
        expectSame(Person.self, "{\"name\":\"a\",\"age\":1,\"tags\":null,\"scores\":[]}")
        expectSame(Person.self, "[]")
        expectSame(Person.self, "null")
        expectSame(Person?.self, "null")
        expectSame(
            Team.self,
            "{\"id\":1,\"people\":[{\"name\":\"a\",\"age\":1,\"tags\":[],\"scores\":[]},{\"name\":\"b\",\"tags\":[],\"scores\":[]}],\"meta\":{}}"
        )
        expectSame(Team.self, "{\"id\":1,\"people\":[],\"meta\":{\"a\":\"x\"}}")
        expectSame(
            Team.self,
            "{\"id\":1,\"people\":[],\"meta\":{\"a\":1},\"lead\":{\"name\":\"a\",\"age\":1.5,\"tags\":[],\"scores\":[]}}"
        )
        expectSame(Team.self, "{\"id\":1,\"people\":[],\"meta\":{\"a\":1},\"lead\":null,\"flag\":\"yes\"}")
        expectSame([Person].self, "[{\"name\":\"a\",\"age\":1,\"tags\":[],\"scores\":[\"x\"]}]")
        expectSame([[Int]].self, "[[1],[2,\"x\"]]")
        expectSame([Int?].self, "[1,null,3]")
        expectSame([Int].self, "[1,null,3]")
        expectSame([String: [Int]].self, "{\"a\":[1],\"b\":[1,true]}")
    }

    @Test func duplicateKeysFirstWins() {
        expectSame(Box<Int>.self, "{\"value\":1,\"value\":2}")
        expectSame([String: Int].self, "{\"a\":1,\"a\":2,\"b\":3}")
        expectSame([String: String].self, "{\"a\":\"1\",\"a\":\"2\"}")
        expectSame(Box<Int>.self, "{\"value\":\"x\",\"value\":2}")
        expectSame(Box<Int>.self, "{\"val\\u0075e\":1,\"value\":2}")
        expectSame(Box<Int>.self, "{\"value\":1,\"val\\u0075e\":2}")
        let many = (0..<40).map { "\"k\($0 % 30)\":\($0)" }.joined(separator: ",")
        expectSame([String: Int].self, "{\(many)}")
    }

    @Test func dictionaryKeyTypes() throws {
        try expectRoundTrip([1: "a", -2: "b", 300: "c"])
        try expectRoundTrip(["x": 1.5, "y": -2])
        try expectRoundTrip([true: 1, false: 2])
        try expectRoundTrip([1.5: "a"])
        try expectRoundTrip(["a": ["b": ["c": [1, 2]]]])
        expectSame([Int: String].self, "{\"1\":\"a\",\"x\":\"b\"}")
        expectSame([Int: String].self, "{\"01\":\"a\"}")
        expectSame([Bool: Int].self, "[true,1,false]")
        expectSame([String: Int].self, "[]")
        expectSame([String: Int].self, "{\"\\u00e9\":1,\"e\\u0301\":2}")
    }

    @Test func syntax() {
        let texts = [
            "", " ", "3", " 3 ", "\n\t\r 3 \n", "3 x", "\u{0C}3", "[1,]", "{\"value\":1,}", "[1,,]", "[,]", "{,}",
            "[1 2]",
            "{\"value\" 1}", "{\"value\":1 \"b\":2}", "{value:1}", "{\"value\":1}}", "[1]]", "[", "{", "{\"value\"",
            "{\"value\":", "[1,", "nul", "null x", "\"x\"", "'x'", "[01]", "{\"value\":[1,}", "{\"value\":1,\"b\":[1,}",
            "{\"value\":1,\"b\":1..2}", "{\"value\":1,\"b\":-}", "{\"value\":1,\"b\":\"\\x\"}",
            "{\"value\":1,\"b\":\"\\ud800\"}",
            "[1]\u{0}", "{\"value\":1,\"b\":tru}", "/*c*/1", "1 // c", "NaN", "Infinity", "-Infinity", "0x10",
        ]
        for text in texts {
            expectSame(Int.self, text)
            expectSame([Int].self, text)
            expectSame(Box<Int>.self, text)
        }
        // A byte order mark, unasked members with bytes Foundation only checks when read.
        expectSame(Box<Int>.self, bytes: [0xEF, 0xBB, 0xBF] + Array("{\"value\":1}".utf8))
        expectSame(Box<Int>.self, bytes: Array("{\"value\":1,\"b\":\"".utf8) + [0xFF, 0x01] + Array("\"}".utf8))
        expectSame(Box<Int>.self, bytes: Array("{\"value\":1,\"b\":{\"\\ud800\":1}}".utf8))
        expectSame(Box<Int>.self, bytes: Array("{\"value\":1,\"\\ud800\":1}".utf8))
        expectSame(Box<Int>.self, bytes: Array("{\"value\":1,\"".utf8) + [0xFF] + Array("\":1}".utf8))
    }

    @Test func depthLimit() throws {
        // With Foundation's limit, the same errors as Foundation's around it.
        let foundationLimit = Strategies(maximumDepth: 512)
        for depth in [1, 100, 511, 512, 513, 2000, 100_000] {
            let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            expectSame(Int.self, arrays, foundationLimit)
            let objects = String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)
            expectSame(Int.self, objects, foundationLimit)
        }
        // Unclosed deep nesting: an error, never a stack overflow.
        expectSame(Int.self, String(repeating: "[", count: 1_000_000), foundationLimit)
        // The default limit, lower than Foundation's: 100 levels read, 101 refused as
        // dataCorrupted at the root, with a message that names the limit.
        #expect(FolioJSONDecoder().maximumDepth == 100)
        let within = Array((String(repeating: "[", count: 100) + String(repeating: "]", count: 100)).utf8)
        #expect(throws: Never.self) { try FolioJSONDecoder().decode(DepthProbe.self, from: within) }
        let beyond = Array((String(repeating: "[", count: 101) + String(repeating: "]", count: 101)).utf8)
        do {
            _ = try FolioJSONDecoder().decode(DepthProbe.self, from: beyond)
            Issue.record("101 levels were read")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.isEmpty && context.debugDescription.contains("maximumDepth (100)"))
        }
        var decoder = FolioJSONDecoder()
        decoder.maximumDepth = 3
        #expect(throws: DecodingError.self) { try decoder.decode([[[[Int]]]].self, from: Array("[[[[1]]]]".utf8)) }
        #expect(try decoder.decode([[[Int]]].self, from: Array("[[[1]]]".utf8)) == [[[1]]])
    }

    /// Nested arrays of any depth: `[[[]]]`.
    struct DepthProbe: Decodable {
        var children: [DepthProbe]
        init(from decoder: any Decoder) throws { children = try [DepthProbe](from: decoder) }
    }

    @Test func utf16AndUTF32Input() throws {
        let text = "{\"value\":[\"h\u{E9}llo \u{1F600}\", \"x\"]}"
        let encodings: [String.Encoding] = [
            .utf16, .utf16BigEndian, .utf16LittleEndian, .utf32, .utf32BigEndian, .utf32LittleEndian,
        ]
        for encoding in encodings {
            let bytes = Array(text.data(using: encoding)!)
            expectSame(Box<[String]>.self, bytes: bytes)
            expectSame(Int.self, bytes: Array("7".data(using: encoding)!))
            expectSame(Int.self, bytes: Array("[7]".data(using: encoding)!))
        }
        for bytes: [UInt8] in [
            [0xFE, 0xFF], [0xFF, 0xFE], [0xFE, 0xFF, 0, 0], [0, 0x31], [0x31, 0], [0, 0, 0, 0x31], [0x31, 0, 0, 0],
            [0xFF, 0xFE, 0x00, 0xD8],
        ] {
            expectSame(Int.self, bytes: bytes)
        }
    }

    @Test func everyInputForm() throws {
        let bytes = Array(try JSONEncoder().encode(sampleTeam))
        let decoder = FolioJSONDecoder()
        #expect(try decoder.decode(Team.self, from: bytes) == sampleTeam)
        #expect(try decoder.decode(Team.self, from: Data(bytes)) == sampleTeam)
        let padded = [UInt8]("xx".utf8) + bytes + [UInt8]("yy".utf8)
        #expect(try decoder.decode(Team.self, from: padded[2..<(2 + bytes.count)]) == sampleTeam)
        let fromBuffer = try bytes.withUnsafeBytes { try decoder.decode(Team.self, from: $0) }
        #expect(fromBuffer == sampleTeam)
        #expect(throws: DecodingError.self) {
            try decoder.decode(Int.self, from: UnsafeRawBufferPointer(start: nil, count: 0))
        }
        #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: Data()) }
    }
}

@Suite struct DecoderRobustnessTests {
    @Test func everyTruncationThrows() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .prettyPrinted
        let bytes = Array(try encoder.encode(sampleTeam))
        for length in 0..<bytes.count {
            let prefix = Array(bytes[0..<length])
            let (folio, foundation) = bothOutcomes(Team.self, prefix)
            #expect(folio.isFailure, "prefix of \(length) bytes decoded")
            #expect(foundation.isFailure)
        }
        // Truncated scalars too.
        for text in ["123", "-1.5e3", "\"abc\"", "true", "null", "[1,2]", "{\"a\":[1]}"] {
            let full = Array(text.utf8)
            for length in 0..<full.count {
                let (folio, foundation) = bothOutcomes([String: [Int]].self, Array(full[0..<length]))
                #expect(folio.isFailure == foundation.isFailure, "\(text) cut at \(length)")
            }
        }
    }

    @Test func randomMutationsNeverCrashAndMatchFoundation() throws {
        // Sorted keys: the same sample every run (Foundation's key order is per process).
        let sortedEncoder = JSONEncoder()
        sortedEncoder.outputFormatting = .sortedKeys
        let sample = Array(try sortedEncoder.encode(sampleTeam))
        let interesting: [UInt8] =
            Array("{}[]\",:\\ 0123456789-+.eEtrufalsn".utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xFF]
        var generator = SeededGenerator(seed: 0x5EED)
        var mismatches = 0
        for round in 0..<3000 {
            var bytes = sample
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[index] = interesting.randomElement(using: &generator)!
                case 1: bytes[index] = UInt8.random(in: 0...255, using: &generator)
                case 2: bytes.remove(at: index)
                default: bytes.insert(interesting.randomElement(using: &generator)!, at: index)
                }
                if bytes.isEmpty { break }
            }
            let (folio, foundation) = bothOutcomes(Team.self, bytes)
            switch (folio, foundation) {
            case (.value(let a), .value(let b)):
                if a != b {
                    mismatches += 1;
                    Issue.record("round \(round): values differ for \(String(decoding: bytes, as: UTF8.self))")
                }
            case (.failure(let k1, let p1), .failure(let k2, let p2)):
                if k1 != k2 || p1 != p2 {
                    mismatches += 1
                    Issue.record(
                        "round \(round): Folio \(k1) \(p1), Foundation \(k2) \(p2) for \(String(decoding: bytes, as: UTF8.self))"
                    )
                }
            default:
                mismatches += 1
                Issue.record(
                    "round \(round): Folio \(folio), Foundation \(foundation) for \(String(decoding: bytes, as: UTF8.self))"
                )
            }
            if mismatches > 5 { break }
        }
    }

    struct Mixed: Codable, Equatable {
        var createdAt: Date
        var payload: Data
        var imageURL: URL?
        var price: Decimal
        var ratios: [Float]
        var byID: [Int: String]
        var nested: [String: [Int8?]]
        var small: UInt16
    }

    @Test func randomMutationsWithStrategies() throws {
        let value = Mixed(
            createdAt: Date(timeIntervalSince1970: 1_700_000_000), payload: Data([0, 1, 2, 250]),
            imageURL: URL(string: "https://example.com/i.png"), price: Decimal(string: "12.50")!,
            ratios: [0.5, -1.25, 3], byID: [1: "one", 22: "twenty-two"], nested: ["a_b": [1, nil, -3], "c": []],
            small: 65535)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = .sortedKeys
        let sample = Array(try encoder.encode(value))
        let strategies = Strategies(date: .iso8601, snakeCase: true)
        expectSame(Mixed.self, bytes: sample, strategies)
        let interesting: [UInt8] = Array("{}[]\",:\\ 0123456789-+.eE_tnul".utf8) + [0x00, 0x80, 0xFF]
        var generator = SeededGenerator(seed: 7)
        var mismatches = 0
        for round in 0..<2000 where mismatches < 5 {
            var bytes = sample
            let index = Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: bytes[index] = interesting.randomElement(using: &generator)!
            case 1: bytes.remove(at: index)
            default: bytes.insert(interesting.randomElement(using: &generator)!, at: index)
            }
            let (folio, foundation) = bothOutcomes(Mixed.self, bytes, strategies)
            switch (folio, foundation) {
            case (.value(let a), .value(let b)) where a == b: break
            case (.failure(let k1, let p1), .failure(let k2, let p2)) where k1 == k2 && p1 == p2: break
            default:
                mismatches += 1
                Issue.record(
                    "round \(round): Folio \(folio), Foundation \(foundation) for \(String(decoding: bytes, as: UTF8.self))"
                )
            }
        }
    }

    @Test func hugeNumbersAndStrings() {
        let digits = String(repeating: "9", count: 10_000)
        expectSame(Int.self, digits)
        expectSame(Double.self, Array(digits.utf8), same: sameBits)
        expectSame(Double.self, Array(("0." + digits).utf8), same: sameBits)
        expectSame(Double.self, Array(("1e" + digits).utf8), same: sameBits)
        expectSame(Int.self, "1e" + digits)
        expectSame(Int.self, "1e-" + digits)
        expectSame(Decimal.self, digits)
        expectSame(String.self, "\"" + String(repeating: "ab\\n", count: 100_000) + "\"")
    }
}
