import Foundation
import FolioTestSupport

/// The record the compiled-predicate tests evaluate: one field of each kind a predicate
/// compares (integers, doubles with NaN and signed zeros, strings some not in normal form,
/// optionals, a Bool, dates, arrays).
struct PredicateSample: Codable, Sendable {
    var id: Int
    var int: Int
    var other: Int
    var double: Double
    var string: String
    var optionalInt: Int?
    var optionalString: String?
    var flag: Bool
    var date: Date
    var numbers: [Int]
    var tags: [String]

    static let doubles: [Double] = [.nan, -0.0, 0.0, 1.5, -2, .infinity, 3, -.infinity]
    /// Canonically equivalent pairs ("é" composed and decomposed, "Ä" both ways) and
    /// strings whose `<` differs from byte order.
    static let strings = ["", "a", "B", "b", "é", "e\u{301}", "Ä", "A\u{308}", "ab", "a\u{0}", "Z", "ä"]
    static let dates = [0.0, 1.5, -10, 1e9].map(Date.init(timeIntervalSince1970:))

    static func random(_ id: Int, _ rng: inout SplitMix64) -> PredicateSample {
        func pick<T>(_ values: [T]) -> T { values[Int(rng.next() % UInt64(values.count))] }
        func small() -> Int { Int(rng.next() % 7) - 3 }
        return PredicateSample(
            id: id, int: small(), other: small(), double: pick(doubles), string: pick(strings),
            optionalInt: rng.next() % 3 == 0 ? nil : small(),
            optionalString: rng.next() % 3 == 0 ? nil : pick(strings), flag: rng.next() % 2 == 0,
            date: pick(dates), numbers: (0..<Int(rng.next() % 4)).map { _ in small() },
            tags: (0..<Int(rng.next() % 3)).map { _ in pick(strings) })
    }
}

/// Random `Predicate<PredicateSample>` trees built from Foundation's own expression builders
/// (what `#Predicate` expands to): comparisons of every field kind, either side constant,
/// `&&`, `||`, `!`, `?:`, optionals (`??`, `flatMap`, `!`, `== nil`), ranges, sequence
/// `contains`, `contains(where:)`, `allSatisfy`, `starts(with:)`, arithmetic, and expressions
/// the compiler leaves to Foundation (a division, a remainder), also inside a
/// `flatMap` whose variable they read.
struct PredicateTreeGenerator {
    typealias Sample = PredicateSample
    typealias Expression<T> = any StandardPredicateExpression<T>
    var rng: SplitMix64
    /// The operators `comparison` may pick; a test narrows them to check one.
    var operators = Array(0..<6)

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    mutating func predicate(depth: Int) -> Predicate<Sample> {
        var generator = self
        let predicate = Predicate<Sample> { variable in generator.boolean(variable, depth: depth) }
        self = generator
        return predicate
    }

