import Foundation
import FolioStorage

/// Chooses how a query reads: from a predicate's ``QueryCondition``, the datastore's built
/// indexes and the requested sort, which trees and key ranges to scan, and whether the
/// results stream in the requested order or need a sort step.
///
/// Correctness never depends on the choice: the executor (QueryExecution.swift) checks
/// every record it reads against the whole predicate (unless the plan is exact), and an
/// access only has to read at least every matching record. Three things uphold that last
/// part: a condition gets an access only where key order and the value type's comparison
/// agree (``RangeReadableKey``, ``StringRangeBound``, whose extra values are read as parts
/// of their own); index values are those of the records as they read back
/// (DatastoreSchema+Encoding.swift); and a plan reading an index also reads the records its
/// build left out, or does not use it (``IndexGaps``).
///
/// The choice is about how few records are read:
/// - a condition on the identifier (no second lookup) or an equality on a one-to-one index
///   is best, then an equality on another index, a range bounded on both sides, a string
///   prefix, a half-open range (``QueryValueRange/narrowness``: no per-range counts are
///   kept, so this is a guess from the shape of the condition);
/// - `&&` takes the best of its sides' own accesses, the intersection of its ranges over
///   one key path, and a composite index (equalities on its first components, then one
///   range); whatever the access does not cover is filtered;
/// - `||` reads the union of both sides' accesses, without duplicates, when both have one;
///   otherwise every record;
/// - `!` and anything the planner does not understand have no access of their own.
struct QueryPlanner<Format: DatastoreFormat> {
    typealias Instance = Format.Instance

    /// One scan: a key range of the records tree (`index` nil) or of an index.
    struct Part {
        let index: SchemaIndex<Instance>?
        let range: QueryValueRange
    }

    /// An access path and how good it is.
    struct Candidate {
        var parts: [Part]
        var score: Int
    }

    /// What the executor runs, and how `explain` describes it.
    struct Plan {
        /// The scans; empty with `fullIndex` nil means every record in identifier order.
        var parts: [Part]
        /// Reading a whole index in its order (a sort that matches an index, and no
        /// condition with an access of its own).
        var fullIndex: SchemaIndex<Instance>?
        var direction: ScanDirection
        /// Whether results must be sorted after reading (else they stream in order).
        var sorts: Bool
        /// Whether several scans, or a many-to-many index, can yield a record twice.
        var deduplicates: Bool
        /// Whether the scan reads exactly the matching records, so no record needs the
        /// predicate: a predicate of one exact condition (``QueryValueRange/exact``) read
        /// through its own range.
        var exact: Bool
        let describe: () -> QueryPlan
        /// How `explain` reports the plan.
        var description: QueryPlan { describe() }
    }

    let schema: DatastoreSchema<Format>
    /// Built indexes, by name (nil: every declared index is built).
    let usable: Set<String>?
    /// The records built indexes leave out: read with any plan that reads their index.
    var gaps: IndexGaps = .none

    /// Whether a plan may read `index`: built, and every record it leaves out listed.
    private func isUsable(_ index: SchemaIndex<Instance>) -> Bool {
        (usable?.contains(index.name) ?? true) && !gaps.unlisted.contains(index.name)
    }

    /// An index over `keyPath` of one of `kinds`, built.
    private func index(over keyPath: AnyKeyPath, manyToMany: Bool) -> SchemaIndex<Instance>? {
        schema.indexes.first { index in
            index.definition.keyPath == keyPath && !index.definition.composite
                && (index.definition.kind == .manyToMany) == manyToMany && isUsable(index)
        }
    }

    /// Whether `keyPath` is the identifier. A format of an `Identifiable` instance that
    /// keeps the default `identifier` has the protocol requirement's key path, which is not
    /// `==` to the `\Item.id` a predicate writes (Swift compares key paths by component);
    /// then, and only then (the format's identifier is `==` to `\T.id` built through the
    /// requirement, not some other computed property), a stored `id` of the identifier's
    /// type, spelled `\Item.id`, is recognised by its printed form, which names no other key
    /// path (a nested `\Item.owner.id` prints as such, a computed one as `<computed …>`).
    /// Computed each time (it prints key paths): callers ask through
    /// `DatastoreSchema.isIdentifier(_:)`, which remembers the answer per key path object.
    func isIdentifier(_ keyPath: AnyKeyPath) -> Bool {
        if keyPath == schema.identifierPath { return true }
        return type(of: keyPath).valueType == Format.Identifier.self
            && (Instance.self as? any Identifiable.Type).map { requirementIdentifierPath($0) } == schema.identifierPath
            && String(describing: keyPath) == "\\\(Instance.self).id"
    }

