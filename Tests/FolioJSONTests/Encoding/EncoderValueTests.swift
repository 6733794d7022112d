import Foundation
import FolioTestSupport
import Testing
import FolioJSON

/// Numbers, strings, fragments and Foundation's special types.
@Suite struct EncoderValueTests {
    @Test func fragmentsAtTopLevel() throws {
        #expect(try encFolioText(3) == "3")
        #expect(try encFolioText("x") == "\"x\"")
        #expect(try encFolioText(true) == "true")
        #expect(try encFolioText(nil as Int?) == "null")
        #expect(try encFolioText(2.5) == "2.5")
        try expectEncSameAsFoundation(3, bytes: true)
        try expectEncSameAsFoundation("x", bytes: true)
        try expectEncSameAsFoundation(nil as Int?, bytes: true)
    }

    @Test func integersAtTheirLimits() throws {
        struct Widths: Codable, Equatable {
            var i: Int, i8: Int8, i16: Int16, i32: Int32, i64: Int64
            var u: UInt, u8: UInt8, u16: UInt16, u32: UInt32, u64: UInt64
        }
        let low = Widths(
            i: .min, i8: .min, i16: .min, i32: .min, i64: .min, u: .min, u8: .min, u16: .min, u32: .min, u64: .min)
        let high = Widths(
            i: .max, i8: .max, i16: .max, i32: .max, i64: .max, u: .max, u8: .max, u16: .max, u32: .max, u64: .max)
        let mixed = Widths(
            i: -1, i8: -1, i16: 10, i32: -100, i64: 1_000_000_007, u: 9, u8: 10, u16: 99, u32: 100,
            u64: 10_000_000_000_000_000_000)
        for value in [low, high, mixed] {
            try expectEncRoundTrip(value)
            try expectEncSameAsFoundation(value)
        }
        try expectEncSameAsFoundation([Int.min, -9, -10, 0, 9, 10, 99, 100, Int.max], bytes: true)
        try expectEncSameAsFoundation([UInt64.max, 0, 1], bytes: true)
        try expectEncSameAsFoundation([Int8.min, Int8.max], bytes: true)
        try expectEncSameAsFoundation([Int128.min, -1, 0, Int128(Int64.max) + 1, Int128.max], bytes: true)
        try expectEncSameAsFoundation([UInt128.max, UInt128(UInt64.max), UInt128(UInt64.max) + 1], bytes: true)
        struct Wide: Codable, Equatable { var signed: Int128; var unsigned: UInt128; var list: [Int128] }
        try expectEncRoundTrip(Wide(signed: .min, unsigned: .max, list: [0, -1, .max]))
        try expectEncSameAsFoundation(Wide(signed: .min, unsigned: .max, list: [0, -1, .max]))
        try expectEncRoundTrip([Int128.min, Int128.max])
        try expectEncRoundTrip([UInt128.max, 0])
        // Every power of ten and its neighbours.
        var powers: [Int64] = []
        var power: Int64 = 1
        for _ in 0..<18 { powers += [power - 1, power, power + 1, -power]; power *= 10 }
        try expectEncSameAsFoundation(powers, bytes: true)
    }

    static let specialDoubles: [Double] = [
        0, -0.0, 1, -1, 0.1, 0.2, 0.3, 1.0 / 3, 2.5, 1e-5, 1e-7, 123456789.125, 1e15, 1e16, 1e17,
        9_007_199_254_740_991, 9_007_199_254_740_992, 9_007_199_254_740_994, 1e21, 1e22, 1e23, 1e300,
        -1e300, 1e-300, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude,
        .leastNonzeroMagnitude, .leastNormalMagnitude / 3, -.leastNonzeroMagnitude, .ulpOfOne, .pi,
        1_700_000_000.5, 4_294_967_296, 4_294_967_295.5, 100, 1000, 12345.678,
    ]