    private mutating func roll(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
    private mutating func pick<T>(_ values: [T]) -> T { values[roll(values.count)] }
    private mutating func small() -> Int { roll(7) - 3 }

    mutating func boolean(_ v: PredicateExpressions.Variable<Sample>, depth: Int) -> Expression<Bool> {
        guard depth > 0, roll(3) != 0 else { return leaf(v) }
        switch roll(4) {
        case 0: return Self.and(boolean(v, depth: depth - 1), boolean(v, depth: depth - 1))
        case 1: return Self.or(boolean(v, depth: depth - 1), boolean(v, depth: depth - 1))
        case 2: return Self.not(boolean(v, depth: depth - 1))
        default:
            return Self.conditional(
                boolean(v, depth: depth - 1), boolean(v, depth: depth - 1), boolean(v, depth: depth - 1))
        }
    }

    private static func path<T>(
        _ v: PredicateExpressions.Variable<Sample>, _ keyPath: KeyPath<Sample, T> & Sendable
    ) -> Expression<T> where T: Codable & Sendable {
        PredicateExpressions.build_KeyPath(root: v, keyPath: keyPath)
    }

    private static func constant<T: Codable & Sendable>(_ value: T) -> Expression<T> {
        PredicateExpressions.build_Arg(value)
    }

    private mutating func int(_ v: PredicateExpressions.Variable<Sample>) -> Expression<Int> {
        switch roll(5) {
        case 0: return Self.path(v, \.int)
        case 1: return Self.path(v, \.other)
        case 2: return Self.arithmetic(Self.path(v, \.int), Self.constant(small()), op: roll(3))
        case 3: return Self.negated(Self.path(v, \.other))
        default: return Self.constant(small())
        }
    }

    mutating func leaf(_ v: PredicateExpressions.Variable<Sample>) -> Expression<Bool> {
        switch roll(19) {
        case 0: return comparison(int(v), int(v))
        case 1: return comparison(Self.path(v, \.double), Self.constant(pick(Sample.doubles)), swap: roll(2) == 0)
        case 2: return comparison(Self.path(v, \.string), Self.constant(pick(Sample.strings)), swap: roll(2) == 0)
        case 3: return comparison(Self.path(v, \.date), Self.constant(pick(Sample.dates)), swap: roll(2) == 0)
        case 4:
            let constant: Int? = roll(3) == 0 ? nil : small()
            return equality(Self.path(v, \.optionalInt), Self.constant(constant))
        case 5:
            return Self.equalsNil(Self.path(v, \.optionalString), negated: roll(2) == 0)
        case 6:
            return comparison(Self.coalesce(Self.path(v, \.optionalInt), int(v)), Self.constant(small()))
        case 7:
            let c = small(), op = roll(4)
            return Self.flatMapCompare(Self.path(v, \.optionalInt), c, op: op, expecting: roll(2) == 0)
        case 8:
            let a = small(), b = a + roll(4)
            return Self.closedRangeContains(a, b, Self.path(v, \.int))
        case 9:
            // Bounds in either order: Foundation throws for a reversed half-open range.
            return Self.rangeContains(small(), small(), Self.path(v, \.other))
        case 10: return Self.sequenceContains(Self.path(v, \.numbers), Self.constant(small()))
        case 11: return Self.sequenceContains(Self.path(v, \.tags), Self.constant(pick(Sample.strings)))
        case 12: return Self.containsWhere(Self.path(v, \.numbers), v, greaterThanOwnInt: roll(2) == 0)
        case 13: return Self.allSatisfy(Self.path(v, \.numbers), below: small())
        case 14: return Self.startsWith(Self.path(v, \.string), Self.constant(pick(["", "a", "e", "é", "A"])))
        case 15: return roll(2) == 0 ? Self.path(v, \.flag) : equality(Self.path(v, \.flag), Self.constant(true))
        case 16:
            // Left to Foundation: a division.
            return comparison(Self.divided(Self.path(v, \.double), by: pick([2.0, 0, -1])), Self.constant(1.0))
        case 17:
            // Left to Foundation inside a flatMap reading its variable: the flatMap goes too.
            return Self.remainderInFlatMap(Self.path(v, \.optionalInt), pick([2, 3]))
        default:
            // Throws for nil, as Foundation's does.
            return equality(Self.forced(Self.path(v, \.optionalInt)), Self.constant(small()))
        }
    }

    /// One of `==`, `!=`, `<`, `<=`, `>`, `>=` (those in ``operators``).
    mutating func comparison<T: Comparable & Codable & Sendable>(
        _ a: Expression<T>, _ b: Expression<T>, swap: Bool = false
    ) -> Expression<Bool> {
        let op = pick(operators)
        let (lhs, rhs) = swap ? (b, a) : (a, b)
        func open<A: StandardPredicateExpression<T>>(_ a: A) -> Expression<Bool> {
            func open<B: StandardPredicateExpression<T>>(_ b: B) -> Expression<Bool> {
                switch op {
                case 0: return PredicateExpressions.build_Equal(lhs: a, rhs: b)
                case 1: return PredicateExpressions.build_NotEqual(lhs: a, rhs: b)
                case 2: return PredicateExpressions.build_Comparison(lhs: a, rhs: b, op: .lessThan)
                case 3: return PredicateExpressions.build_Comparison(lhs: a, rhs: b, op: .lessThanOrEqual)
                case 4: return PredicateExpressions.build_Comparison(lhs: a, rhs: b, op: .greaterThan)
                default: return PredicateExpressions.build_Comparison(lhs: a, rhs: b, op: .greaterThanOrEqual)
                }
            }
            return open(rhs)
        }
        return open(lhs)
    }

    mutating func equality<T: Equatable & Codable & Sendable>(
        _ a: Expression<T>, _ b: Expression<T>
    ) -> Expression<Bool> {
        let equal = roll(2) == 0
        func open<A: StandardPredicateExpression<T>>(_ a: A) -> Expression<Bool> {
            func open<B: StandardPredicateExpression<T>>(_ b: B) -> Expression<Bool> {
                equal
                    ? PredicateExpressions.build_Equal(lhs: a, rhs: b)
                    : PredicateExpressions.build_NotEqual(lhs: a, rhs: b)
            }
            return open(b)
        }
        return open(a)
    }

    static func and(_ a: Expression<Bool>, _ b: Expression<Bool>) -> Expression<Bool> {
        func open<A: StandardPredicateExpression<Bool>, B: StandardPredicateExpression<Bool>>(
            _ a: A, _ b: B
        )
            -> Expression<Bool>
        { PredicateExpressions.build_Conjunction(lhs: a, rhs: b) }
        return open(a, b)
    }

    static func or(_ a: Expression<Bool>, _ b: Expression<Bool>) -> Expression<Bool> {
        func open<A: StandardPredicateExpression<Bool>, B: StandardPredicateExpression<Bool>>(
            _ a: A, _ b: B
        )
            -> Expression<Bool>
        { PredicateExpressions.build_Disjunction(lhs: a, rhs: b) }
        return open(a, b)
    }

    static func not(_ a: Expression<Bool>) -> Expression<Bool> {
        func open<A: StandardPredicateExpression<Bool>>(_ a: A) -> Expression<Bool> {
            PredicateExpressions.build_Negation(a)
        }
        return open(a)
    }

    static func conditional(_ t: Expression<Bool>, _ a: Expression<Bool>, _ b: Expression<Bool>) -> Expression<Bool> {
        func open<
            T: StandardPredicateExpression<Bool>, A: StandardPredicateExpression<Bool>,
            B: StandardPredicateExpression<Bool>
        >(
            _ t: T, _ a: A, _ b: B
        ) -> Expression<Bool> { PredicateExpressions.build_Conditional(t, a, b) }
        return open(t, a, b)
    }

    static func arithmetic(_ a: Expression<Int>, _ b: Expression<Int>, op: Int) -> Expression<Int> {
        func open<A: StandardPredicateExpression<Int>, B: StandardPredicateExpression<Int>>(
            _ a: A, _ b: B
        )
            -> Expression<Int>
        {
            PredicateExpressions.build_Arithmetic(lhs: a, rhs: b, op: [.add, .subtract, .multiply][op])
        }
        return open(a, b)
    }

    static func negated(_ a: Expression<Int>) -> Expression<Int> {
        func open<A: StandardPredicateExpression<Int>>(_ a: A) -> Expression<Int> {
            PredicateExpressions.build_UnaryMinus(a)
        }
        return open(a)
    }

    static func equalsNil(_ a: Expression<String?>, negated: Bool) -> Expression<Bool> {
        func open<A: StandardPredicateExpression<String?>>(_ a: A) -> Expression<Bool> {
            let none = PredicateExpressions.build_NilLiteral() as PredicateExpressions.NilLiteral<String>
            return negated
                ? PredicateExpressions.build_NotEqual(lhs: a, rhs: none)
                : PredicateExpressions.build_Equal(lhs: a, rhs: none)
        }
        return open(a)
    }

    static func coalesce(_ a: Expression<Int?>, _ b: Expression<Int>) -> Expression<Int> {
        func open<A: StandardPredicateExpression<Int?>, B: StandardPredicateExpression<Int>>(
            _ a: A, _ b: B
        )
            -> Expression<Int>
        { PredicateExpressions.build_NilCoalesce(lhs: a, rhs: b) }
        return open(a, b)
    }

    /// `a.flatMap { $0 op c } == expecting`.
    static func flatMapCompare(_ a: Expression<Int?>, _ c: Int, op: Int, expecting: Bool) -> Expression<Bool> {
        func open<A: StandardPredicateExpression<Int?>>(_ a: A) -> Expression<Bool> {
            let mapped = PredicateExpressions.build_flatMap(a) { wrapped in
                PredicateExpressions.build_Comparison(
                    lhs: wrapped, rhs: PredicateExpressions.build_Arg(c),
                    op: [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual][op])
            }
            return PredicateExpressions.build_Equal(
                lhs: mapped, rhs: PredicateExpressions.build_Arg(Optional(expecting)))
        }
        return open(a)
    }

    static func closedRangeContains(_ a: Int, _ b: Int, _ e: Expression<Int>) -> Expression<Bool> {
        func open<E: StandardPredicateExpression<Int>>(_ e: E) -> Expression<Bool> {
            PredicateExpressions.build_contains(
                PredicateExpressions.build_ClosedRange(
                    lower: PredicateExpressions.build_Arg(a), upper: PredicateExpressions.build_Arg(b)), e)
        }
        return open(e)
    }

    static func rangeContains(_ a: Int, _ b: Int, _ e: Expression<Int>) -> Expression<Bool> {
        func open<E: StandardPredicateExpression<Int>>(_ e: E) -> Expression<Bool> {
            PredicateExpressions.build_contains(
                PredicateExpressions.build_Range(
                    lower: PredicateExpressions.build_Arg(a), upper: PredicateExpressions.build_Arg(b)), e)
        }
        return open(e)
    }

    static func sequenceContains<T: Equatable & Codable & Sendable>(
        _ s: Expression<[T]>, _ e: Expression<T>
    ) -> Expression<Bool> {
        func open<S: StandardPredicateExpression<[T]>>(_ s: S) -> Expression<Bool> {
            func open<E: StandardPredicateExpression<T>>(_ e: E) -> Expression<Bool> {
                PredicateExpressions.build_contains(s, e)
            }
            return open(e)
        }
        return open(s)
    }

    /// `numbers.contains { $0 > record.int }` (reads the record inside the scope) or `{ $0 > 0 }`.
    static func containsWhere(
        _ s: Expression<[Int]>, _ v: PredicateExpressions.Variable<Sample>, greaterThanOwnInt: Bool
    ) -> Expression<Bool> {
        func open<S: StandardPredicateExpression<[Int]>>(_ s: S) -> Expression<Bool> {
            if greaterThanOwnInt {
                return PredicateExpressions.build_contains(s) { element in
                    PredicateExpressions.build_Comparison(
                        lhs: element, rhs: PredicateExpressions.build_KeyPath(root: v, keyPath: \Sample.int),
                        op: .greaterThan)
                }
            }
            return PredicateExpressions.build_contains(s) { element in
                PredicateExpressions.build_Comparison(
                    lhs: element, rhs: PredicateExpressions.build_Arg(0), op: .greaterThan)
            }
        }
        return open(s)
    }

    static func allSatisfy(_ s: Expression<[Int]>, below c: Int) -> Expression<Bool> {
        func open<S: StandardPredicateExpression<[Int]>>(_ s: S) -> Expression<Bool> {
            PredicateExpressions.build_allSatisfy(s) { element in
                PredicateExpressions.build_Comparison(
                    lhs: element, rhs: PredicateExpressions.build_Arg(c), op: .lessThan)
            }
        }
        return open(s)
    }

    static func startsWith(_ s: Expression<String>, _ p: Expression<String>) -> Expression<Bool> {
        func open<S: StandardPredicateExpression<String>, P: StandardPredicateExpression<String>>(
            _ s: S, _ p: P
        )
            -> Expression<Bool>
        { PredicateExpressions.build_starts(s, with: p) }
        return open(s, p)
    }

    static func divided(_ a: Expression<Double>, by d: Double) -> Expression<Double> {
        func open<A: StandardPredicateExpression<Double>>(_ a: A) -> Expression<Double> {
            PredicateExpressions.build_Division(lhs: a, rhs: PredicateExpressions.build_Arg(d))
        }
        return open(a)
    }

    /// `optionalInt.flatMap { $0 % divisor == 0 } == true` (the remainder is left to Foundation).
    static func remainderInFlatMap(_ a: Expression<Int?>, _ divisor: Int) -> Expression<Bool> {
        func open<A: StandardPredicateExpression<Int?>>(_ a: A) -> Expression<Bool> {
            let mapped = PredicateExpressions.build_flatMap(a) { wrapped in
                PredicateExpressions.build_Equal(
                    lhs: PredicateExpressions.build_Remainder(
                        lhs: wrapped, rhs: PredicateExpressions.build_Arg(divisor)),
                    rhs: PredicateExpressions.build_Arg(0))
            }
            return PredicateExpressions.build_Equal(lhs: mapped, rhs: PredicateExpressions.build_Arg(Optional(true)))
        }
        return open(a)
    }

    static func forced(_ a: Expression<Int?>) -> Expression<Int> {
        func open<A: StandardPredicateExpression<Int?>>(_ a: A) -> Expression<Int> {
            PredicateExpressions.build_ForcedUnwrap(a)
        }
        return open(a)
    }
}
