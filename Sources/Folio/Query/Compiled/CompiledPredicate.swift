import Foundation

/// A `Predicate` translated once into Swift closures over the record, so that a query checks
/// each record without Foundation's interpreter (which opens an existential, looks the
/// record up in a bindings array and casts it back, at every node of the tree, for every
/// record).
///
/// The closures do what Foundation's `evaluate` does, node for node: the same operators on
/// the same types (so `String` equality and order, optionals and NaN behave as Foundation's),
/// operands in the same order, the same short circuits. An expression kind the compiler
/// does not know is left to Foundation: that subtree is evaluated by its own `evaluate`
/// (or, inside a `flatMap` or `contains(where:)` whose variable it may read, the enclosing
/// construct is), so every predicate compiles and none changes meaning.
struct CompiledPredicate<Instance>: @unchecked Sendable {
    // Unchecked: the closures capture only parts of the predicate's expression (constants,
    // key paths, subexpressions), which are `Sendable` as the `Predicate` is, and no state.
    private let test: CompiledExpression<Instance, Bool>
    /// How many subtrees are evaluated by Foundation (0: the whole predicate is compiled).
    let foundationSubtrees: Int

    /// Compiles `predicate`.
    init(_ predicate: Predicate<Instance>) {
        let compiler = PredicateCompiler<Instance>(root: predicate.variable)
        if let test = compiler.compileTop(predicate.expression) {
            self.test = test
            foundationSubtrees = compiler.foundationSubtrees
        } else {
            test = { record, locals in try predicate.evaluate(record) }
            foundationSubtrees = 1
        }
    }

    /// Whether `instance` matches; throws what Foundation's `evaluate` throws.
    func evaluate(_ instance: Instance) throws -> Bool {
        try test(instance, [])
    }
}
