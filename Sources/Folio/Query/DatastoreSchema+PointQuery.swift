import Foundation
import FolioStorage

// The most common query, `#Predicate { $0.id == constant }`, recognised by the type of its
// expression and answered by one read of the identifier, without planning: walking the
// expression tree and weighing the indexes costs more than the read itself. The planner
// plans such a predicate the same way (an identifier range of one value, exact), so
// `explain` describes what runs.

extension DatastoreSchema {
    /// The identifier key a predicate names when it is exactly `record.<identifier> ==
    /// constant` and identifiers are equal exactly when their keys are
    /// (``identifierKeyIsExact``); nil for any other predicate, which the planner handles
    /// (checking the predicate on the record it reads where keys are not exact).
    func identifierEqualityKey(_ predicate: Predicate<Format.Instance>) -> [UInt8]? {
        guard identifierKeyIsExact, let reader = equalityReader(of: predicate.expression),
            let (path, constant) = reader(predicate.expression, predicate.variable.key),
            let identifier = constant as? Format.Identifier, isIdentifier(path)
        else { return nil }
        return identifier.keyBytes
    }

    /// How to read an equality out of expressions of `expression`'s type, remembered by the
    /// type (nil: not an equality): casting an expression to the protocol looks its
    /// conformance up in the runtime's tables, which costs a good part of a point read,
    /// where the reader casts to the concrete type, a comparison of type metadata.
    private func equalityReader(of expression: any StandardPredicateExpression<Bool>) -> EqualityReader? {
        let type = ObjectIdentifier(Swift.type(of: expression))
        if let known = equalityReaders.withLock({ $0[type] }) { return known }
        let reader = (expression as? any EqualityExpression).map { Swift.type(of: $0).reader }
        // Types are never unloaded, so an identifier is never reused for another type.
        equalityReaders.withLock { known in
            if known.count >= 256 { known.removeAll() }
            known[type] = .some(reader)
        }
        return reader
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
