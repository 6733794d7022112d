import Foundation
import FolioStorage

/// What the planner understands of a predicate: its `&&`, `||` and `!` structure, and the
/// leaves it can answer from an index. Everything else is `.opaque`: evaluated on decoded
/// records, never rejected. Built from a `Predicate`'s expression tree by
/// ``PlannableExpression`` (PredicateExpressions+Plannable.swift).
indirect enum QueryCondition {
    case and(QueryCondition, QueryCondition)
    case or(QueryCondition, QueryCondition)
    case not(QueryCondition)
    /// The value at `keyPath` lies in a range of values (equality is a range of one value).
    case range(QueryValueRange)
    /// The collection at `keyPath` contains one element (a many-to-many index's lookup).
    case contains(keyPath: AnyKeyPath, element: QueryValueRange)
    /// Anything else.
    case opaque

    /// The condition of `predicate`, or `.opaque` if its top level is not understood.
    static func of<Instance>(_ predicate: Predicate<Instance>) -> QueryCondition {
        (predicate.expression as? any PlannableExpression)?.condition(root: predicate.variable.key) ?? .opaque
    }
}

/// A range of values of one key path, kept with enough of its type to become a key range of
/// any index over that key path, and to be described.
final class QueryValueRange {
    enum Kind: Sendable, Equatable {
        case equal, lessThan, lessThanOrEqual, greaterThan, greaterThanOrEqual, between, prefix
    }
    let keyPath: AnyKeyPath
    let kind: Kind
    /// A key range made already (a prefix's, a composite index's); otherwise the key range
    /// is made from ``bounds``.
    private let madeRange: KeyRange?
    /// `year >= 1990`, `title starts with "A"`: for `explain`. Made only when asked for:
    /// printing a key path costs more than a point lookup.
    var text: String { describeText() }
    private let describeText: () -> String
    /// The conditions this range stands for: itself, or those it was merged from (an
    /// intersection, a composite index's equalities and range).
    private(set) var leaves: [QueryValueRange] = []
    /// The range's bounds as encoded value keys (nil for a prefix), for composite indexes,
    /// which put them after the keys of the components before.
    let bounds: (lower: RangeBound<[UInt8]>, upper: RangeBound<[UInt8]>)?
    /// Whether a record's key lies in the key range exactly when the condition holds for
    /// it, so a scan of the range needs no filter: key equality is `==` for integers,
    /// `Bool`, `UUID` and strings (keys are NFC, as `==` compares), and key order is `<` for
    /// all but strings (the two orders differ in corners, Docs/Keys.md) and floating point
    /// (NaN has a key but no order). Not for prefixes (a combining mark can follow one).
    let exact: Bool
    /// Values a scan must read besides the key range (their keys, and how `explain` shows
    /// them): records whose key lies below the range although the condition holds for them
    /// (``StringRangeBound``). They are read as ranges of one value each, and the predicate
    /// filters them.
    private(set) var extraPoints: [(key: [UInt8], value: String)] = []
    /// Whether a scan of the range reads values besides it (``extraPoints``).
    var hasExtraPoints: Bool { !extraPoints.isEmpty }

    /// A key path as `explain` names it: `year` for `\Book.year`. A computed property
    /// prints as `<computed 0x… (Type)>`; the plan names it by its index instead
    /// (``text(naming:)``).
    static func describe(_ keyPath: AnyKeyPath) -> String {
        let printed = String(describing: keyPath)
        guard let dot = printed.firstIndex(of: ".") else { return printed }
        return String(printed[printed.index(after: dot)...])
    }

    /// The key range over an index's entries; `suffixed` as `SchemaIndex.suffixedRanges`.
    func keyRange(_ suffixed: Bool) -> KeyRange {
        if let madeRange { return madeRange }
        // Every range without a made one has bounds (the initialisers keep one of the two).
        let bounds = bounds ?? (.unbounded, .unbounded)
        return KeyRange.entries(lower: bounds.lower, upper: bounds.upper, suffixed: suffixed)
    }

    /// The original conditions this range stands for.
    var covered: [QueryValueRange] { leaves.isEmpty ? [self] : leaves }

    /// ``text``, with a computed key path named after the index that reads it.
    func text(naming index: String?) -> String {
        let subject = Self.describe(keyPath)
        guard let index, subject.contains("<computed") else { return text }
        return text.replacingOccurrences(of: subject, with: index)
    }

    /// How narrow the range is likely to be, higher first: the planner's selectivity
    /// guess when several conjuncts have an index (no per-range counts are kept).
    var narrowness: Int {
        switch kind {
        case .equal: return 4
        case .between: return 3
        case .prefix: return 2
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual: return 1
        }
    }

    /// The values of `keyPath` from `lower` to `upper`; nil when the index's key order cannot
    /// stand for the predicate's comparison (see ``RangeReadableKey``, ``StringRangeBound``):
    /// then the condition has no access of its own and is evaluated on the records.
    init?<Value: KeyComponent>(
        _ keyPath: AnyKeyPath, _ kind: Kind, lower: RangeBound<Value>, upper: RangeBound<Value>,
        text: @autoclosure @escaping () -> String
    ) {
        if kind != .equal {
            if let strings = StringRangeBound(lower: lower, upper: upper) {
                extraPoints = strings.extraPoints
            } else if !(Value.self is any RangeReadableKey.Type) {
                return nil
            }
        }
        self.keyPath = keyPath
        self.kind = kind
        self.describeText = text
        madeRange = nil
        bounds = (lower.encoded, upper.encoded)
        exact = kind == .equal ? Value.self is any EqualityExactKey.Type : Value.self is any OrderExactKey.Type
    }

