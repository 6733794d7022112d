/// One storage system's side of the `crud` and `scale` suites.
///
/// Adding a system is one new file with one type conforming to this protocol, and one line
/// in ``CrudSystems/all``. The harness does everything else: data, timing, fresh state per
/// run, verification, bytes on disk, child processes.
///
/// Semantics every implementation must keep, so that the systems do the same work:
/// - ``open(directory:durability:)`` opens (creating if empty) a store in `directory`, a
///   directory that belongs to it alone, with the durability of the flag (see
///   ``BenchDurability``), and with a secondary index on `priority` and none on `color`.
/// - Each method other than the reads runs in ONE transaction of its own, committed before
///   it returns; reads see everything committed before they started.
/// - Records go through the system's `Codable` path (no hand-written row mapping).
/// - Every method is `async`; it runs in its caller's task (nonisolated(nonsending)). A
///   system with a synchronous API (GRDB) calls it directly inside the method; a system
///   with an async API (Folio) awaits it. Never a semaphore or a blocking wait on a task.
/// - Implementations must be safe to call from several tasks at once (`mt-insert` calls
///   ``insert(_:)`` from 4 concurrent tasks); they may serialise writers internally.
protocol CrudSystem: AnyObject, Sendable {
    /// The `system` of the result rows: `folio` or `grdb`.
    static var systemName: String { get }

    /// Opens the store in `directory` (empty for a new store, or one this type wrote and
    /// closed, perhaps in another process).
    static func open(directory: String, durability: BenchDurability) async throws -> Self

    /// Opens the store as one of several processes that write it (the `mp` suite): as
    /// ``open(directory:durability:)``, and a write that finds another process's write in
    /// progress waits for it, up to `busyTimeout` seconds, instead of failing at once. Nil:
    /// Folio's default `busyTimeout` (5 s), which GRDB's side matches.
    static func openShared(directory: String, durability: BenchDurability, busyTimeout: Double?) async throws -> Self

    /// Inserts `records` (new ids) in one transaction.
    func insert(_ records: [CrudRecord]) async throws

    /// Every record whose `color` equals `color`, decoded; a full scan (no index).
    func fetchAll(color: Int) async throws -> [CrudRecord]

    /// `scan-decode-filter`: every record fetched and decoded through the system's
    /// `Codable` path, then those whose `color` equals `color` kept by a filter in Swift (the
    /// work a non-indexed predicate costs when the store cannot filter before decoding).
    func fetchEveryDecodedRecord(whereColorIs color: Int) async throws -> [CrudRecord]

    /// The record with `id`, or nil; one read on its own.
    func fetch(id: Int64) async throws -> CrudRecord?

    /// Every record whose `priority` lies in `range`, decoded, found through the index.
    func fetchAll(priorityIn range: Range<Int>) async throws -> [CrudRecord]

    /// Replaces the stored record with `record.id` by `record`, in a transaction of its own.
    func update(_ record: CrudRecord) async throws

    /// Deletes the records with these ids, all in one transaction.
    func delete(ids: [Int64]) async throws

    // MARK: Queries: the same questions asked through each system's query API

    /// `query-scan`: every record whose `color` equals `color`, through the system's query
    /// API (Folio: a `#Predicate` through `fetch(where:)`; GRDB: `filter(...)`); no index.
    func query(color: Int) async throws -> [CrudRecord]

    /// `query-indexed`: every record with `lower <= priority < upper`, through the query API
    /// (the planner or SQLite picks the `priority` index).
    func query(priorityFrom lower: Int, below upper: Int) async throws -> [CrudRecord]

    /// How the system plans one of the query workloads' questions (Folio `explain`, SQLite's
    /// `EXPLAIN QUERY PLAN`), for the row's notes. For ``CrudQuery/priorityRange(_:_:)``
    /// it throws unless the `priority` index is used.
    func queryPlanNote(_ query: CrudQuery) async throws -> String

