import Foundation
import Testing
import FolioJSON

func recordDiff(_ report: DiffReport, sourceLocation: SourceLocation = #_sourceLocation) {
    for failure in report.failures {
        Issue.record("\(report.name): \(failure)", sourceLocation: sourceLocation)
    }
    if report.failureCount > report.failures.count {
        Issue.record(
            "\(report.name): \(report.failureCount - report.failures.count) more mismatches",
            sourceLocation: sourceLocation)
    }
    if report.findingCount > 0 {
        print(
            "[\(report.name)] \(report.findingCount) findings (differences Docs/JSON.md allows, not failures); first:")
        for finding in report.findings { print("  " + finding) }
    }
}

/// Folio's coder against Foundation's on generated values of generated types.
/// `FOLIO_JSON_FUZZ=N` multiplies the counts, `FOLIO_JSON_SEED=S` changes the seed.
@Suite("Differential round trips") struct DifferentialRoundTripTests {
    /// 100,000 generated values (by default), each Foundation → Folio, Folio → Foundation
    /// and Folio → Folio; split over two tests so two cores share them.
    @Test("Generated values round-trip", arguments: 0..<2)
    func generatedValues(part: Int) {
        let report = DiffReport("round trips part \(part)")
        let checked = DiffChecks.roundTrips(
            subject: .folio, reference: .foundation, seed: DiffBudget.seed &+ UInt64(part) << 40,
            count: DiffBudget.count(50_000), report: report)
        #expect(checked == DiffBudget.count(50_000) || report.shouldStop)
        recordDiff(report)
    }

    /// `FOLIO_JSON_REPLAY=S/D` replays the shape of a reported "seed S depth D" (its first 25 values)
    /// and prints each value's JSON from both encoders.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["FOLIO_JSON_REPLAY"] != nil))
    func replay() throws {
        let parts = (ProcessInfo.processInfo.environment["FOLIO_JSON_REPLAY"] ?? "").split(separator: "/")
        let seed = try #require(parts.first.flatMap { UInt64($0) })
        let depth = parts.count > 1 ? try #require(Int(parts[1])) : 4
        var generator = DiffGenerator(seed: seed)
        let shape = generator.shape(depth: depth)
        print("shape: \(shape)")
        for k in 0..<25 {
            let value = generator.value(shape)
            print("value #\(k): \(value)")
            print(
                "  Foundation: \(DiffOutcome { try DiffCoder.foundation.encode(value, as: shape) }.value.map(jsonText) ?? "throws")"
            )
            print(
                "  Folio:      \(DiffOutcome { try DiffCoder.folio.encode(value, as: shape) }.value.map(jsonText) ?? "throws")"
            )
        }
        let report = DiffReport("replay \(seed)")
        DiffChecks.roundTrips(
            subject: .folio, reference: .foundation, seed: seed, count: 25, depth: depth, report: report)
        recordDiff(report)
    }

    /// The coding paths nested values see, while encoding and decoding.
    @Test func codingPaths() {
        let report = DiffReport("coding paths")
        let (checked, _) = DiffChecks.codingPaths(
            subject: .folio, reference: .foundation, seed: DiffBudget.seed &+ 8 << 40, count: DiffBudget.count(3_000),
            report: report)
        #expect(checked == DiffBudget.count(3_000))
        recordDiff(report)
    }

    /// Deep shapes, fewer values: nesting of every container kind through every child mode.
    @Test func deepShapes() {
        let report = DiffReport("deep shapes")
        DiffChecks.roundTrips(
            subject: .folio, reference: .foundation, seed: DiffBudget.seed &+ 7 << 40, count: DiffBudget.count(2_000),
            valuesPerShape: 4, depth: 9, report: report)
        recordDiff(report)
    }
}

/// The harness proves itself: Foundation against Foundation must agree on everything, so a
/// mismatch reported against Folio is Folio's.
@Suite("Differential harness self-test") struct DifferentialHarnessTests {
    @Test func foundationAgreesWithItself() {
        let report = DiffReport("self-test")
        let checked = DiffChecks.roundTrips(
            subject: .foundation, reference: .foundation, seed: DiffBudget.seed, count: 2_000, report: report)
        #expect(checked == 2_000)
        #expect(report.failureCount == 0)
        recordDiff(report)
    }