    @Test func doublesAreShortestAndExact() throws {
        var random = SplitMix64(seed: 7)
        var values = Self.specialDoubles
        while values.count < 3000 {
            let candidate = Double(bitPattern: random.next())
            if candidate.isFinite { values.append(candidate) }
            values.append(Double(Int64(bitPattern: random.next()) >> random.below(63)) / Double(1 << random.below(20)))
        }
        try expectEncSameAsFoundation(values, bytes: true)
        let decoded = try encRoundTrip(values)
        #expect(decoded.map(\.bitPattern) == values.map(\.bitPattern))
        #expect(try encFolioText(-0.0) == "-0")
        #expect(try encFolioText(5.0) == "5")
        #expect(try encFolioText(1e-5) == "1e-05")
    }

    @Test func shortDecimalsAreWrittenAsDescriptionWritesThem() throws {
        var random = SplitMix64(seed: 13)
        var values: [Double] = [
            0.0001, -0.0001, 0.0005, 0.001, 0.5, 999_999_999.9999, -999_999_999.999, 1e9 - 0.5, 1e9 + 0.5,
            0.30000000000000004, 2.675, 1.005,
        ]
        for _ in 0..<20000 {
            let decimals = random.below(7)
            var scale = 1.0
            for _ in 0..<decimals { scale *= 10 }
            let units = Double(
                Int64(bitPattern: random.next()) % Int64(random.below(2) == 0 ? 100_000 : 2_000_000_000_000))
            values.append(units / scale)
            values.append(Double(Int64(bitPattern: random.next()) % 1_000_000) * 0.01)
        }
        try expectEncSameAsFoundation(values, bytes: true)
        #expect(try encRoundTrip(values).map(\.bitPattern) == values.map(\.bitPattern))
    }

    @Test func floatsAreShortestAndExact() throws {
        var random = SplitMix64(seed: 11)
        var values: [Float] = [
            0, -0.0, 1, 0.1, 1.0 / 3, 16_777_215, 16_777_216, 16_777_218, 1e7, 1e8, 1e-7, 3.4028235e38,
            .greatestFiniteMagnitude, .leastNormalMagnitude, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .pi,
        ]
        while values.count < 3000 {
            let candidate = Float(bitPattern: UInt32(truncatingIfNeeded: random.next()))
            if candidate.isFinite { values.append(candidate) }
        }
        try expectEncSameAsFoundation(values, bytes: true)
        let decoded = try encRoundTrip(values)
        #expect(decoded.map(\.bitPattern) == values.map(\.bitPattern))
    }

