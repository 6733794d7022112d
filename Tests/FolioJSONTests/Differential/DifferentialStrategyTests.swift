import Foundation
import Testing
import FolioJSON

/// Every strategy, both directions, against Foundation with the corresponding strategy.
@Suite("Differential strategies") struct DifferentialStrategyTests {
    static let floatStrings: [[String]] = [["Infinity", "-Infinity", "NaN"], ["+∞", "-∞", "n\"a\\n"]]

    /// Each date, data, non-conforming float and key strategy alone, and all their
    /// combinations, on generated values that need them (non-finite floats, camelCase keys).
    static var strategySets: [DiffStrategies] {
        var sets: [DiffStrategies] = []
        for date in [DiffStrategies.DateKind.deferred, .seconds, .milliseconds, .iso8601] {
            for data in [DiffStrategies.DataKind.deferred, .base64] {
                for floats in [nil] + floatStrings {
                    for snakeCase in [false, true] {
                        sets.append(DiffStrategies(date: date, data: data, floats: floats, snakeCase: snakeCase))
                    }
                }
            }
        }
        return sets
    }

    static func options(_ s: DiffStrategies) -> ValueOptions {
        ValueOptions(nonFinite: true, wholeSecondDates: s.date == .iso8601, camelCaseNames: s.snakeCase)
    }

    @Test("Strategy agreement", arguments: Array(strategySets.enumerated()))
    func agreement(index: Int, strategies: DiffStrategies) {
        let report = DiffReport("strategies \(strategies)")
        DiffChecks.strategyAgreement(
            subject: .folio, reference: .foundation, strategies: strategies, options: Self.options(strategies),
            seed: DiffBudget.seed &+ UInt64(index) << 20, count: DiffBudget.count(200), report: report)
        recordDiff(report)
    }

    /// ISO 8601 of dates with fractions of a second: Folio writes whole seconds, as Foundation's
    /// `.iso8601`; both must write the same second.
    @Test func iso8601FractionalSeconds() throws {
        let report = DiffReport("iso8601 fractional")
        let strategies = DiffStrategies(date: .iso8601)
        DiffChecks.strategyAgreement(
            subject: .folio, reference: .foundation, strategies: strategies, options: ValueOptions(),
            seed: DiffBudget.seed &+ 99, count: DiffBudget.count(500), report: report)
        recordDiff(report)
    }

    /// Dates a hair before a whole second: Foundation writes the second before (it rounds
    /// down the exact time); a writer that first adds 978,307,200 s to reach 1970 loses the
    /// fraction and writes the whole second.
    @Test func iso8601JustBeforeAWholeSecond() throws {
        let report = DiffReport("iso8601 just before a whole second")
        let strategies = DiffStrategies(date: .iso8601)
        for base in [0.0, 1, -1, 700_000_000, -700_000_000, -978_307_200, 1_000_000_000, 3_000_000_000] {
            for below in [1e-300, 1e-12, base.ulp, 2 * base.ulp, 1e-7, 1e-6, 0.001, 0.5] where below > 0 {
                let date = Date(timeIntervalSinceReferenceDate: base - below)
                let foundation = try DiffCoder.foundation.with(strategies).encode([date])
                let folio = try DiffCoder.folio.with(strategies).encode([date])
                let f = try JSONDecoder().decode([String].self, from: Data(foundation)),
                    g = try JSONDecoder().decode([String].self, from: Data(folio))
                if f != g {
                    report.fail(
                        "Date(timeIntervalSinceReferenceDate: \(date.timeIntervalSinceReferenceDate)): Foundation writes \(f[0]), Folio \(g[0])"
                    )
                }
            }
        }
        recordDiff(report)
    }

    /// ISO 8601 text Foundation's `.iso8601` decoding reads (and refuses), read by Folio.
    @Test func iso8601Texts() {
        let report = DiffReport("iso8601 texts")
        let texts = [
            "2025-03-01T12:00:00Z", "1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2000-02-29T00:00:00Z",
            "2001-02-29T00:00:00Z",
            "2025-03-01T12:00:00+01:00", "2025-03-01T12:00:00-0530", "2025-03-01T12:00:00.5Z", "2025-03-01 12:00:00Z",
            "2025-03-01T12:00:00",
            "2025-03-01", "20250301T120000Z", "2025-13-01T00:00:00Z", "2025-03-01T24:00:00Z", "2025-03-01T12:60:00Z",
            "2025-03-01T12:00:60Z",
            "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "", "Z", "2025-03-01t12:00:00z", " 2025-03-01T12:00:00Z",
        ]
        let coder = DiffStrategies(date: .iso8601)
        for text in texts {
            let bytes = Array("[\"\(text)\"]".utf8)
            DiffChecks.hostile(
                bytes, as: { try $0.with(coder).decode([Date].self, from: $1) },
                equal: { $0.map(\.timeIntervalSinceReferenceDate) == $1.map(\.timeIntervalSinceReferenceDate) },
                subject: .folio, reference: .foundation, place: "iso8601 \(String(reflecting: text))", report: report)
        }
        recordDiff(report)
    }

    /// Base64 text variants: padding, no padding, whitespace, URL alphabet, garbage.
    @Test func base64Texts() {
        let report = DiffReport("base64 texts")
        let texts = [
            "", "AA==", "AAA=", "AAAA", "AA", "AAA", "A", "AA=", "AA===", "/+/+", "-_-_", "AA AA", "AA\\nAA", "QUJD",
            "QUJDRA==", "QUJDRA", "QUJD\\/w==", "====", "Zm9v YmFy",
        ]
        for text in texts {
            let bytes = Array("[\"\(text)\"]".utf8)
            DiffChecks.hostile(
                bytes, as: { try $0.decode([Data].self, from: $1) }, equal: ==, subject: .folio, reference: .foundation,
                place: "base64 \(String(reflecting: text))", report: report)
        }
        recordDiff(report)
    }