    /// One value, given as its key: what ``extraPoints`` are read as.
    init(_ keyPath: AnyKeyPath, point key: [UInt8], text: @autoclosure @escaping () -> String) {
        self.keyPath = keyPath
        kind = .equal
        describeText = text
        madeRange = nil
        bounds = (.included(key), .included(key))
        exact = false
    }

    /// The intersection of ranges of one key path (`year >= 1990 && year < 2000`), from
    /// their encoded bounds: the greater lower bound and the smaller upper one (keys order
    /// as values do). Exact when all are.
    init?(intersecting ranges: [QueryValueRange]) {
        guard let first = ranges.first, ranges.count > 1 else { return nil }
        var lower = RangeBound<[UInt8]>.unbounded, upper = RangeBound<[UInt8]>.unbounded
        for range in ranges {
            guard let bounds = range.bounds else { return nil }
            lower = Self.tighter(lower, bounds.lower, lower: true)
            upper = Self.tighter(upper, bounds.upper, lower: false)
        }
        keyPath = first.keyPath
        kind = .between
        describeText = { ranges.map(\.text).joined(separator: " && ") }
        leaves = ranges.flatMap(\.covered)
        bounds = (lower, upper)
        exact = ranges.allSatisfy(\.exact)
        madeRange = nil
        // Each lower bound's extra values, all of them: a record below the merged (tightest)
        // lower bound that matches is below that bound, so among its extra values.
        var extras: [(key: [UInt8], value: String)] = []
        for point in ranges.flatMap(\.extraPoints) where !extras.contains(where: { $0.key == point.key }) {
            extras.append(point)
        }
        extraPoints = extras
    }

    /// The tighter of two lower (or upper) bounds.
    private static func tighter(_ a: RangeBound<[UInt8]>, _ b: RangeBound<[UInt8]>, lower: Bool) -> RangeBound<[UInt8]>
    {
        func key(_ bound: RangeBound<[UInt8]>) -> [UInt8]? {
            switch bound {
            case .unbounded: return nil
            case .included(let key), .excluded(let key): return key
            }
        }
        guard let keyA = key(a) else { return b }
        guard let keyB = key(b) else { return a }
        let order = KeyBytes.compare(keyA, keyB)
        if order == 0 {
            // The same value: excluded is the tighter.
            if case .excluded = a { return a }
            return b
        }
        return (order > 0) == lower ? a : b
    }

    /// A range already made (a composite index's, or a prefix of one).
    init(
        _ keyPath: AnyKeyPath, _ kind: Kind, keyRange: KeyRange, covering leaves: [QueryValueRange],
        text: @autoclosure @escaping () -> String
    ) {
        self.keyPath = keyPath
        self.kind = kind
        self.describeText = text
        self.leaves = leaves.flatMap(\.covered)
        self.bounds = nil
        self.exact = false
        self.madeRange = keyRange
    }

    /// Every string starting with `prefix`, as a range of key bytes that holds at least all
    /// of them (the records are filtered by the predicate afterwards, so a wider range is
    /// only slower, never wrong). An ASCII prefix is exact: its normal form is itself, and
    /// no character that follows it can compose with its last byte. Otherwise the prefix's
    /// last character is left out, so a composition across it cannot hide a match; nil if
    /// nothing is left (no index then helps).
    init?(_ keyPath: AnyKeyPath, prefix: String, text: @autoclosure @escaping () -> String) {
        let usable = prefix.utf8.allSatisfy { $0 < 0x80 } ? prefix : String(prefix.dropLast())
        guard !usable.isEmpty else { return nil }
        self.keyPath = keyPath
        self.kind = .prefix
        self.describeText = text
        self.bounds = nil
        self.exact = false
        madeRange = KeyRange.prefix(usable.keyPrefixBytes)
    }
}

/// Key components whose key order is exactly their `<` order (see ``QueryValueRange/exact``).
protocol OrderExactKey: EqualityExactKey, RangeReadableKey {}
/// Key components whose key equality is exactly their `==`.
protocol EqualityExactKey {}

extension Int: OrderExactKey {}
extension Int8: OrderExactKey {}
extension Int16: OrderExactKey {}
extension Int32: OrderExactKey {}
extension Int64: OrderExactKey {}
extension UInt: OrderExactKey {}
extension UInt8: OrderExactKey {}
extension UInt16: OrderExactKey {}
extension UInt32: OrderExactKey {}
extension UInt64: OrderExactKey {}
extension Bool: OrderExactKey {}
extension UUID: OrderExactKey {}
extension String: EqualityExactKey {}
extension Optional: EqualityExactKey where Wrapped: EqualityExactKey {}
extension Optional: OrderExactKey where Wrapped: OrderExactKey {}
