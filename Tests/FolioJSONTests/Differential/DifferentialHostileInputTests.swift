import Foundation
import Testing
import FolioJSON
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The hostile-input checks, with the decoder under test as a parameter (the self-test
/// runs them Foundation against Foundation).
enum HostileChecks {
    static func decodeAny(_ coder: DiffCoder, _ bytes: [UInt8]) throws -> DiffAnyJSON {
        try coder.decode(DiffAnyJSON.self, from: bytes)
    }

    /// A generated document (Foundation's encoding of a generated value) with its shape.
    static func documents(
        seed: UInt64, count: Int, depth: Int = 3
    ) -> [(shape: DiffShape, bytes: [UInt8], seed: UInt64)] {
        var out: [(DiffShape, [UInt8], UInt64)] = []
        var i: UInt64 = 0
        while out.count < count {
            let s = seed &+ i
            i += 1
            var g = DiffGenerator(seed: s)
            let shape = g.shape(depth: depth)
            let value = g.value(shape)
            if let bytes = try? DiffCoder.foundation.encode(value, as: shape) { out.append((shape, bytes, s)) }
        }
        return out
    }

    /// Every truncation of generated documents: as the generated type and as any JSON.
    /// Returns the number of truncated documents decoded.
    static func truncations(subject: DiffCoder, seed: UInt64, documents count: Int, report: DiffReport) -> Int {
        var decoded = 0
        for document in documents(seed: seed, count: count) where !report.shouldStop {
            for length in 0..<document.bytes.count {
                let prefix = Array(document.bytes[..<length])
                decoded += 1
                DiffChecks.hostile(
                    prefix, as: { try $0.decode(document.shape, from: $1) }, equal: strictlyEqual, subject: subject,
                    reference: .foundation,
                    place: "truncation to \(length) of seed \(document.seed) shape \(document.shape)", report: report)
                DiffChecks.hostile(
                    prefix, as: decodeAny, equal: ==, subject: subject, reference: .foundation,
                    place: "truncation to \(length) of seed \(document.seed) as any JSON", report: report)
                // The prefix as a slice of the whole document: the decoder must stop at the
                // slice's end though the memory after it holds the rest of the document.
                DiffChecks.hostile(
                    prefix,
                    as: { coder, prefix in try coder.decode(document.shape, from: document.bytes[..<prefix.count]) },
                    equal: strictlyEqual,
                    subject: subject, reference: .foundation,
                    place: "truncation to \(length) (a slice) of seed \(document.seed) shape \(document.shape)",
                    report: report)
            }
        }
        return decoded
    }

    /// Random byte mutations of generated documents. Returns the number of mutations.
    static func mutations(subject: DiffCoder, seed: UInt64, count: Int, report: DiffReport) -> Int {
        let docs = documents(seed: seed, count: max(1, count / 50))
        var random = DiffRandom(seed: seed ^ 0xDEAD_BEEF)
        for i in 0..<count where !report.shouldStop {
            let document = docs[i % docs.count]
            let mutated = DiffMutations.mutate(document.bytes, &random)
            func place() -> String {
                "mutation #\(i) (seed \(seed)) of document seed \(document.seed), shape \(document.shape), original \(jsonText(document.bytes))"
            }
            if i % 2 == 0 {
                DiffChecks.hostile(
                    mutated, as: { try $0.decode(document.shape, from: $1) }, equal: strictlyEqual, subject: subject,
                    reference: .foundation, place: place(), report: report)
            } else {
                DiffChecks.hostile(
                    mutated, as: decodeAny, equal: ==, subject: subject, reference: .foundation,
                    place: place() + " as any JSON", report: report)
            }
        }
        return count
    }

    /// Generated documents respelled (whitespace, `\u` escapes in strings and keys, surrogate
    /// pairs, redundant fractions and exponents): valid JSON Foundation's encoder never
    /// writes. Returns the number of respelled documents.
    @discardableResult
    static func respellings(
        subject: DiffCoder, seed: UInt64, count: Int, report: DiffReport
    ) -> (documents: Int, sameAsOriginal: Int) {
        let docs = documents(seed: seed, count: max(1, count / 10), depth: 4)
        var random = DiffRandom(seed: seed ^ 0x5EED)
        var same = 0
        for i in 0..<count where !report.shouldStop {
            let document = docs[i % docs.count]
            let respelled = DiffRespell.respell(document.bytes, &random)
            if let a = try? DiffCoder.foundation.decode(document.shape, from: document.bytes),
                let b = try? DiffCoder.foundation.decode(document.shape, from: respelled), strictlyEqual(a, b)
            {
                same += 1
            }
            DiffChecks.hostile(
                respelled, as: { try $0.decode(document.shape, from: $1) }, equal: strictlyEqual, subject: subject,
                reference: .foundation,
                place:
                    "respelling #\(i) (seed \(seed)) of document seed \(document.seed), shape \(document.shape), original \(jsonText(document.bytes))",
                report: report)
        }
        return (count, same)
    }

    /// Documents of one generated shape decoded as another: both decoders throw, and for
    /// shapes without dictionaries (whose members Foundation visits in hash order) the same
    /// `DecodingError` case at the same coding path. Returns how many errors were compared.
    @discardableResult
    static func wrongShapes(subject: DiffCoder, seed: UInt64, count: Int, report: DiffReport) -> Int {
        let docs = documents(seed: seed, count: max(2, count), depth: 3)
        var compared = 0
        for i in 0..<count where !report.shouldStop {
            let document = docs[i], target = docs[(i * 7 + 3) % docs.count].shape
            let r = DiffOutcome { try DiffCoder.foundation.decode(target, from: document.bytes) }
            let s = DiffOutcome { try subject.decode(target, from: document.bytes) }
            func place() -> String {
                "document seed \(document.seed) (shape \(document.shape)) decoded as \(target)\n  json: \(jsonText(document.bytes))"
            }
            switch (r, s) {
            case (.failure(let x), .failure(let y)):
                if !target.hasDictionary {
                    compared += 1
                    if errorSummary(x) != errorSummary(y) {
                        report.fail("\(place()): Foundation throws \(errorSummary(x)), \(subject) \(errorSummary(y))")
                    }
                }
            case (.value(let x), .value(let y)):
                if !strictlyEqual(x, y) { report.fail("\(place()): Foundation decodes \(x), \(subject) \(y)") }
            case (.value(let x), .failure(let y)):
                report.fail("\(place()): Foundation decodes \(x), \(subject) throws \(errorSummary(y))")
            case (.failure(let x), .value(let y)):
                report.fail("\(place()): Foundation throws \(errorSummary(x)), \(subject) decodes \(y)")
            }
        }
        return compared
    }

    /// A `DecodingError`'s case, key and coding path.
    static func errorSummary(_ error: any Error) -> String {
        func path(_ c: DecodingError.Context) -> String {
            "at "
                + c.codingPath.map { $0.intValue.map { "[\($0)]" } ?? String(reflecting: $0.stringValue) }.joined(
                    separator: ".")
        }
        guard let d = error as? DecodingError else { return "\(type(of: error)) \(error)" }
        switch d {
        case .typeMismatch(_, let c): return "typeMismatch \(path(c))"
        case .valueNotFound(_, let c): return "valueNotFound \(path(c))"
        case .keyNotFound(let k, let c): return "keyNotFound \(String(reflecting: k.stringValue)) \(path(c))"
        case .dataCorrupted(let c): return "dataCorrupted \(path(c))"
        @unknown default: return "\(d)"
        }
    }

    /// Hand-written invalid or unusual strings, inside an array and as an object key.
    static func strings(subject: DiffCoder, report: DiffReport) {
        var bodies: [[UInt8]] = DiffMutations.specialSequences
        for b in 0...0x1F { bodies.append([UInt8(b)]) }  // raw control characters: invalid in JSON
        bodies += [
            #"\b\f\n\r\t\"\\\/"#, #"\u0000"#, #"\u001f"#, #"\u007F"#, #"\u00e9"#, #"e\u0301"#, #"\uFFFF"#, #"\uFEFF"#,
            #"\ud83d\ude00\ud83d\ude00"#,
            #"\ud83d"#, #"\ude00"#, #"\ud83d\u0020"#, #"\ud83dx"#, #"\ud83d\ud83d"#, #"\ud83d\"#, #"\u12"#, #"\u123g"#,
            #"\U0041"#, "\\\u{0}",
        ]
        .map { Array($0.utf8) }
        for body in bodies {
            let asElement = Array("[\"".utf8) + body + Array("\"]".utf8)
            DiffChecks.hostile(
                asElement, as: { try $0.decode([String].self, from: $1) }, equal: { $0.elementsEqualScalars($1) },
                subject: subject, reference: .foundation,
                place: "string", report: report)
            let asKey = Array("{\"".utf8) + body + Array("\":1}".utf8)
            DiffChecks.hostile(
                asKey, as: decodeAny, equal: ==, subject: subject, reference: .foundation, place: "key", report: report)
        }
    }
}

extension Array where Element == String {
    func elementsEqualScalars(_ other: [String]) -> Bool {
        count == other.count && zip(self, other).allSatisfy { $0.unicodeScalars.elementsEqual($1.unicodeScalars) }
    }
}

/// Malformed and hostile input to `FolioJSONDecoder` throws (never traps), or
/// decodes to what Foundation's `JSONDecoder` decodes from the same bytes.
@Suite("Differential hostile input") struct DifferentialHostileInputTests {
    static let nestings: [(open: String, close: String)] = [("[", "]"), ("{\"a\":", "}"), ("[{\"k\":", "}]")]

    @Test func deepNestingThrows() {
        for (open, close) in Self.nestings {
            let unclosed = Array(String(repeating: open, count: 100_000).utf8)
            let closed = Array(
                (String(repeating: open, count: 100_000) + "1" + String(repeating: close, count: 100_000)).utf8)
            for bytes in [unclosed, closed] {
                #expect(throws: (any Error).self, "\(open) x 100,000 as any JSON") {
                    try DiffCoder.folio.decode(DiffAnyJSON.self, from: bytes)
                }
                #expect(throws: (any Error).self, "\(open) x 100,000 as [Int]") {
                    try DiffCoder.folio.decode([Int].self, from: bytes)
                }
                #expect(throws: (any Error).self, "\(open) x 100,000 as Int") {
                    try DiffCoder.folio.decode(Int.self, from: bytes)
                }
                #expect(throws: DecodingError.self, "\(open) x 100,000 as nested arrays") {
                    try DiffCoder.folio.decode([[[[Int]]]].self, from: bytes)
                }
            }
        }
    }

    /// Set to Foundation's limit of 512, Folio accepts and refuses around it what Foundation
    /// does (its default is lower: `customMaximumDepth`, `DecodingStackTests`).
    @Test func nestingAtFoundationsLimit() {
        let report = DiffReport("nesting at 512")
        var subject = DiffCoder.folio
        if subject.side == .folio { subject.maximumDepth = 512 }
        for (open, close) in Self.nestings {
            for depth in [510, 511, 512, 513, 514] {
                let bytes = Array(
                    (String(repeating: open, count: depth) + "1" + String(repeating: close, count: depth)).utf8)
                DiffChecks.hostile(
                    bytes, as: HostileChecks.decodeAny, equal: ==, subject: subject, reference: .foundation,
                    place: "\(open) nested \(depth) deep", report: report)
            }
        }
        recordDiff(report)
        // Whatever the comparison notes, the limit itself must hold: well past 512 is refused,
        // well inside it is read.
        let deep = Array((String(repeating: "[", count: 600) + "1" + String(repeating: "]", count: 600)).utf8)
        #expect(throws: (any Error).self) { try HostileChecks.decodeAny(subject, deep) }
        let shallow = Array((String(repeating: "[", count: 500) + "1" + String(repeating: "]", count: 500)).utf8)
        #expect(throws: Never.self) { try HostileChecks.decodeAny(subject, shallow) }
    }

    /// `maximumDepth` is the deepest nesting accepted.
    @Test(.enabled(if: DiffCoder.folio.side == .folio, "maximumDepth is Folio's"), arguments: [1, 2, 8, 100, 600])
    func customMaximumDepth(limit: Int) throws {
        var decoder = DiffCoder.folio
        decoder.maximumDepth = limit
        for (open, close) in Self.nestings.prefix(2) {
            let within = Array(
                (String(repeating: open, count: limit) + "1" + String(repeating: close, count: limit)).utf8)
            let beyond = Array(
                (String(repeating: open, count: limit + 1) + "1" + String(repeating: close, count: limit + 1)).utf8)
            #expect(throws: Never.self, "\(open) x \(limit) with maximumDepth \(limit)") {
                try decoder.decode(DiffAnyJSON.self, from: within)
            }
            #expect(throws: DecodingError.self, "\(open) x \(limit + 1) with maximumDepth \(limit)") {
                try decoder.decode(DiffAnyJSON.self, from: beyond)
            }
        }
    }

    /// Huge and tiny numbers: Folio throws or reads what Foundation reads.
    @Test func hugeNumbers() {
        let report = DiffReport("huge numbers")
        let texts = [
            "1e999999", "-1e999999", "1e-999999", "1e309", "-1e309", "2e-324", "3e-324", "1.7976931348623158e308",
            "1.7976931348623159e308",
            "4.9e-324", "2.4703282292062328e-324", "2.4703282292062327e-324", "3.4028235e38", "3.4028236e38", "3.5e38",
            "1e-46", "0e999999", "-0",
            "-0.0", "0.0e0", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615", "18446744073709551616", "1e2", "1.0", "1.5", "100e-2", "127", "128", "-128", "-129",
            "255", "256",
            String(repeating: "9", count: 10_000), "-" + String(repeating: "9", count: 10_000),
            "0." + String(repeating: "1", count: 10_000),
            "1" + String(repeating: "0", count: 10_000) + "e-10000", "0." + String(repeating: "0", count: 10_000) + "1",
            "1e" + String(repeating: "9", count: 10_000), "1e-" + String(repeating: "9", count: 10_000),
            "9007199254740993", "0.1000000000000000055511151231257827021181583404541015625",
            "2.2250738585072011e-308", "2.2250738585072012e-308", "1e23", "8.98846567431158e307",
        ]
        for text in texts {
            let bytes = Array(text.utf8), inArray = Array("[\(text)]".utf8)
            let place = "number \(text.count > 60 ? String(text.prefix(30)) + "…(\(text.count) chars)" : text)"
            func check<T: Decodable & Equatable>(_: T.Type) {
                hostileMayRefuse(
                    bytes, as: { try $0.decode(T.self, from: $1) }, equal: ==, place: place + " as \(T.self)",
                    report: report)
                hostileMayRefuse(
                    inArray, as: { try $0.decode([T].self, from: $1) }, equal: ==, place: place + " in [\(T.self)]",
                    report: report)
            }
            check(Int.self); check(Int8.self); check(UInt8.self); check(Int64.self); check(UInt64.self);
            check(Int32.self)
            hostileMayRefuse(
                bytes, as: { try $0.decode(Double.self, from: $1) }, equal: sameDouble, place: place + " as Double",
                report: report)
            hostileMayRefuse(
                bytes, as: { try $0.decode(Float.self, from: $1) },
                equal: { ($0.isNaN && $1.isNaN) || $0.bitPattern == $1.bitPattern }, place: place + " as Float",
                report: report)
            hostileMayRefuse(
                inArray, as: HostileChecks.decodeAny, equal: ==, place: place + " as any JSON", report: report)
        }
        recordDiff(report)
    }

    /// Integers written with a fraction or an exponent (valid JSON other writers produce):
    /// Foundation reads them exactly into integer types when the value is whole and fits.
    @Test func integersWithFractionOrExponent() {
        let report = DiffReport("integers with fraction or exponent")
        let texts = [
            "1.0", "1e0", "100e-2", "-1.000e0", "0.0e5", "127.0", "12345678901.0", "9007199254740993.0",
            "999999999999999999.0",
            "4228556093997007178.0", "4228556093997007178e0", "42285560939970071780e-1", "1000000000000000000.0",
            "9223372036854775807.0",
            "18446744073709551615.0", "18446744073709551615e0", "1844674407370955161.5e1", "-9223372036854775808.0",
            "1.5", "1e-1",
        ]
        for text in texts {
            func check<T: Decodable & Equatable>(_: T.Type) {
                DiffChecks.hostile(
                    Array("[\(text)]".utf8), as: { try $0.decode([T].self, from: $1) }, equal: ==, subject: .folio,
                    reference: .foundation,
                    place: "[\(text)] as [\(T.self)]", report: report)
            }
            check(Int.self); check(Int64.self); check(UInt64.self); check(Int8.self); check(UInt32.self)
        }
        recordDiff(report)
    }

    /// Decimal numbers whose significant digits are a multiple of 2^64 (such as
    /// `0.018446744073709551616`): a reader that gathers digits in 64 bits and
    /// wraps reads them as 0.
    @Test func significandsThatWrap64Bits() {
        let report = DiffReport("significands that wrap 64 bits")
        for multiple in [
            "18446744073709551616", "36893488147419103232", "55340232221128654848", "92233720368547758080",
            "18446744073709551617", "18446744073709551615",
        ] {
            for point in [0, 1, 5, 16, 19] {
                var text = multiple
                text.insert(".", at: text.index(text.startIndex, offsetBy: point))
                if point == 0 { text = "0" + text }
                for spelling in [text, "-" + text, text + "e3", "0.00" + multiple, multiple + "e-25"] {
                    let bytes = Array("[\(spelling)]".utf8)
                    DiffChecks.hostile(
                        bytes, as: { try $0.decode([Double].self, from: $1) },
                        equal: { zip($0, $1).allSatisfy { sameDouble($0, $1) } && $0.count == $1.count },
                        subject: .folio, reference: .foundation, place: "[\(spelling)] as [Double]", report: report)
                    DiffChecks.hostile(
                        bytes, as: { try $0.decode([Float].self, from: $1) },
                        equal: { zip($0, $1).allSatisfy { $0.bitPattern == $1.bitPattern } && $0.count == $1.count },
                        subject: .folio, reference: .foundation, place: "[\(spelling)] as [Float]", report: report)
                }
            }
        }
        recordDiff(report)
    }

    /// Keys of `[Int: T]` are strings Swift's `Int(_:)` parses: spellings it accepts or refuses.
    @Test func intDictionaryKeys() {
        let report = DiffReport("int dictionary keys")
        for key in [
            "0", "-0", "01", "+1", " 1", "1 ", "1.0", "1e2", "0x10", "9223372036854775807", "9223372036854775808",
            "-9223372036854775808",
            "", "-", "١", "1_000", #"\u0031"#, #"\u0000"#, "999999999999999999999",
        ] {
            let bytes = Array("{\"\(key)\":true}".utf8)
            DiffChecks.hostile(
                bytes, as: { try $0.decode([Int: Bool].self, from: $1) }, equal: ==, subject: .folio,
                reference: .foundation, place: "[Int: Bool] key \(key)", report: report)
            DiffChecks.hostile(
                bytes, as: { try $0.decode([Int8: Bool].self, from: $1) }, equal: ==, subject: .folio,
                reference: .foundation, place: "[Int8: Bool] key \(key)", report: report)
            DiffChecks.hostile(
                bytes, as: { try $0.decode([UInt: Bool].self, from: $1) }, equal: ==, subject: .folio,
                reference: .foundation, place: "[UInt: Bool] key \(key)", report: report)
        }
        recordDiff(report)
    }

    /// For huge numbers the issue allows refusing what Foundation accepts: throws, or the
    /// same value. Refusals are noted.
    func hostileMayRefuse<T>(
        _ bytes: [UInt8], as decode: (DiffCoder, [UInt8]) throws -> T, equal: (T, T) -> Bool, place: String,
        report: DiffReport
    ) {
        let r = DiffOutcome { try decode(.foundation, bytes) }
        switch DiffOutcome({ try decode(.folio, bytes) }) {
        case .failure(let error):
            if let x = r.value { report.note("\(place): Foundation decodes \(x), Folio throws \(error)") }
        case .value(let y):
            if let x = r.value {
                if !equal(x, y) { report.fail("\(place): Foundation decodes \(x), Folio \(y)") }
            } else {
                report.fail("\(place): Foundation throws, Folio decodes \(y)")
            }
        }
    }

    @Test func everyTruncationThrows() {
        let report = DiffReport("truncations")
        let decoded = HostileChecks.truncations(
            subject: .folio, seed: DiffBudget.seed &+ 11, documents: DiffBudget.count(120), report: report)
        #expect(decoded > 1_000)
        recordDiff(report)
    }

    @Test("Random mutations", arguments: 0..<2)
    func randomMutations(part: Int) {
        let report = DiffReport("mutations part \(part)")
        HostileChecks.mutations(
            subject: .folio, seed: DiffBudget.seed &+ 13 &+ UInt64(part) << 32, count: DiffBudget.count(20_000),
            report: report)
        recordDiff(report)
    }

    @Test func equivalentSpellings() {
        let report = DiffReport("respellings")
        let (documents, same) = HostileChecks.respellings(
            subject: .folio, seed: DiffBudget.seed &+ 17, count: DiffBudget.count(6_000), report: report)
        // The respellings are the same JSON values: Foundation reads nearly all as the original.
        #expect(same > documents / 2)
        recordDiff(report)
    }

    /// Errors: `DecodingError` of the same case at the same coding path as Foundation's.
    @Test func wrongShapeErrors() {
        let report = DiffReport("wrong shapes")
        let compared = HostileChecks.wrongShapes(
            subject: .folio, seed: DiffBudget.seed &+ 19, count: DiffBudget.count(3_000), report: report)
        #expect(compared > 500)
        recordDiff(report)
    }

    @Test func invalidStringsAndEscapes() {
        let report = DiffReport("strings")
        HostileChecks.strings(subject: .folio, report: report)
        recordDiff(report)
    }

    /// Foundation reads UTF-16 and UTF-32 input (it guesses the encoding); Folio reads UTF-8
    /// (documented), so it may refuse them, but never traps or reads something else.
    @Test func utf16AndUTF32Input() throws {
        let text = #"[1,"é😀"]"#
        let encodings: [(String, [UInt8])] = [
            ("UTF-16LE", Array(text.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }),
            ("UTF-16BE", Array(text.utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }),
            ("UTF-16LE with BOM", [0xFF, 0xFE] + Array(text.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }),
            (
                "UTF-32LE",
                text.unicodeScalars.flatMap { s in (0..<4).map { UInt8(truncatingIfNeeded: s.value >> (8 * $0)) } }
            ),
            ("UTF-8 with BOM", [0xEF, 0xBB, 0xBF] + Array(text.utf8)),
        ]
        let expected = DiffAnyJSON.array([.int(1), .string("é😀")])
        for (name, bytes) in encodings {
            #expect(
                try DiffCoder.foundation.decode(DiffAnyJSON.self, from: bytes) == expected, "Foundation reads \(name)")
            if let folio = try? DiffCoder.folio.decode(DiffAnyJSON.self, from: bytes) {
                #expect(folio == expected, "\(name)")
            }
        }
        // A UTF-8 byte order mark is UTF-8: Folio reads it as Foundation does.
        #expect(try DiffCoder.folio.decode(DiffAnyJSON.self, from: encodings[4].1) == expected)
    }

    /// Surrogate pairs in `\u` escapes, as other JSON writers escape non-BMP characters.
    @Test func escapedSurrogatePairs() throws {
        let cases: [(String, String)] = [
            (#"["\ud83d\ude00"]"#, "😀"), (#"["\uD834\uDD1E"]"#, "𝄞"), (#"["\udbff\udfff"]"#, "\u{10FFFF}"),
            (#"["a\u0301\u00e9"]"#, "a\u{301}\u{e9}"), (#"["\u0000"]"#, "\u{0}"),
        ]
        for (json, expected) in cases {
            let decoded = try DiffCoder.folio.decode([String].self, from: Array(json.utf8))
            #expect(decoded.elementsEqualScalars([expected]), "\(json)")
        }
    }

    /// A large array decodes without an intermediate tree blowing the process's memory.
    @Test func largeArray() throws {
        let count = 2_000_000
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(count * 2 + 1)
        for i in 0..<count { bytes += i == 0 ? [UInt8(ascii: "7")] : [UInt8(ascii: ","), UInt8(ascii: "7")] }
        bytes.append(UInt8(ascii: "]"))
        let before = maxResidentBytes()
        let decoded = try DiffCoder.folio.decode([UInt8].self, from: bytes)
        #expect(decoded.count == count)
        #expect(decoded.allSatisfy { $0 == 7 })
        // 4 MB of input, 2 MB of output: a decoder holding a few hundred bytes per element would pass 500 MB.
        let growth = maxResidentBytes() - before
        #expect(growth < 500 << 20, "peak resident memory grew \(growth >> 20) MB")
        // Unclosed, and one element wrong at the end: throws, no trap.
        #expect(throws: (any Error).self) { try DiffCoder.folio.decode([UInt8].self, from: Array(bytes.dropLast())) }
        var wrong = bytes
        wrong[wrong.count - 2] = UInt8(ascii: "x")
        #expect(throws: (any Error).self) { try DiffCoder.folio.decode([UInt8].self, from: wrong) }
    }

    func maxResidentBytes() -> Int {
        var usage = rusage()
        #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
        #else
        getrusage(RUSAGE_SELF, &usage)
        return usage.ru_maxrss
        #endif
    }
}

/// The hostile checks against Foundation itself: they find no mismatch, so what they find
/// against Folio is Folio's.
@Suite("Differential hostile input self-test") struct DifferentialHostileHarnessTests {
    @Test func foundationAgreesWithItself() {
        let report = DiffReport("hostile self-test")
        #expect(HostileChecks.truncations(subject: .foundation, seed: 5, documents: 20, report: report) > 100)
        HostileChecks.mutations(subject: .foundation, seed: 5, count: 2_000, report: report)
        HostileChecks.strings(subject: .foundation, report: report)
        #expect(HostileChecks.wrongShapes(subject: .foundation, seed: 5, count: 500, report: report) > 50)
        let (documents, same) = HostileChecks.respellings(subject: .foundation, seed: 5, count: 1_000, report: report)
        #expect(same > documents / 2)
        #expect(report.failureCount == 0 && report.findingCount == 0)
        recordDiff(report)
    }
}
