import Foundation
import FolioStorage

// How the planner reads a `Predicate`'s expression tree: the expression types it can answer
// from an index conform to `PlannableExpression` (conditionally, when their operands are a
// key path of the predicate's own variable and a constant); every other expression, and
// any of these whose operands are something else, becomes `.opaque` and is evaluated on
// the decoded records.

/// An expression the planner can turn into a ``QueryCondition``.
protocol PlannableExpression {
    /// The condition, with `root` the predicate's variable (key paths of another variable,
    /// as in a nested `contains(where:)`, are not the record's).
    func condition(root: PredicateExpressions.VariableID) -> QueryCondition
}

/// The operand kinds of a comparison: a key path of the record, or a constant.
protocol PlannableOperand {
    /// The key path, if this is `record.path` (of `root`).
    func keyPath(root: PredicateExpressions.VariableID) -> AnyKeyPath?
    /// The constant, if this is one.
    var constant: Any? { get }
    /// The optional key path and the constant that stands for its `nil`, if this is
    /// `record.path ?? constant`. Only comparisons read it (``coalescedCondition``); every
    /// other expression sees neither a key path nor a constant in it, so it stays opaque.
    func coalesced(root: PredicateExpressions.VariableID) -> (keyPath: AnyKeyPath, nilValue: Any)?
}

extension PlannableOperand {
    func coalesced(root: PredicateExpressions.VariableID) -> (keyPath: AnyKeyPath, nilValue: Any)? { nil }
}

/// `record.path ?? constant`, an optional property compared with a default for `nil`.
extension PredicateExpressions.NilCoalesce: PlannableOperand where LHS: PlannableOperand, RHS: PlannableOperand {
    func keyPath(root: PredicateExpressions.VariableID) -> AnyKeyPath? { nil }
    var constant: Any? { nil }
    func coalesced(root: PredicateExpressions.VariableID) -> (keyPath: AnyKeyPath, nilValue: Any)? {
        guard let path = lhs.keyPath(root: root), let value = rhs.constant else { return nil }
        return (path, value)
    }
}

/// The predicate's variable (the record), as the root of a key path operand.
protocol PlannableVariable {
    var key: PredicateExpressions.VariableID { get }
}

extension PredicateExpressions.Variable: PlannableVariable {}

extension PredicateExpressions.KeyPath: PlannableOperand where Root: PlannableVariable {
    func keyPath(root id: PredicateExpressions.VariableID) -> AnyKeyPath? { self.root.key == id ? keyPath : nil }
    var constant: Any? { nil }
}

extension PredicateExpressions.Value: PlannableOperand {
    func keyPath(root: PredicateExpressions.VariableID) -> AnyKeyPath? { nil }
    var constant: Any? { value }
}

/// Opening an operand's constant as a key component of a known type.
private func component<Value: KeyComponent>(_ constant: Any?, as type: Value.Type) -> Value? { constant as? Value }

private func describe(_ keyPath: AnyKeyPath) -> String { QueryValueRange.describe(keyPath) }

extension PredicateExpressions.Conjunction: PlannableExpression {
    func condition(root: PredicateExpressions.VariableID) -> QueryCondition {
        .and(
            (lhs as? any PlannableExpression)?.condition(root: root) ?? .opaque,
            (rhs as? any PlannableExpression)?.condition(root: root) ?? .opaque)
    }
}

extension PredicateExpressions.Disjunction: PlannableExpression {
    func condition(root: PredicateExpressions.VariableID) -> QueryCondition {
        .or(
            (lhs as? any PlannableExpression)?.condition(root: root) ?? .opaque,
            (rhs as? any PlannableExpression)?.condition(root: root) ?? .opaque)
    }
}

extension PredicateExpressions.Negation: PlannableExpression {
    func condition(root: PredicateExpressions.VariableID) -> QueryCondition {
        .not((wrapped as? any PlannableExpression)?.condition(root: root) ?? .opaque)
    }
}

/// `path == constant` or `constant == path` of any types: what the planner reads an equality
/// as, and how the point query's fast path (DatastoreSchema+PointQuery.swift) recognises
/// one through a protocol cast (the runtime's conformance cache), without instantiating the
/// expression's full generic type for every query.
protocol EqualityExpression: SendableMetatype {
    /// The key path of `root` and the constant it is compared with, either side.
    func equality(root: PredicateExpressions.VariableID) -> (keyPath: AnyKeyPath, constant: Any)?
}