    /// Snake case conversion of hand-picked keys, both directions: what each encoder writes,
    /// and which key each decoder matches.
    @Test func snakeCaseKeys() throws {
        let report = DiffReport("snake case keys")
        let names =
            DiffGenerator.camelNames + [
                "", "_", "__", "a_b", "aBc_dEf", "ABCdef", "abcDEF", "a1", "A1b", "é", "ÉtéX", "a😀B", "snake_Case",
                "_a_B_", "oneTWO3four",
                "x-y", "kebab-caseKey", "with space", "İstanbul", "ǅungla", "straße", "ǈJ",
            ]
        let shape = DiffShape.structure(
            names.enumerated().map { ShapeField(name: $1 + ($0 == 0 ? "" : "\u{0}\($0)"), shape: .int, mode: .direct) })
        let value = DiffValue.structure(names.indices.map { .int($0) })
        let strategies = DiffStrategies(snakeCase: true)
        let r = try DiffCoder.foundation.with(strategies).encode(value, as: shape)
        let s = try DiffCoder.folio.with(strategies).encode(value, as: shape)
        let rTree = try DiffCoder.foundation.decode(DiffAnyJSON.self, from: r),
            sTree = try DiffCoder.foundation.decode(DiffAnyJSON.self, from: s)
        if rTree != sTree {
            if case .object(let ro) = rTree, case .object(let so) = sTree {
                for key in Set(ro.keys).symmetricDifference(so.keys) {
                    report.fail(
                        "convertToSnakeCase: key \(String(reflecting: key)) only in \(ro[key] != nil ? "Foundation's" : "Folio's") output"
                    )
                }
            } else {
                report.fail("convertToSnakeCase: Foundation \(jsonText(r)), Folio \(jsonText(s))")
            }
        }
        // Each name alone, decoded from the snake case key and from the name as it is.
        for name in names {
            let one = DiffShape.structure([ShapeField(name: name, shape: .int, mode: .direct)])
            let snake = try DiffCoder.foundation.decode(
                DiffAnyJSON.self,
                from: DiffCoder.foundation.with(strategies).encode(DiffValue.structure([.int(1)]), as: one))
            for key in [name, snake.snakeKey(forValue: 1) ?? name] {
                let bytes = Array("{\(String(decoding: try JSONEncoder().encode(key), as: UTF8.self)):1}".utf8)
                DiffChecks.hostile(
                    bytes, as: { try $0.with(strategies).decode(one, from: $1) }, equal: strictlyEqual, subject: .folio,
                    reference: .foundation,
                    place: "convertFromSnakeCase of \(String(reflecting: key)) for field \(String(reflecting: name))",
                    report: report)
            }
        }
        // Dictionary keys: Foundation converts `[String: T]` keys neither way.
        let dictionary = DiffShape.stringDictionary(.int)
        let dictionaryValue = DiffValue.stringDictionary(
            Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, .int($0)) }))
        DiffChecks.strategyAgreementOne(
            dictionaryValue, dictionary, subject: .folio, reference: .foundation, strategies: strategies,
            place: "[String: Int] keys", report: report)
        recordDiff(report)
    }

    /// userInfo reaches nested values through both coders (the generated values need it).
    @Test func userInfoReachesNestedValues() throws {
        let shape = DiffShape.array(
            .structure([ShapeField(name: "a", shape: .array(.int8, .boxed), mode: .superCoder)]), .boxed)
        let value = DiffValue.array([.structure([.array([.int8(1), .int8(-128)])])])
        let bytes = try DiffCoder.folio.encode(value, as: shape)
        #expect(strictlyEqual(try DiffCoder.folio.decode(shape, from: bytes), value))
        #expect(throws: DecodingError.self) { try DiffCoder.folio.decode(DiffGenerated.self, from: bytes) }
    }
}

extension DiffAnyJSON {
    /// The key of the member whose value is the integer `value`.
    func snakeKey(forValue value: Int) -> String? {
        guard case .object(let o) = self else { return nil }
        return o.first { $0.value == .int(Int64(value)) }?.key
    }
}

extension DiffChecks {
    static func strategyAgreementOne(
        _ value: DiffValue, _ shape: DiffShape, subject: DiffCoder, reference: DiffCoder, strategies: DiffStrategies,
        place: String, report: DiffReport
    ) {
        let subject = subject.with(strategies), reference = reference.with(strategies)
        let r = DiffOutcome { try reference.encode(value, as: shape) },
            s = DiffOutcome { try subject.encode(value, as: shape) }
        guard let rb = r.value, let sb = s.value else {
            if (r.value == nil) != (s.value == nil) {
                report.fail("\(place): \(reference) encodes \(r), \(subject) \(s)")
            }
            return
        }
        let plain = DiffCoder.foundation
        if (try? plain.decode(DiffAnyJSON.self, from: rb)) != (try? plain.decode(DiffAnyJSON.self, from: sb)) {
            report.fail("\(place): different JSON\n  \(reference): \(jsonText(rb))\n  \(subject): \(jsonText(sb))")
        }
        if !sameOutcome(
            DiffOutcome { try reference.decode(shape, from: rb) }, DiffOutcome { try subject.decode(shape, from: rb) })
        {
            report.fail("\(place): \(subject) reads \(jsonText(rb)) differently from \(reference)")
        }
    }
}
