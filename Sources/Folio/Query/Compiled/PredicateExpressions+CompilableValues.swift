import Foundation

// The compiler's translation of optionals, ranges, sequences and arithmetic: each closure
// does what the expression's own `evaluate` does (FoundationEssentials,
// Predicate/Expressions/*.swift). Where Foundation throws an error of its own (a forced
// unwrap of nil, a range whose bounds are out of order), the closure lets Foundation's
// `evaluate` run and throw it, so the error is Foundation's, word for word.

/// Any `Optional`, to recognise a nested optional while compiling.
private protocol OptionalType {}
extension Optional: OptionalType {}

extension PredicateExpressions.OptionalFlatMap: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Output>? {
        // Foundation's result is `transform as! Result?`, which for a `Result` that is itself
        // optional depends on the runtime's casting of nil: left to Foundation.
        guard !(Result.self is any OptionalType.Type), let wrapped = compiler.compile(wrapped),
            let transform = compiler.compile(transform, binding: variable)
        else { return nil }
        let body: CompiledExpression<Record, Result?>
        if let optional = retyped(transform, as: Result?.self) {
            body = optional
        } else if let plain = retyped(transform, as: Result.self) {
            body = { record, locals in try plain(record, locals) }
        } else {
            return nil
        }
        return { record, locals in
            guard let inner = try wrapped(record, locals) else { return nil }
            return try body(record, locals + [inner])
        }
    }
}

extension PredicateExpressions.NilCoalesce: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Output>? {
        guard let lhs = compiler.compile(lhs), let rhs = compiler.compile(rhs) else { return nil }
        return { record, locals in try lhs(record, locals) ?? rhs(record, locals) }
    }
}

extension PredicateExpressions.ForcedUnwrap: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Output>? {
        guard let inner = compiler.compile(inner), let failure = compiler.foundation(self, counted: false) else {
            return nil
        }
        return { record, locals in
            if let value = try inner(record, locals) { return value }
            return try failure(record, locals)
        }
    }
}

extension PredicateExpressions.Range: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Output>? {
        guard let lower = compiler.compile(lower), let upper = compiler.compile(upper),
            let failure = compiler.foundation(self, counted: false)
        else { return nil }
        return { record, locals in
            let low = try lower(record, locals)
            let high = try upper(record, locals)
            guard low <= high else { return try failure(record, locals) }
            return low..<high
        }
    }
}

extension PredicateExpressions.ClosedRange: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Output>? {
        guard let lower = compiler.compile(lower), let upper = compiler.compile(upper) else { return nil }
        return { record, locals in
            let low = try lower(record, locals)
            let high = try upper(record, locals)
            return low...high
        }
    }
}

extension PredicateExpressions.RangeExpressionContains: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Bool>? {
        guard let range = compiler.compile(range), let element = compiler.compile(element) else { return nil }
        return { record, locals in try range(record, locals).contains(try element(record, locals)) }
    }
}

extension PredicateExpressions.SequenceContains: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Bool>? {
        guard let sequence = compiler.compile(sequence), let element = compiler.compile(element) else { return nil }
        return { record, locals in
            let values = try sequence(record, locals)
            return values.contains(try element(record, locals))
        }
    }
}

extension PredicateExpressions.SequenceContainsWhere: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Bool>? {
        guard let sequence = compiler.compile(sequence), let test = compiler.compile(test, binding: variable) else {
            return nil
        }
        return { record, locals in try sequence(record, locals).contains { try test(record, locals + [$0]) } }
    }
}

extension PredicateExpressions.SequenceAllSatisfy: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Bool>? {
        guard let sequence = compiler.compile(sequence), let test = compiler.compile(test, binding: variable) else {
            return nil
        }
        return { record, locals in try sequence(record, locals).allSatisfy { try test(record, locals + [$0]) } }
    }
}

extension PredicateExpressions.SequenceStartsWith: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Bool>? {
        guard let base = compiler.compile(base), let prefix = compiler.compile(prefix) else { return nil }
        return { record, locals in try base(record, locals).starts(with: try prefix(record, locals)) }
    }
}

extension PredicateExpressions.Arithmetic: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Output>? {
        guard let lhs = compiler.compile(lhs), let rhs = compiler.compile(rhs) else { return nil }
        switch op {
        case .add:
            return { record, locals in
                let a = try lhs(record, locals)
                return try a + rhs(record, locals)
            }
        case .subtract:
            return { record, locals in
                let a = try lhs(record, locals)
                return try a - rhs(record, locals)
            }
        case .multiply:
            return { record, locals in
                let a = try lhs(record, locals)
                return try a * rhs(record, locals)
            }
        @unknown default: return nil
        }
    }
}

extension PredicateExpressions.UnaryMinus: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Output>? {
        guard let wrapped = compiler.compile(wrapped) else { return nil }
        return { record, locals in try -wrapped(record, locals) }
    }
}