/// Reads `path == constant` out of an expression of one type (``EqualityExpression/reader``).
typealias EqualityReader =
    @Sendable (any StandardPredicateExpression<Bool>, PredicateExpressions.VariableID) -> (
        keyPath: AnyKeyPath, constant: Any
    )?

extension EqualityExpression {
    /// Reads the equality out of an expression of this type, cast to it directly (no
    /// conformance lookup); nil for an expression of another type.
    static var reader: EqualityReader {
        { expression, root in (expression as? Self)?.equality(root: root) }
    }
}

extension PredicateExpressions.Equal: EqualityExpression where LHS: PlannableOperand, RHS: PlannableOperand {
    func equality(root: PredicateExpressions.VariableID) -> (keyPath: AnyKeyPath, constant: Any)? {
        if let path = lhs.keyPath(root: root), let constant = rhs.constant { return (path, constant) }
        if let path = rhs.keyPath(root: root), let constant = lhs.constant { return (path, constant) }
        return nil
    }
}

/// `path == constant` or `constant == path`, for a key component type.
extension PredicateExpressions.Equal: PlannableExpression
where LHS: PlannableOperand, RHS: PlannableOperand, LHS.Output: KeyComponent {
    func condition(root: PredicateExpressions.VariableID) -> QueryCondition {
        guard let (path, constant) = equality(root: root), let value = component(constant, as: LHS.Output.self) else {
            return .opaque
        }
        return QueryValueRange(
            path, .equal, lower: .included(value), upper: .included(value), text: "\(describe(path)) == \(value)"
        )
        .map(QueryCondition.range) ?? .opaque
    }
}

/// `path < constant` and the other orders, either side.
extension PredicateExpressions.Comparison: PlannableExpression
where LHS: PlannableOperand, RHS: PlannableOperand, LHS.Output: KeyComponent {
    func condition(root: PredicateExpressions.VariableID) -> QueryCondition {
        var op = self.op
        let path: AnyKeyPath, constant: Any?
        var nilValue: Any?
        if let left = lhs.keyPath(root: root) {
            (path, constant) = (left, rhs.constant)
        } else if let left = lhs.coalesced(root: root) {
            (path, constant, nilValue) = (left.keyPath, rhs.constant, left.nilValue)
        } else if let right = rhs.keyPath(root: root) ?? rhs.coalesced(root: root)?.keyPath {
            // `constant < path` is `path > constant`.
            (path, constant, nilValue) = (right, lhs.constant, rhs.coalesced(root: root)?.nilValue)
            switch op {
            case .lessThan: op = .greaterThan
            case .lessThanOrEqual: op = .greaterThanOrEqual
            case .greaterThan: op = .lessThan
            case .greaterThanOrEqual: op = .lessThanOrEqual
            @unknown default: return .opaque
            }
        } else {
            return .opaque
        }
        guard let value = component(constant, as: LHS.Output.self) else { return .opaque }
        if let nilValue {
            guard let stand = nilValue as? LHS.Output else { return .opaque }
            return coalescedCondition(path, op, value, nilStandsFor: stand)
        }
        let name = describe(path)
        let range: QueryValueRange?
        switch op {
        case .lessThan:
            range = QueryValueRange(
                path, .lessThan, lower: .unbounded, upper: .excluded(value), text: "\(name) < \(value)")
        case .lessThanOrEqual:
            range = QueryValueRange(
                path, .lessThanOrEqual, lower: .unbounded, upper: .included(value), text: "\(name) <= \(value)")
        case .greaterThan:
            range = QueryValueRange(
                path, .greaterThan, lower: .excluded(value), upper: .unbounded, text: "\(name) > \(value)")
        case .greaterThanOrEqual:
            range = QueryValueRange(
                path, .greaterThanOrEqual, lower: .included(value), upper: .unbounded, text: "\(name) >= \(value)")
        @unknown default: return .opaque
        }
        return range.map(QueryCondition.range) ?? .opaque
    }
}

