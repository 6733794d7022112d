import Foundation
import FolioStorage

/// The plan: the chosen access, then the sort step (whether an index or the records tree
/// yields the requested order), exactness, and how `explain` describes it.
extension QueryPlanner {
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
            } else if let index = index(over: keyPath, manyToMany: false), Self.keyOrderIsSortOrder(index, first),
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
        // A merge join yields identifier order: the order without descriptors. An index
        // read in its own order for a sort it gives is not joined (the join would lose that
        // order), and neither is one whose results a sort step orders by descriptors:
        // measured, collecting and ordering the identifiers first made `priority >= x`
        // sorted by title, limit 20, three times slower than reading in index order.
        let merges = fullIndex == nil && parts.contains { $0.index != nil } && sortBy.isEmpty
        if merges {
            sorts = false
            direction = .forward
        }

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
            let scans =
                fullIndex.map { [QueryPlan.Scan(index: $0.name, condition: "every value")] }
                ?? parts.map { QueryPlan.Scan(index: $0.index?.name, condition: $0.range.text(naming: $0.index?.name)) }
            return QueryPlan(
                access: access, scans: scans, filters: hasPredicate && !exact,
                sort: sorts ? sortBy.map(Self.describe) : nil,
                sortKeys: sorts
                    ? sortBy.map {
                        QueryPlan.SortKey(
                            property: $0.keyPath.map(QueryValueRange.describe), descending: $0.order == .reverse)
                    }
                    : nil,
                offset: offset, limit: limit)
        }
        var plan = Plan(
            parts: parts, fullIndex: fullIndex, direction: direction, sorts: sorts, deduplicates: deduplicates,
            merges: merges, exact: exact, describe: describe)
        if parts.contains(where: { $0.index != nil }), let condition {
            plan.identifierRanges = identifierRanges(in: condition)
        }
        return plan
    }

    /// Whether an index's key order is exactly the order `descriptor` sorts its values in,
    /// so the index can stand for the sort step:
    /// - integers and UUIDs, whose descriptors compare with `<`;
    /// - strings under the `.lexical` comparator where it is Swift's `<` (swift-foundation
    ///   off Apple platforms: an unlocalized comparison without options), which is key
    ///   order for strings in normal form (Docs/Keys.md §9): not the default comparator,
    ///   `.localizedStandard`, nor `.lexical` on Apple platforms, where it is `NSString`'s
    ///   `compare(_:)` (UTF-16 order, which puts some characters beyond U+FFFF before
    ///   U+E000...U+FFFF). For the strings not in normal form where Swift's `<` is not a
    ///   total order (Keys.md §9.1), the results come in key order, the order of their
    ///   normal forms;
    /// - not floating point (keys give NaN a place, above every number, where `<` orders it
    ///   with nothing; -0.0 is no exception: keys canonicalise it to 0.0, as `==` equates them).
    static func keyOrderIsSortOrder(_ index: SchemaIndex<Instance>, _ descriptor: SortDescriptor<Instance>) -> Bool {
        let type = index.definition.valueType
        if sortsInKeyOrder.contains(type) { return true }
        guard lexicalIsSwiftOrder, type == "Swift.String", let comparator = descriptor.stringComparator else {
            return false
        }
        return String.StandardComparator(comparator, order: .forward) == .lexical
    }

    /// The key ranges of the exact identifier conditions that must all hold (the leaves of
    /// the top-level `&&`). Exact: an identifier's key lies in the range exactly when the
    /// condition holds, and no value outside it is read besides (no extra points), so a key
    /// outside proves the record fails the predicate.
    func identifierRanges(in condition: QueryCondition) -> [KeyRange] {
        Self.conjuncts(condition).ranges.compactMap { range in
            guard schema.isIdentifier(range.keyPath), range.exact, !range.hasExtraPoints else { return nil }
            return range.keyRange(false)
        }
    }

    static func describe(_ descriptor: SortDescriptor<Instance>) -> String {
        let name = descriptor.keyPath.map(QueryValueRange.describe) ?? "a comparator"
        return descriptor.order == .reverse ? "\(name) descending" : name
    }
}

/// Whether `String.StandardComparator.lexical` compares with Swift's `<` on this platform.
#if canImport(Darwin)
private let lexicalIsSwiftOrder = false
#else
private let lexicalIsSwiftOrder = true
#endif

/// The catalog names of the types ``QueryPlanner/keyOrderIsSortOrder(_:_:)`` accepts (built
/// once: a generic type cannot hold a static stored property).
private let sortsInKeyOrder: Set<String> = [
    "Swift.Int", "Swift.Int8", "Swift.Int16", "Swift.Int32", "Swift.Int64", "Swift.UInt",
    "Swift.UInt8", "Swift.UInt16", "Swift.UInt32", "Swift.UInt64", "Foundation.UUID",
]
