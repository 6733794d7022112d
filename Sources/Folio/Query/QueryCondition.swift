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
struct QueryValueRange {
    enum Kind: Sendable, Equatable {
        case equal, lessThan, lessThanOrEqual, greaterThan, greaterThanOrEqual, between, prefix
    }
    let keyPath: AnyKeyPath
    let kind: Kind
    /// The key range over an index's entries; `suffixed` as `SchemaIndex.suffixedRanges`.
    let keyRange: (_ suffixed: Bool) -> KeyRange
    /// `year >= 1990`, `title starts with "A"`: for `explain`.
    let text: String
    /// The range's bounds as encoded value keys (nil for a prefix), for composite indexes,
    /// which put them after the keys of the components before.
    let bounds: (lower: RangeBound<[UInt8]>, upper: RangeBound<[UInt8]>)?

    /// A key path as `explain` names it: `year` for `\Book.year`. A computed property
    /// prints as `<computed 0x… (Type)>`; the plan names it by its index instead
    /// (``text(naming:)``).
    static func describe(_ keyPath: AnyKeyPath) -> String {
        let printed = String(describing: keyPath)
        guard let dot = printed.firstIndex(of: ".") else { return printed }
        return String(printed[printed.index(after: dot)...])
    }

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

    init<Value: KeyComponent>(_ keyPath: AnyKeyPath, _ kind: Kind, lower: RangeBound<Value>, upper: RangeBound<Value>, text: String) {
        self.keyPath = keyPath
        self.kind = kind
        self.text = text
        let range = AnyRange(lower: lower, upper: upper)
        keyRange = { suffixed in KeyRanges.make(range, suffixed: suffixed) }
        func encoded(_ bound: RangeBound<Value>) -> RangeBound<[UInt8]> {
            switch bound {
            case .unbounded: return .unbounded
            case .included(let value): return .included(value.keyBytes)
            case .excluded(let value): return .excluded(value.keyBytes)
            }
        }
        bounds = (encoded(lower), encoded(upper))
    }

    /// A range already made (a composite index's).
    init(_ keyPath: AnyKeyPath, _ kind: Kind, keyRange: KeyRange, text: String) {
        self.keyPath = keyPath
        self.kind = kind
        self.text = text
        self.bounds = nil
        self.keyRange = { _ in keyRange }
    }

    /// Every string starting with `prefix`, as a range of key bytes that holds at least all
    /// of them (the records are filtered by the predicate afterwards, so a wider range is
    /// only slower, never wrong). An ASCII prefix is exact: its normal form is itself, and
    /// no character that follows it can compose with its last byte. Otherwise the prefix's
    /// last character is left out, so a composition across it cannot hide a match; nil if
    /// nothing is left (no index then helps).
    init?(_ keyPath: AnyKeyPath, prefix: String, text: String) {
        let usable = prefix.utf8.allSatisfy { $0 < 0x80 } ? prefix : String(prefix.dropLast())
        guard !usable.isEmpty else { return nil }
        self.keyPath = keyPath
        self.kind = .prefix
        self.text = text
        self.bounds = nil
        let bytes = usable.keyPrefixBytes
        keyRange = { _ in KeyRange.prefix(bytes) }
    }
}