/// `(record.path ?? d) op value` over an optional `path`: the values of `path` that satisfy
/// `op value` (keys of `some(v)`, which sort after `nil`'s), and `nil` too when `d` does.
/// An index over an optional holds `nil` as its own key, first (Docs/Keys.md §3.10).
private func coalescedCondition<Value: KeyComponent & Comparable>(
    _ path: AnyKeyPath, _ op: PredicateExpressions.ComparisonOperator, _ value: Value, nilStandsFor stand: Value
) -> QueryCondition {
    let some = Optional(value), none = Optional<Value>.none
    let name = describe(path)
    let range: QueryValueRange?
    let nilMatches: Bool
    switch op {
    case .greaterThan:
        range = QueryValueRange(
            path, .greaterThan, lower: .excluded(some), upper: .unbounded, text: "\(name) > \(value)")
        nilMatches = stand > value
    case .greaterThanOrEqual:
        range = QueryValueRange(
            path, .greaterThanOrEqual, lower: .included(some), upper: .unbounded, text: "\(name) >= \(value)")
        nilMatches = stand >= value
    case .lessThan:
        // Above `nil`'s key: a value, below `value`.
        range = QueryValueRange(
            path, .between, lower: .excluded(none), upper: .excluded(some), text: "\(name) < \(value)")
        nilMatches = stand < value
    case .lessThanOrEqual:
        range = QueryValueRange(
            path, .between, lower: .excluded(none), upper: .included(some), text: "\(name) <= \(value)")
        nilMatches = stand <= value
    @unknown default: return .opaque
    }
    guard let range else { return .opaque }
    guard nilMatches else { return .range(range) }
    guard
        let nilRange = QueryValueRange(
            path, .equal, lower: .included(none), upper: .included(none), text: "\(name) == nil")
    else { return .opaque }
    return .or(.range(range), .range(nilRange))
}

/// `(a...b).contains(path)` with constant bounds.
extension PredicateExpressions.RangeExpressionContains: PlannableExpression
where RangeExpression: PlannableRange, Element: PlannableOperand, Element.Output: KeyComponent {
    func condition(root: PredicateExpressions.VariableID) -> QueryCondition {
        guard let path = element.keyPath(root: root),
            let bounds = range.bounds(as: Element.Output.self)
        else { return .opaque }
        return QueryValueRange(
            path, .between, lower: bounds.lower, upper: bounds.upper, text: "\(describe(path)) in \(bounds.text)"
        )
        .map(QueryCondition.range) ?? .opaque
    }
}

/// A range expression with constant bounds.
protocol PlannableRange {
    func bounds<Value: KeyComponent>(
        as type: Value.Type
    ) -> (lower: RangeBound<Value>, upper: RangeBound<Value>, text: String)?
}

extension PredicateExpressions.ClosedRange: PlannableRange where LHS: PlannableOperand, RHS: PlannableOperand {
    func bounds<Value: KeyComponent>(
        as type: Value.Type
    ) -> (lower: RangeBound<Value>, upper: RangeBound<Value>, text: String)? {
        guard let low = component(lower.constant, as: Value.self), let high = component(upper.constant, as: Value.self)
        else { return nil }
        return (.included(low), .included(high), "\(low)...\(high)")
    }
}

extension PredicateExpressions.Range: PlannableRange where LHS: PlannableOperand, RHS: PlannableOperand {
    func bounds<Value: KeyComponent>(
        as type: Value.Type
    ) -> (lower: RangeBound<Value>, upper: RangeBound<Value>, text: String)? {
        guard let low = component(lower.constant, as: Value.self), let high = component(upper.constant, as: Value.self)
        else { return nil }
        return (.included(low), .excluded(high), "\(low)..<\(high)")
    }
}

/// `path.starts(with: "constant")` on a string.
extension PredicateExpressions.SequenceStartsWith: PlannableExpression
where Base: PlannableOperand, Prefix: PlannableOperand, Base.Output == String {
    func condition(root: PredicateExpressions.VariableID) -> QueryCondition {
        guard let path = base.keyPath(root: root), let prefix = self.prefix.constant as? String,
            let range = QueryValueRange(path, prefix: prefix, text: "\(describe(path)) starts with \"\(prefix)\"")
        else { return .opaque }
        return .range(range)
    }
}

/// `path.contains(constant)` on a collection of key components (a many-to-many index).
extension PredicateExpressions.SequenceContains: PlannableExpression
where LHS: PlannableOperand, RHS: PlannableOperand, RHS.Output: KeyComponent {
    func condition(root: PredicateExpressions.VariableID) -> QueryCondition {
        guard let path = sequence.keyPath(root: root), let value = component(element.constant, as: RHS.Output.self),
            let element = QueryValueRange(
                path, .equal, lower: .included(value), upper: .included(value),
                text: "\(describe(path)) contains \(value)")
        else { return .opaque }
        return .contains(keyPath: path, element: element)
    }
}