    /// `point-query`: the record with `id` through the query API (an id predicate, first
    /// match), or nil; one read on its own.
    func queryFirst(id: Int64) async throws -> CrudRecord?

    /// `update-where`: sets `tag` on every record with `priority >= lower`, in one call and
    /// one transaction; returns how many records changed.
    func updateWhere(priorityAtLeast lower: Int, tag: String) async throws -> Int

    /// `delete-where`: deletes every record with `priority >= lower`, in one call and one
    /// transaction; returns how many.
    func deleteWhere(priorityAtLeast lower: Int) async throws -> Int

    /// `query-sorted-limit`: the first `limit` records with `priority >= lower` in `title`
    /// order (byte order of the ASCII titles: Folio's `.lexical` comparator, SQLite's binary
    /// collation), through the query API; `priority` is indexed, `title` is not.
    func query(priorityAtLeast lower: Int, sortedByTitleLimit limit: Int) async throws -> [CrudRecord]

    /// `query-compound`: every record with `lower <= priority < upper` and `id <= maximumID`,
    /// through the query API: a condition on the `priority` index and one on the primary key.
    func query(priorityFrom lower: Int, below upper: Int, idAtMost maximumID: Int64) async throws -> [CrudRecord]

    /// `mt-insert-disjoint`: inserts `records` (new ids) in one transaction into partition
    /// `partition` (0 ..< ``Sizes/concurrentWriters``): a collection of its own (Folio: a
    /// datastore, GRDB: a table) with the same columns and `priority` index as the main one,
    /// so that writers of different partitions touch nothing in common.
    func insert(_ records: [CrudRecord], intoPartition partition: Int) async throws

    /// The record `id` of partition `partition`, or nil.
    func fetch(id: Int64, fromPartition partition: Int) async throws -> CrudRecord?

    /// Makes everything durable, releases the store's files (another process may open them
    /// next) and closes. The object is not used again.
    func close() async throws

    /// Optional: how the system answers the `range-index` query (e.g. SQLite's query plan),
    /// added to that row's notes. Throw if the index is not used.
    func rangeQueryNote() async throws -> String?

    /// Optional: how many syncs the store's `commits` commits since it opened took (group
    /// commit), added to the run's notes.
    func commitSyncNote(commits: Int) async throws -> String?
}

/// The questions of the query workloads, for ``CrudSystem/queryPlanNote(_:)``.
enum CrudQuery: Sendable {
    /// `color == c` (query-scan).
    case color(Int)
    /// The query-indexed predicate: `lower <= priority < upper`.
    case priorityRange(Int, Int)
    /// The same bounds written as `priority >= lower && priority < upper` (Folio: a
    /// conjunction of two comparisons), for the notes only.
    case priorityConjunction(Int, Int)
    /// `id == id` (point-query).
    case id(Int64)
    /// `priority >= lower` (update-where, delete-where).
    case priorityAtLeast(Int)
    /// `priority >= lower`, sorted by title, first `limit` (query-sorted-limit).
    case priorityAtLeastByTitle(Int, limit: Int)
    /// `lower <= priority < upper && id <= maximumID` (query-compound).
    case priorityRangeAndID(Int, Int, Int64)
}

extension CrudSystem {
    func rangeQueryNote() async throws -> String? { nil }
    func commitSyncNote(commits: Int) async throws -> String? { nil }
}

/// The systems the `crud` and `scale` suites compare, in report order.
enum CrudSystems {
    /// A system and its implementation, or nil while it is not written yet (its rows then
    /// read "not yet available").
    struct Entry {
        var name: String
        var type: (any CrudSystem.Type)?
    }

    static let all: [Entry] = [
        Entry(name: "folio", type: FolioCrudSystem.self),
        Entry(name: "grdb", type: GRDBCrudSystem.self),
    ]

    /// Why a nil entry has no figures.
    static let unavailableReason = "not yet available: this system's side is not written yet"

    /// The implementation named `name`, for child processes.
    static func type(named name: String) -> (any CrudSystem.Type)? {
        all.first { $0.name == name }?.type
    }
}