    func candidate(_ condition: QueryCondition) -> Candidate? {
        switch condition {
        case .range(let range):
            if schema.isIdentifier(range.keyPath) {
                return Candidate(
                    parts: [Part(index: nil, range: range)] + extraParts(of: range, in: nil),
                    score: range.narrowness + 3)
            }
            let composite = compositeCandidate([range])
            guard let index = index(over: range.keyPath, manyToMany: false) else { return composite }
            let bonus = index.unique && range.kind == .equal ? 2 : 0
            let single = Candidate(
                parts: [Part(index: index, range: range)] + extraParts(of: range, in: index),
                score: range.narrowness + bonus)
            return (composite?.score ?? Int.min) > single.score ? composite : single
        case .contains(let keyPath, let element):
            guard let index = index(over: keyPath, manyToMany: true) else { return nil }
            return Candidate(parts: [Part(index: index, range: element)], score: element.narrowness - 1)
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
    private func extraParts(of range: QueryValueRange, in index: SchemaIndex<Instance>?) -> [Part] {
        range.extraPoints.map { point in
            Part(
                index: index,
                range: QueryValueRange(
                    range.keyPath, point: point.key,
                    text: "\(QueryValueRange.describe(range.keyPath)) == \"\(point.value)\""))
        }
    }

    /// Scans of the records the indexes `parts` read leave out (``IndexGaps``), by identifier.
    private func gapParts(of parts: [Part]) -> [Part] {
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
            var score = 4 * matched + 1
            var extras: [Part] = []
            if matched < components.count,
                let next = ranges.first(where: {
                    $0.keyPath == components[matched] && $0.kind != .equal && $0.bounds != nil
                }),
                let bounds = next.bounds
            {
                keyRange = Self.range(after: prefix, lower: bounds.lower, upper: bounds.upper)
                score += next.narrowness
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
        let start: KeyBound
        switch lower {
        case .unbounded: start = .included(prefix)
        case .included(let value): start = .included(prefix + value)
        case .excluded(let value):
            guard let above = KeyBytes.prefixUpperBound(prefix + value) else {
                return KeyRange(lower: .excluded(prefix), upper: .excluded(prefix))
            }
            start = .included(above)
        }
        let end: KeyBound
        switch upper {
        case .unbounded: end = KeyBytes.prefixUpperBound(prefix).map { .excluded($0) } ?? .unbounded
        case .excluded(let value): end = .excluded(prefix + value)
        case .included(let value): end = KeyBytes.prefixUpperBound(prefix + value).map { .excluded($0) } ?? .unbounded
        }
        return KeyRange(lower: start, upper: end)
    }

    /// The plan for a predicate's condition (nil: no predicate), a sort and a limit.
    func plan(
        _ condition: QueryCondition?, hasPredicate: Bool, sortBy: [SortDescriptor<Instance>], limit: Int?,
        offset: Int
    ) -> Plan {
        let chosen = condition.flatMap(candidate)
        var parts = chosen?.parts ?? []
        parts += gapParts(of: parts)
        var fullIndex: SchemaIndex<Instance>?
        var direction = ScanDirection.forward
        var sorts = true
        let first = sortBy.first

        if sortBy.isEmpty {
            // Identifier order: what the records tree yields, and what one equality range of
            // an index yields too (its entries are the value's key then the identifier's).
            if parts.isEmpty || (parts.count == 1 && (parts[0].index == nil || parts[0].range.kind == .equal)) {
                sorts = false
            }
        } else if sortBy.count == 1, let first, let keyPath = first.keyPath {
            let reverse = first.order == .reverse
            if schema.isIdentifier(keyPath) {
                // Identifiers are unique, so either direction of the records tree is exact.
                if parts.isEmpty || (parts.count == 1 && parts[0].index == nil) {
                    sorts = false
                    direction = reverse ? .reverse : .forward
                }
            } else if let index = index(over: keyPath, manyToMany: false), Self.keyOrderIsSortOrder(index),
                gaps.isComplete(index.name), !reverse || (index.unique && !index.definition.nilIsDistinct)
            {
                // Ties of a non-unique index come in identifier order only forwards.
                if parts.isEmpty {
                    fullIndex = index
                    sorts = false
                } else if parts.count == 1, parts[0].index?.name == index.name {
                    sorts = false
                }
                if !sorts { direction = reverse ? .reverse : .forward }
            }
        }
        if fullIndex != nil { parts = [] }

        let deduplicates = parts.count > 1 || parts.contains { $0.index?.definition.kind == .manyToMany }
        var exact = false
        if fullIndex == nil, parts.count == 1, let condition {
            switch condition {
            case .range(let range):
                exact = range.exact && parts[0].range.covered.count == 1 && parts[0].range.covered[0] === range
            case .contains(_, let element): exact = element.exact
            case .and:
                // Ranges of one key path, all exact, read as their intersection.
                let covered = parts[0].range.covered
                let (leaves, complete) = Self.conjuncts(condition)
                if complete, leaves.allSatisfy(\.exact), covered.count == leaves.count,
                    zip(covered, leaves).allSatisfy({ $0 === $1 })
                {
                    exact = true
                }
            default: exact = false
            }
        }
        // Described only when asked (explain): the texts print key paths, which costs more
        // than the point lookup a plan may be for.
        let describe = { [parts, fullIndex, sorts] () -> QueryPlan in
            let access: QueryPlan.Access
            if let fullIndex {
                access = .index(name: fullIndex.name, ranges: ["every value"])
            } else if parts.isEmpty {
                access = .everyRecord
            } else if parts.allSatisfy({ $0.index == nil }) {
                access = .identifierRange(parts.map { $0.range.text(naming: nil) }.joined(separator: " or "))
            } else {
                // Several indexes in a union are named together.
                var names: [String] = []
                for name in parts.map({ $0.index?.name ?? "identifier" }) where !names.contains(name) {
                    names.append(name)
                }
                access = .index(
                    name: names.joined(separator: " + "), ranges: parts.map { $0.range.text(naming: $0.index?.name) })
            }
            return QueryPlan(
                access: access, filters: hasPredicate && !exact, sort: sorts ? sortBy.map(Self.describe) : nil,
                offset: offset, limit: limit)
        }
        return Plan(
            parts: parts, fullIndex: fullIndex, direction: direction, sorts: sorts, deduplicates: deduplicates,
            exact: exact, describe: describe)
    }

    /// The value types whose key order is exactly the order `SortDescriptor` sorts them
    /// in, so an index of them can stand for a sort step. Not strings (a `SortDescriptor`
    /// over a `String` compares with `localizedStandard` by default, not by scalars) and
    /// not floating point (keys give NaN a place, above every number, where `<` orders it
    /// with nothing; -0.0 is no exception: keys canonicalise it to 0.0, as `==` equates them).
    static func keyOrderIsSortOrder(_ index: SchemaIndex<Instance>) -> Bool {
        sortsInKeyOrder.contains(index.definition.valueType)
    }

    static func describe(_ descriptor: SortDescriptor<Instance>) -> String {
        let name = descriptor.keyPath.map(QueryValueRange.describe) ?? "a comparator"
        return descriptor.order == .reverse ? "\(name) descending" : name
    }
}

/// The catalog names of the types ``QueryPlanner/keyOrderIsSortOrder(_:)`` accepts (built
/// once: a generic type cannot hold a static stored property).
private let sortsInKeyOrder: Set<String> = [
    "Swift.Int", "Swift.Int8", "Swift.Int16", "Swift.Int32", "Swift.Int64", "Swift.UInt",
    "Swift.UInt8", "Swift.UInt16", "Swift.UInt32", "Swift.UInt64", "Foundation.UUID",
]

/// `\T.id` through the `Identifiable` requirement: what a format's default `identifier` is.
private func requirementIdentifierPath<T: Identifiable>(_: T.Type) -> AnyKeyPath { \T.id }