    @Test func nonFiniteFloatsThrowWithTheirCodingPath() throws {
        struct Inner: Codable { var values: [Double] }
        struct Outer: Codable { var inner: Inner }
        let value = Outer(inner: Inner(values: [1, .infinity]))
        #expect {
            _ = try FolioJSONEncoder().encode(value)
        } throws: { error in
            guard case EncodingError.invalidValue(let bad, let context) = error else { return false }
            return (bad as? Double) == .infinity
                && context.codingPath.map(\.stringValue) == ["inner", "values", "Index 1"]
                && context.codingPath.last?.intValue == 1
        }
        struct Keyed: Codable { var f: Float }
        #expect {
            _ = try FolioJSONEncoder().encode(Keyed(f: .nan))
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["f"]
        }
        #expect(throws: EncodingError.self) { _ = try FolioJSONEncoder().encode(-Double.infinity) }
        // Single-value containers too (a Date written as a number).
        var encoder = FolioJSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        #expect(throws: EncodingError.self) { _ = try encoder.encode(["d": Date(timeIntervalSince1970: .infinity)]) }
    }

    @Test func nonFiniteFloatsAsStrings() throws {
        struct Floats: Codable, Equatable {
            var a: Double, b: Double, c: Float, d: [Double]
            static func == (l: Floats, r: Floats) -> Bool {
                l.a == r.a && l.b == r.b && l.c.isNaN == r.c.isNaN && l.d.count == r.d.count
            }
        }
        let strategies = EncStrategies(
            float: .convertToString(positiveInfinity: "+Inf", negativeInfinity: "-Inf", nan: "NaN"))
        let value = Floats(a: .infinity, b: -.infinity, c: .nan, d: [1.5, .infinity])
        try expectEncRoundTrip(value, strategies)
        let decoded = try encRoundTrip(value, strategies)
        #expect(decoded.c.isNaN)
        try expectEncSameAsFoundation([Double.infinity, -.infinity, .nan, 2], strategies, bytes: true)
    }

    @Test func stringsEscapeWhatJSONRequires() throws {
        var everyControl = ""
        for scalar in 0..<0x20 { everyControl.unicodeScalars.append(Unicode.Scalar(UInt8(scalar))) }
        let strings = [
            "", "plain", everyControl, "\"", "\\", "\\\"", "/", "a/b", "\u{7F}", "\u{0}", "nul\u{0}inside",
            "é", "日本語", "😀", "👨‍👩‍👧‍👦", "e\u{301}", "\u{2028}\u{2029}", "\u{FEFF}", "\u{10FFFF}",
            "tab\there", "line\nbreak\r\n", "\u{8}\u{C}", String(repeating: "long text ", count: 200),
            "12345678\"", "1234567\n", "123456789\\", String(repeating: "é\"", count: 40),
        ]
        try expectEncRoundTrip(strings)
        try expectEncSameAsFoundation(strings, bytes: true)
        #expect(try encFolioText("\u{0}\u{1F}\n\t\r\u{8}\u{C}\"\\") == #""\u0000\u001f\n\t\r\b\f\"\\""#)
        // An escape at every position of an 8-byte word, and around the word boundaries.
        var random = SplitMix64(seed: 3)
        let pieces = ["a", "é", "😀", "\"", "\\", "\n", "\u{1}", "x", "y", "/"]
        var generated: [String] = []
        for _ in 0..<500 {
            var text = ""
            for _ in 0..<random.below(40) { text += pieces[random.below(pieces.count)] }
            generated.append(text)
        }
        try expectEncRoundTrip(generated)
        try expectEncSameAsFoundation(generated, bytes: true)
    }

    @Test func keysAreEscapedToo() throws {
        let dictionary = ["a\"b": 1, "back\\slash": 2, "new\nline": 3, "é😀": 4, "": 5, "\u{0}": 6]
        try expectEncRoundTrip(dictionary)
        try expectEncSameAsFoundation(dictionary)
        struct Weird: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: EncKey.self)
                try container.encode(1, forKey: EncKey("quote\"key"))
                try container.encode(2, forKey: EncKey("tab\tkey"))
            }
        }
        #expect(try encFolioText(Weird()) == #"{"quote\"key":1,"tab\tkey":2}"#)
    }

    @Test func everyDateStrategy() throws {
        let dates = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_700_000_000),
            Date(timeIntervalSinceReferenceDate: 0),
            Date(timeIntervalSince1970: -1_000_000_000), Date(timeIntervalSince1970: 951_782_400),  // 2000-02-29
            Date(timeIntervalSince1970: 4_107_542_400), Date(timeIntervalSince1970: 253_402_300_799),
        ]
        for strategy: FolioJSONEncoder.DateEncodingStrategy in [
            .deferredToDate, .secondsSince1970, .millisecondsSince1970, .iso8601,
        ] {
            let strategies = EncStrategies(date: strategy)
            try expectEncRoundTrip(dates, strategies)
            try expectEncSameAsFoundation(dates, strategies, bytes: true)
            try expectEncRoundTrip(["when": dates[1]], strategies)
        }
        // Fractions: exact for the number strategies.
        let fractional = [Date(timeIntervalSince1970: 1_700_000_000.123), Date(timeIntervalSinceReferenceDate: -0.5)]
        for strategy: FolioJSONEncoder.DateEncodingStrategy in [.deferredToDate, .secondsSince1970] {
            try expectEncRoundTrip(fractional, EncStrategies(date: strategy))
        }
        try expectEncSameAsFoundation(fractional, EncStrategies(date: .millisecondsSince1970), bytes: true)
    }

    @Test func iso8601MatchesFoundationAcrossTheCalendar() throws {
        var random = SplitMix64(seed: 5)
        var dates: [Date] = [
            Date(timeIntervalSince1970: -1_000_000_000.5), Date(timeIntervalSince1970: -0.25),
            Date(timeIntervalSince1970: 0.999),
            Date(timeIntervalSince1970: -12_212_553_600), Date(timeIntervalSince1970: -12_212_553_601),  // 1583 begins
            // Julian, year -249
            Date(timeIntervalSince1970: -15_000_000_000), Date(timeIntervalSince1970: -70_000_000_000),
            Date(timeIntervalSince1970: 253_402_300_800), Date(timeIntervalSince1970: 300_000_000_000),  // year 10000+
        ]
        for _ in 0..<2000 {
            dates.append(
                Date(
                    timeIntervalSince1970: Double(Int64(random.next() % 40_000_000_000) - 15_000_000_000) + Double(
                        random.below(1000)) / 1000))
        }
        try expectEncSameAsFoundation(dates, EncStrategies(date: .iso8601), bytes: true)
    }

    @Test func everyDataStrategy() throws {
        var random = SplitMix64(seed: 9)
        var blobs: [Data] = []
        for length in 0..<40 { blobs.append(Data((0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) })) }
        blobs.append(Data((0..<5000).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
        for strategy: FolioJSONEncoder.DataEncodingStrategy in [.base64, .deferredToData] {
            try expectEncRoundTrip(blobs, EncStrategies(data: strategy))
            try expectEncSameAsFoundation(blobs, EncStrategies(data: strategy), bytes: true)
        }
        #expect(try encFolioText(Data([1, 2, 3])) == #""AQID""#)
        #expect(try encFolioText(Data([1, 2, 3])) { $0.dataEncodingStrategy = .deferredToData } == "[1,2,3]")
    }

    @Test func decimalAndURLAsFoundationWritesThem() throws {
        let decimals = [
            Decimal(string: "123.4500")!, Decimal(0), Decimal(-1), Decimal(string: "0.000000001")!,
            Decimal(string: "12345678901234567890.123")!,
        ]
        try expectEncSameAsFoundation(decimals, bytes: true)
        try expectEncRoundTrip(decimals)
        let urls = [
            URL(string: "https://example.com/a/b?c=d&e=%20f#g")!, URL(string: "file:///tmp/x")!,
            URL(string: "relative/path", relativeTo: URL(string: "https://h.org/base/"))!,
        ]
        try expectEncSameAsFoundation(urls, bytes: true)
        #expect(try encRoundTrip(urls).map(\.absoluteString) == urls.map(\.absoluteString))
    }

    @Test func optionals() throws {
        struct Maybe: Codable, Equatable {
            var a: Int?
            var b: String?
            var c: [Int?]
        }
        #expect(try encFolioText(Maybe(a: nil, b: "x", c: [1, nil])) == #"{"b":"x","c":[1,null]}"#)
        try expectEncRoundTrip(Maybe(a: nil, b: nil, c: []))
        try expectEncRoundTrip(Maybe(a: 3, b: nil, c: [nil, nil]))
        struct Explicit: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: EncKey.self)
                try container.encode(nil as Int?, forKey: EncKey("n"))
                try container.encodeNil(forKey: EncKey("m"))
                try container.encodeIfPresent(nil as Int?, forKey: EncKey("skipped"))
                try container.encodeIfPresent(4 as Int?, forKey: EncKey("kept"))
            }
        }
        #expect(try encFolioText(Explicit()) == #"{"n":null,"m":null,"kept":4}"#)
    }
}
