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
        guard identifierKeyIsExact, let equal = predicate.expression as? any EqualityExpression,
            let (path, constant) = equal.equality(root: predicate.variable.key),
            let identifier = constant as? Format.Identifier, isIdentifier(path)
        else { return nil }
        return identifier.keyBytes
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