    /// ... and it does report a coder that gets values wrong.
    @Test func reportsAFaultyCoder() {
        let roundTrips = DiffReport("faulty round trips")
        DiffChecks.roundTrips(
            subject: DiffCoder(side: .faulty), reference: .foundation, seed: DiffBudget.seed, count: 500,
            report: roundTrips)
        #expect(roundTrips.failureCount > 50)
        #expect(
            roundTrips.failures.first.map { $0.contains("shape: ") && $0.contains("json: ") && $0.contains("seed ") }
                == true)
        let strategies = DiffReport("faulty strategies")
        DiffChecks.strategyAgreement(
            subject: DiffCoder(side: .faulty), reference: .foundation, strategies: DiffStrategies(date: .seconds),
            options: ValueOptions(),
            seed: 1, count: 200, report: strategies)
        #expect(strategies.failureCount > 20)
        let hostile = DiffReport("faulty hostile")
        HostileChecks.mutations(subject: DiffCoder(side: .faulty), seed: 1, count: 500, report: hostile)
        #expect(hostile.failureCount > 5)
    }

    @Test func codingPathsAgreeWithThemselves() {
        let report = DiffReport("coding paths self-test")
        let (_, differing) = DiffChecks.codingPaths(
            subject: .foundation, reference: .foundation, seed: 3, count: 500, report: report)
        #expect(differing == 0 && report.failureCount == 0)
        recordDiff(report)
    }

    @Test func generatorIsDeterministic() {
        var a = DiffGenerator(seed: 42), b = DiffGenerator(seed: 42)
        for _ in 0..<50 {
            let sa = a.shape(), sb = b.shape()
            #expect(sa.description == sb.description)
            #expect(strictlyEqual(a.value(sa), b.value(sb)))
        }
    }

    /// The generator reaches every scalar kind, every container and the limits.
    @Test func generatorCoversTheCases() throws {
        var seen = Set<String>()
        func walk(_ s: DiffShape) {
            switch s {
            case .optional(let i): seen.insert("optional"); walk(i)
            case .array(let e, let m): seen.insert("array"); seen.insert("mode \(m)"); walk(e)
            case .stringDictionary(let e): seen.insert("stringDictionary"); walk(e)
            case .intDictionary(let e): seen.insert("intDictionary"); walk(e)
            case .structure(let f):
                seen.insert("structure")
                for field in f {
                    seen.insert("mode \(field.mode)")
                    walk(field.shape)
                }
            case .enumeration(let c):
                seen.insert("enumeration")
                for enumCase in c { for field in enumCase.fields { walk(field.shape) } }
            default: seen.insert(s.description)
            }
        }
        var g = DiffGenerator(seed: 1)
        for _ in 0..<500 { walk(g.shape()) }
        for s in DiffShape.scalars { #expect(seen.contains(s.description), "\(s)") }
        for k in [
            "optional", "array", "stringDictionary", "intDictionary", "structure", "enumeration", "mode d", "mode b",
            "mode s",
        ] {
            #expect(seen.contains(k), "\(k)")
        }
        var doubles = Set<UInt64>(), strings = ""
        for _ in 0..<5000 {
            doubles.insert(g.double().bitPattern)
            strings += g.string()
        }
        for d in [-0.0, 5e-324, .greatestFiniteMagnitude, 0.1, 1.0 / 3, 1e300] {
            #expect(doubles.contains(d.bitPattern), "\(d)")
        }
        #expect(doubles.contains { Double(bitPattern: $0).isSubnormal && Double(bitPattern: $0) != 5e-324 })
        for c in ["\u{0}", "\"", "\\", "/", "😀", "e\u{301}", "\u{1F}"] {
            #expect(strings.contains(c), "\(String(reflecting: c))")
        }
        // Foundation writes them as JSON escapes, and the generated JSON holds them.
        let json = try DiffCoder.foundation.encode(DiffValue.string("\u{0}\"\\/\n"), as: .string)
        #expect(String(decoding: json, as: UTF8.self) == #""\u0000\"\\\/\n""#)
    }
}
