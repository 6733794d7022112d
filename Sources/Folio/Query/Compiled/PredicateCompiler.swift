import Foundation

/// A compiled expression: its value for one record, given `locals`, the values of the
/// variables bound by the compiled `flatMap`s and `contains(where:)`s around it, innermost
/// last (at the positions of the compiler's ``PredicateCompiler/scope``). The record is
/// passed borrowed: no copy of it per evaluation.
typealias CompiledExpression<Root, Output> = (Root, [Any]) throws -> Output

/// An expression kind the compiler translates (conformances in PredicateExpressions+Compilable*.swift).
protocol CompilableExpression<Output>: PredicateExpression {
    associatedtype Output
    /// The closure computing this expression, or nil when it cannot be compiled here (then
    /// the caller evaluates it through Foundation, or gives up in turn).
    func compiled<Root>(by compiler: PredicateCompiler<Root>) -> CompiledExpression<Root, Output>?
}

/// Translates one predicate's expression tree; used once, while compiling.
final class PredicateCompiler<Root> {
    /// The predicate's variable: the record.
    let root: PredicateExpressions.Variable<Root>
    /// The variables bound by the compiled constructs being compiled, outermost first.
    private(set) var scope: [PredicateExpressions.VariableID] = []
    /// How many subtrees were left to Foundation.
    private(set) var foundationSubtrees = 0

    init(root: PredicateExpressions.Variable<Root>) { self.root = root }

    /// The whole predicate's expression, or nil if even its top cannot be compiled.
    func compileTop(_ expression: any StandardPredicateExpression<Bool>) -> CompiledExpression<Root, Bool>? {
        guard let compilable = expression as? any CompilableExpression<Bool> else { return nil }
        return compilable.compiled(by: self)
    }

    /// A subexpression compiled, or evaluated by Foundation when it is not compilable. Nil
    /// only inside a compiled scope: Foundation's `evaluate` would need the scope's
    /// variables bound, so the scope itself must be left to Foundation.
    func compile<E: PredicateExpression>(_ expression: E) -> CompiledExpression<Root, E.Output>? {
        if let compilable = expression as? any CompilableExpression<E.Output>,
            let compiled = compilable.compiled(by: self)
        {
            return compiled
        }
        return foundation(expression)
    }

    /// `expression` evaluated by Foundation, with the record bound to the predicate's
    /// variable, as `Predicate.evaluate` binds it. Nil inside a compiled scope. Not
    /// `counted` when it only throws Foundation's error for a compiled expression.
    func foundation<E: PredicateExpression>(
        _ expression: E, counted: Bool = true
    ) -> CompiledExpression<Root, E.Output>? {
        guard scope.isEmpty else { return nil }
        if counted { foundationSubtrees += 1 }
        let variable = root
        return { record, locals in try expression.evaluate(PredicateBindings((variable, record))) }
    }

    /// `body` compiled with `variable` bound (at the next position of the locals).
    func compile<E: PredicateExpression, Bound>(
        _ body: E, binding variable: PredicateExpressions.Variable<Bound>
    ) -> CompiledExpression<Root, E.Output>? {
        scope.append(variable.key)
        defer { scope.removeLast() }
        return compile(body)
    }

    /// Where a variable's value lies among the locals, if a compiled scope binds it.
    func localPosition(of variable: PredicateExpressions.VariableID) -> Int? {
        scope.lastIndex(of: variable)
    }
}

/// A compiled expression seen as one of another output type, when the two types are the
/// same (checked once, while compiling).
func retyped<Root, From, To>(
    _ compiled: @escaping CompiledExpression<Root, From>, as type: To.Type
) -> CompiledExpression<Root, To>? {
    guard From.self == To.self else { return nil }
    return compiled as? CompiledExpression<Root, To>
}
