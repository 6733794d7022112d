import Foundation
import FolioStorage

// The most common query, `#Predicate { $0.id == constant }`, recognised by the type of its
// expression and answered by one read of the identifier, without planning: walking the
// expression tree and weighing the indexes costs more than the read itself. The planner
// plans such a predicate the same way (an identifier range of one value, exact), so
// `explain` describes what runs.

extension DatastoreSchema {
    /// The expression `$0[keyPath: path] == constant` with a key path to the identifier's type.
    typealias IdentifierEquality = PredicateExpressions.Equal<
        PredicateExpressions.KeyPath<PredicateExpressions.Variable<Format.Instance>, Format.Identifier>,
        PredicateExpressions.Value<Format.Identifier>>

    /// The identifier key a predicate names when it is exactly `record.<identifier> ==
    /// constant`; nil for any other predicate.
    func identifierEqualityKey(_ predicate: Predicate<Format.Instance>) -> [UInt8]? {
        // Through `Any`: the static types do not show that the expression may be this type.
        guard let equal = (predicate.expression as Any) as? IdentifierEquality, equal.lhs.root.key == predicate.variable.key,
              isIdentifier(equal.lhs.keyPath) else { return nil }
        return equal.rhs.value.keyBytes
    }

    /// Whether `keyPath` is the identifier (``QueryPlanner/isIdentifier(_:)``), remembered
    /// by the key path object: a key path literal is one object however often its
    /// expression runs, so a query repeated with new constants finds it here at once.
    func isIdentifier(_ keyPath: AnyKeyPath) -> Bool {
        let object = ObjectIdentifier(keyPath)
        if let known = identifierKeyPathObjects.withLock({ $0[object]?.isIdentifier }) { return known }
        let answer = QueryPlanner(schema: self, usable: nil).isIdentifier(keyPath)
        // The key path is kept with its answer, so its identifier is never reused for another.
        identifierKeyPathObjects.withLock { known in
            if known.count >= 256 { known.removeAll() }
            known[object] = (KeyPathKey(path: keyPath), answer)
        }
        return answer
    }
}
