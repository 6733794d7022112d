import Foundation
import FolioStorage

/// Composite indexes: equalities on the first components, then one range, as one key range.
extension QueryPlanner {
    /// The best composite index for a conjunction: equalities on its first components, in
    /// order, then at most one range on the next, read as one range of the index (its
    /// entries' keys are the components' keys one after the other, Docs/Keys.md).
    func compositeCandidate(_ ranges: [QueryValueRange]) -> Candidate? {
        var best: Candidate?
        for index in schema.indexes where !index.definition.componentKeyPaths.isEmpty && isUsable(index) {
            let components = index.definition.componentKeyPaths
            var prefix: [UInt8] = []
            var used: [QueryValueRange] = []
            var matched = 0
            while matched < components.count,
                let equal = ranges.first(where: { $0.kind == .equal && $0.keyPath == components[matched] }),
                case .included(let key)? = equal.bounds?.lower
            {
                prefix += key
                used.append(equal)
                matched += 1
            }
            guard matched > 0 else { continue }
            var keyRange = KeyRange.prefix(prefix)
            var score = QueryPlanner.weight * (4 * matched + 1)
            var extras: [Part] = []
            if matched < components.count,
                let next = ranges.first(where: {
                    $0.keyPath == components[matched] && $0.kind != .equal && $0.bounds != nil
                }),
                let bounds = next.bounds
            {
                keyRange = Self.range(after: prefix, lower: bounds.lower, upper: bounds.upper)
                score += QueryPlanner.weight * next.narrowness
                used.append(next)
                // The range's extra values, each after the equalities' prefix.
                let matchedPrefix = prefix, equalities = used.dropLast().map(\.text)
                extras = next.extraPoints.map { point in
                    let text = {
                        (equalities + ["\(QueryValueRange.describe(next.keyPath)) == \"\(point.value)\""]).joined(
                            separator: ", ")
                    }
                    return Part(
                        index: index,
                        range: QueryValueRange(
                            index.definition.keyPath, .equal, keyRange: .prefix(matchedPrefix + point.key),
                            covering: [], text: text()))
                }
            }
            let range = QueryValueRange(
                index.definition.keyPath, matched == components.count ? .equal : .between,
                keyRange: keyRange, covering: used, text: used.map(\.text).joined(separator: ", "))
            if score > (best?.score ?? Int.min) {
                best = Candidate(parts: [Part(index: index, range: range)] + extras, score: score)
            }
        }
        return best
    }

    /// The entries whose key is `prefix` followed by a value in `lower...upper`, then anything
    /// (later components, an identifier): a value's entries all start with its key, and keys
    /// are prefix-free, so "after `v`" starts past every key with the prefix `prefix + v`.
    static func range(after prefix: [UInt8], lower: RangeBound<[UInt8]>, upper: RangeBound<[UInt8]>) -> KeyRange {
        let start: RangeBound<[UInt8]>
        switch lower {
        case .unbounded: start = .included(prefix)
        case .included(let value): start = .included(prefix + value)
        case .excluded(let value):
            guard let above = KeyBytes.prefixUpperBound(prefix + value) else {
                return KeyRange(lower: .excluded(prefix), upper: .excluded(prefix))
            }
            start = .included(above)
        }
        let end: RangeBound<[UInt8]>
        switch upper {
        case .unbounded: end = KeyBytes.prefixUpperBound(prefix).map { .excluded($0) } ?? .unbounded
        case .excluded(let value): end = .excluded(prefix + value)
        case .included(let value): end = KeyBytes.prefixUpperBound(prefix + value).map { .excluded($0) } ?? .unbounded
        }
        return KeyRange(lower: start, upper: end)
    }
}
