import Foundation
import FolioStorage

/// Choosing an access for a condition: one range, `&&` (the best side, or the
/// intersection of ranges over one key path), `||` (the union of both sides), and the scans
/// every access adds (extra values of a range, records an index left out).
extension QueryPlanner {
    /// Scores are in units of ``weight`` per step of ``QueryValueRange/narrowness``, so a
    /// bonus smaller than a unit (the identifier's, for a range) only breaks ties.
    static var weight: Int { 3 }

    func candidate(_ condition: QueryCondition) -> Candidate? {
        switch condition {
        case .range(let range):
            if schema.isIdentifier(range.keyPath) {
                // An equality on the identifier is one record: it beats every index. Any
                // other identifier range only breaks a tie of narrowness with an index's
                // (no second lookup): a range of an index bounded on both sides is likely
                // narrower than a half-open range of identifiers.
                let bonus = range.kind == .equal ? 3 * Self.weight : 2
                return Candidate(
                    parts: [Part(index: nil, range: range)] + extraParts(of: range, in: nil),
                    score: Self.weight * range.narrowness + bonus)
            }
            let composite = compositeCandidate([range])
            guard let index = index(over: range.keyPath, manyToMany: false) else { return composite }
            let bonus = index.unique && range.kind == .equal ? 2 * Self.weight : 0
            let single = Candidate(
                parts: [Part(index: index, range: range)] + extraParts(of: range, in: index),
                score: Self.weight * range.narrowness + bonus)
            return (composite?.score ?? Int.min) > single.score ? composite : single
        case .contains(let keyPath, let element):
            guard let index = index(over: keyPath, manyToMany: true) else { return nil }
            return Candidate(
                parts: [Part(index: index, range: element)], score: Self.weight * (element.narrowness - 1))
        case .and(let left, let right):
            var best: Candidate?
            let leaves = Self.conjuncts(condition).ranges
            // Ranges of one key path that must all hold are one range (the narrower).
            var intersections: [Candidate?] = []
            var groups: [(AnyKeyPath, [QueryValueRange])] = []
            for leaf in leaves where leaf.bounds != nil {
                if let position = groups.firstIndex(where: { $0.0 == leaf.keyPath }) {
                    groups[position].1.append(leaf)
                } else {
                    groups.append((leaf.keyPath, [leaf]))
                }
            }
            for (_, ranges) in groups {
                // More bounds merged, a narrower range: the whole group beats any part of it.
                if let merged = QueryValueRange(intersecting: ranges), var found = candidate(.range(merged)) {
                    found.score += ranges.count
                    intersections.append(found)
                }
            }
            for found in [candidate(left), candidate(right), compositeCandidate(leaves)] + intersections {
                if let found, found.score > (best?.score ?? Int.min) { best = found }
            }
            return best
        case .or(let left, let right):
            guard let l = candidate(left), let r = candidate(right) else { return nil }
            return Candidate(parts: l.parts + r.parts, score: min(l.score, r.score) - 1)
        case .not, .opaque:
            return nil
        }
    }

    /// Scans of the values a range must read besides its key range
    /// (``QueryValueRange/extraPoints``), one value each.
    func extraParts(of range: QueryValueRange, in index: SchemaIndex<Instance>?) -> [Part] {
        range.extraPoints.map { point in
            Part(
                index: index,
                range: QueryValueRange(
                    range.keyPath, point: point.key,
                    text: "\(QueryValueRange.describe(range.keyPath)) == \"\(point.value)\""))
        }
    }

    /// Scans of the records the indexes `parts` read leave out (``IndexGaps``), by identifier.
    func gapParts(of parts: [Part]) -> [Part] {
        var gapParts: [Part] = [], indexes: [String] = []
        for part in parts {
            guard let index = part.index, !indexes.contains(index.name), let missing = gaps.missing[index.name] else {
                continue
            }
            indexes.append(index.name)
            for identifier in missing {
                let text = {
                    "\(QueryValueRange.describe(schema.identifierPath)) == \(schema.describe(identifierKey: identifier)), left out of \(index.name)"
                }
                gapParts.append(
                    Part(index: nil, range: QueryValueRange(schema.identifierPath, point: identifier, text: text())))
            }
        }
        return gapParts
    }

    /// The ranges that must all hold: the range leaves of a tree of `&&`, and whether
    /// they are all its leaves (nothing else of it needs a filter).
    static func conjuncts(_ condition: QueryCondition) -> (ranges: [QueryValueRange], complete: Bool) {
        switch condition {
        case .and(let left, let right):
            let (l, r) = (conjuncts(left), conjuncts(right))
            return (l.ranges + r.ranges, l.complete && r.complete)
        case .range(let range): return ([range], true)
        default: return ([], false)
        }
    }
}
