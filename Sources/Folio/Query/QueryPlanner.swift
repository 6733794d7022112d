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
/// - an equality on the identifier is best, then one on a one-to-one index, then one on
///   another index, a range bounded on both sides, a string prefix, a half-open range
///   (``QueryValueRange/narrowness``: no per-range counts are kept, so this is a guess from
///   the shape of the condition); between an identifier range and an index range of the
///   same shape, the identifier's (no second lookup);
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
        /// Whether the executor reads the plan as a merge join (QueryExecution+MergeJoin.swift):
        /// the identifiers the index entries name, sorted, then the records in that order
        /// through one forward cursor. Results then come in identifier order. Only for plans
        /// that read an index and whose order is identifier order (no sort descriptors).
        var merges: Bool
        /// Key ranges every match's identifier lies in: the exact identifier conditions among
        /// the predicate's top-level `&&`, when the plan reads an index. An entry naming an
        /// identifier outside one cannot match, so it is dropped before its record is read
        /// (as SQLite checks a rowid in the index entry).
        var identifierRanges: [KeyRange] = []
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
    func isUsable(_ index: SchemaIndex<Instance>) -> Bool {
        (usable?.contains(index.name) ?? true) && !gaps.unlisted.contains(index.name)
    }

    /// An index over `keyPath` of one of `kinds`, built.
    func index(over keyPath: AnyKeyPath, manyToMany: Bool) -> SchemaIndex<Instance>? {
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
}

/// `\T.id` through the `Identifiable` requirement: what a format's default `identifier` is.
private func requirementIdentifierPath<T: Identifiable>(_: T.Type) -> AnyKeyPath { \T.id }
