import Testing
import Foundation
@testable import Folio
import FolioTestSupport

/// The compiled form of a predicate (Query/Compiled) against Foundation's own `evaluate`:
/// for random expression trees over every supported kind, and for `#Predicate` shapes the
/// macro writes, on random records (NaN, signed zeros, strings not in normal form, nil), the
/// compiled result must be Foundation's, and where Foundation throws, the compiled form
/// must throw the same error.
@Suite struct CompiledPredicateTests {
    typealias Sample = PredicateSample

    /// `true`, `false` or the error thrown.
    static func outcome(_ evaluate: () throws -> Bool) -> String {
        do {
            return try evaluate() ? "true" : "false"
        } catch {
            return "throws \(error)"
        }
    }

    static func samples(_ count: Int, seed: UInt64) -> [Sample] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { Sample.random($0, &rng) }
    }

    /// Every disagreement of `predicate`'s compiled form with Foundation on `samples`.
    static func disagreements(_ predicate: Predicate<Sample>, on samples: [Sample]) -> [String] {
        let compiled = CompiledPredicate(predicate)
        return samples.compactMap { sample in
            let expected = outcome { try predicate.evaluate(sample) }
            let actual = outcome { try compiled.evaluate(sample) }
            return expected == actual ? nil : "\(sample): Foundation \(expected), compiled \(actual)"
        }
    }

    @Test func randomTreesAgreeWithFoundation() {
        let samples = Self.samples(60, seed: 11)
        var generator = PredicateTreeGenerator(seed: 2026)
        var compiledWhole = 0
        for round in 0..<500 {
            let predicate = generator.predicate(depth: 3)
            if CompiledPredicate(predicate).foundationSubtrees == 0 { compiledWhole += 1 }
            let wrong = Self.disagreements(predicate, on: samples)
            #expect(wrong.isEmpty, "round \(round), \(predicate.expression): \(wrong.prefix(3))")
            if !wrong.isEmpty { return }
        }
        // Most trees hold no expression left to Foundation: the comparison is of compiled code.
        #expect(compiledWhole > 200)
    }

    /// Each comparison operator alone, so a wrong operator cannot hide behind the others.
    @Test(arguments: 0..<6) func eachOperatorAgreesWithFoundation(_ op: Int) {
        let samples = Self.samples(80, seed: 5)
        var generator = PredicateTreeGenerator(seed: UInt64(op) + 100)
        generator.operators = [op]
        for _ in 0..<150 {
            let predicate = generator.predicate(depth: 1)
            let wrong = Self.disagreements(predicate, on: samples)
            #expect(wrong.isEmpty, "\(predicate.expression): \(wrong.prefix(3))")
            if !wrong.isEmpty { return }
        }
    }

    /// Shapes `#Predicate` writes for optional chaining, `if let`, `??`, captured constants.
    @Test func macroShapesAgreeWithFoundation() {
        let samples = Self.samples(200, seed: 3)
        var rng = SplitMix64(seed: 9)
        for _ in 0..<40 {
            let c = Int(rng.next() % 7) - 3, d = Sample.doubles[Int(rng.next() % 8)]
            let s = Sample.strings[Int(rng.next() % UInt64(Sample.strings.count))]
            let date = Sample.dates[Int(rng.next() % 4)]
            let predicates: [Predicate<Sample>] = [
                #Predicate { $0.int == c },
                #Predicate { $0.double < d || $0.double >= d },
                #Predicate { $0.double == d && !$0.flag },
                #Predicate { $0.string == s },
                #Predicate { $0.string < s },
                #Predicate { s <= $0.string },
                #Predicate { $0.optionalString?.count == c },
                #Predicate { ($0.optionalInt ?? c) > $0.other },
                #Predicate { $0.optionalInt == nil || $0.optionalInt! < c },
                #Predicate { if let value = $0.optionalInt { value > c } else { $0.flag } },
                #Predicate { $0.date > date },
                #Predicate { $0.numbers.contains(c) && $0.tags.contains(s) },
                #Predicate { $0.numbers.contains { $0 > c } },
                #Predicate { $0.tags.allSatisfy { $0 != s } },
                #Predicate { (c...(c + 2)).contains($0.int) },
                #Predicate { $0.int + $0.other * 2 > c },
                #Predicate { $0.string.starts(with: s) },
                #Predicate { $0.optionalString.flatMap { $0.count > c } ?? false },
            ]
            for predicate in predicates {
                let wrong = Self.disagreements(predicate, on: samples)
                #expect(wrong.isEmpty, "\(predicate.expression): \(wrong.prefix(3))")
            }
        }
    }

    /// The common shapes compile whole (no Foundation subtree); what the compiler does not
    /// know is left to Foundation, there only.
    @Test func commonShapesCompileWhole() {
        let c = 1, s = "a"
        let whole: [Predicate<Sample>] = [
            #Predicate { $0.int == c },
            #Predicate { $0.int >= c && $0.string < s || !$0.flag },
            #Predicate { $0.optionalString?.count == c },
            #Predicate { ($0.optionalInt ?? 0) > c },
            #Predicate { (0..<c).contains($0.int) },
            #Predicate { $0.numbers.contains { $0 > c } },
        ]
        for predicate in whole { #expect(CompiledPredicate(predicate).foundationSubtrees == 0, "\(predicate)") }
        let partial = #Predicate<Sample> { $0.double / 2 > 1 && $0.int == c }
        #expect(CompiledPredicate(partial).foundationSubtrees == 1)
    }

    final class Box {
        let value: Int
        let label: String
        var doubled: Int { value * 2 }
        init(_ value: Int) {
            self.value = value
            label = "box \(value)"
        }
    }

    struct Wrapper {
        var inner: Sample
        var computed: Int { inner.int + inner.other }
    }

    /// Records that are classes, computed properties and nested stored properties are read
    /// through their key paths (the offset read is only for stored properties of structs).
    @Test func classesAndComputedPropertiesAgreeWithFoundation() throws {
        for c in -4...4 {
            let boxes = (-3...3).map(Box.init)
            let onBoxes: [Predicate<Box>] = [
                #Predicate { $0.value == c }, #Predicate { $0.doubled > c }, #Predicate { $0.label.count > c + 5 },
            ]
            for predicate in onBoxes {
                let compiled = CompiledPredicate(predicate)
                #expect(compiled.foundationSubtrees == 0)
                for box in boxes { #expect(try compiled.evaluate(box) == predicate.evaluate(box)) }
            }
            let wrappers = Self.samples(50, seed: UInt64(c + 10)).map(Wrapper.init), d = Double(c)
            let onWrappers: [Predicate<Wrapper>] = [
                #Predicate { $0.inner.int == c }, #Predicate { $0.computed < c },
                #Predicate { $0.inner.string.count == c + 2 || $0.inner.double < d },
            ]
            for predicate in onWrappers {
                let compiled = CompiledPredicate(predicate)
                for wrapper in wrappers {
                    #expect(
                        Self.outcome { try compiled.evaluate(wrapper) }
                            == Self.outcome { try predicate.evaluate(wrapper) })
                }
            }
        }
    }
}
