import Foundation

// The compiler's translation of Foundation's operands and logic: each closure does what the
// expression's own `evaluate` does (FoundationEssentials, Predicate/Expressions/*.swift),
// with its operands evaluated in the same order and its short circuits kept.

extension PredicateExpressions.Variable: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Output>? {
        if key == compiler.root.key {
            // Foundation casts the bound record to `Output`: the same value when the types agree.
            return retyped({ (record: Record, _: [Any]) in record }, as: Output.self)
        }
        guard let position = compiler.localPosition(of: key) else { return nil }
        // A compiled scope binds its variable to a value of the variable's own type.
        return { record, locals in locals[position] as! Output }
    }
}

extension PredicateExpressions.KeyPath: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Output>? {
        if let variable = root as? PredicateExpressions.Variable<Record>, variable.key == compiler.root.key,
            let path = keyPath as? Swift.KeyPath<Record, Output>
        {
            return CompiledKeyPath.reading(path)
        }
        guard let base = compiler.compile(root) else { return nil }
        let path = keyPath as Swift.KeyPath<Root.Output, Output>
        return { record, locals in try base(record, locals)[keyPath: path] }
    }
}

/// Reading a property of the record.
enum CompiledKeyPath {
    /// A closure reading `path` of the record: from its offset when the path is a stored
    /// property of a struct laid out inline (what `MemoryLayout.offset(of:)` answers for,
    /// and then reading at the offset is what the key path reads), otherwise through the key
    /// path.
    static func reading<Record, Value>(_ path: KeyPath<Record, Value>) -> CompiledExpression<Record, Value> {
        if !(Record.self is AnyObject.Type), let offset = MemoryLayout<Record>.offset(of: path) {
            return { record, locals in
                withUnsafeBytes(of: record) { $0.load(fromByteOffset: offset, as: Value.self) }
            }
        }
        return { record, locals in record[keyPath: path] }
    }
}

extension PredicateExpressions.Value: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Output>? {
        let value = self.value
        return { _, _ in value }
    }
}

extension PredicateExpressions.NilLiteral: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Output>? {
        { _, _ in nil }
    }
}

extension PredicateExpressions.Equal: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Bool>? {
        guard let lhs = compiler.compile(lhs) else { return nil }
        if let constant = (rhs as? PredicateExpressions.Value<LHS.Output>)?.value {
            return { record, locals in try lhs(record, locals) == constant }
        }
        guard let rhs = compiler.compile(rhs) else { return nil }
        return { record, locals in try lhs(record, locals) == rhs(record, locals) }
    }
}

extension PredicateExpressions.NotEqual: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Bool>? {
        guard let lhs = compiler.compile(lhs), let rhs = compiler.compile(rhs) else { return nil }
        return { record, locals in try lhs(record, locals) != rhs(record, locals) }
    }
}

extension PredicateExpressions.Comparison: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Bool>? {
        guard let lhs = compiler.compile(lhs), let rhs = compiler.compile(rhs) else { return nil }
        // Both operands are evaluated before comparing, left first, as Foundation does.
        switch op {
        case .lessThan:
            return { record, locals in
                let a = try lhs(record, locals)
                return try a < rhs(record, locals)
            }
        case .lessThanOrEqual:
            return { record, locals in
                let a = try lhs(record, locals)
                return try a <= rhs(record, locals)
            }
        case .greaterThan:
            return { record, locals in
                let a = try lhs(record, locals)
                return try a > rhs(record, locals)
            }
        case .greaterThanOrEqual:
            return { record, locals in
                let a = try lhs(record, locals)
                return try a >= rhs(record, locals)
            }
        @unknown default: return nil
        }
    }
}

extension PredicateExpressions.Conjunction: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Bool>? {
        guard let lhs = compiler.compile(lhs), let rhs = compiler.compile(rhs) else { return nil }
        return { record, locals in try lhs(record, locals) && rhs(record, locals) }
    }
}

extension PredicateExpressions.Disjunction: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Bool>? {
        guard let lhs = compiler.compile(lhs), let rhs = compiler.compile(rhs) else { return nil }
        return { record, locals in try lhs(record, locals) || rhs(record, locals) }
    }
}

extension PredicateExpressions.Negation: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Bool>? {
        guard let wrapped = compiler.compile(wrapped) else { return nil }
        return { record, locals in try !wrapped(record, locals) }
    }
}

extension PredicateExpressions.Conditional: CompilableExpression {
    func compiled<Record>(by compiler: PredicateCompiler<Record>) -> CompiledExpression<Record, Output>? {
        guard let test = compiler.compile(test), let whenTrue = compiler.compile(trueBranch),
            let whenFalse = compiler.compile(falseBranch)
        else { return nil }
        return { record, locals in try test(record, locals) ? whenTrue(record, locals) : whenFalse(record, locals) }
    }
}
