/// One storage system's side of the `observe` suite: Dflat's three change subscriptions.
///
/// Each `watch` method subscribes with the system's idiomatic observation API and calls
/// `done` with every value the subscription delivers (first the current value, then a new
/// one after each commit that changes it) until `done` returns true; then it returns and the
/// subscription ends (cancelled, its resources released). It runs in the calling task, so a
/// subscriber is one task.
///
/// Semantics every implementation must keep:
/// - Deliveries come after the commit that caused them is durable (for the flag's
///   durability), with values read from that commit or a later one.
/// - Values are decoded records (`Codable`), as an app would receive them.
protocol ObserveSystem: CrudSystem {
    /// Case 1: a fetched result of the records whose primary key is `id` (zero or one).
    func watchResults(id: Int64, until done: ([CrudRecord]) throws -> Bool) async throws

    /// Case 2: the object with `id` (nil once it is deleted).
    func watchObject(id: Int64, until done: (CrudRecord?) throws -> Bool) async throws

    /// Case 3: a fetched result of the records whose `priority` lies in `range`, in
    /// ascending priority order (ties by id), found through the index.
    func watchResults(priorityIn range: Range<Int>, until done: ([CrudRecord]) throws -> Bool) async throws

    /// Case 1 with the subscription written as a predicate (`id == x`), where the system
    /// has a predicate form; the same subscription otherwise.
    func watchResults(matchingID id: Int64, until done: ([CrudRecord]) throws -> Bool) async throws

    /// Case 3 with the subscription written as a predicate over `priority`, sorted by it.
    func watchResults(priorityMatching range: Range<Int>, until done: ([CrudRecord]) throws -> Bool) async throws

    /// Replaces every record in `records` (existing ids) in ONE transaction, committed
    /// (durable for the flag) before it returns.
    func updateAll(_ records: [CrudRecord]) async throws

    /// Returns once every subscription that has delivered its first value is fully
    /// registered for later commits (a system may register after the first delivery).
    func settle() async throws

    /// How the subscriptions are made, for the rows' notes.
    static var observationNote: String { get }
}

/// The systems the `observe` suite compares, in report order.
enum ObserveSystems {
    static let all: [any ObserveSystem.Type] = [FolioCrudSystem.self, GRDBCrudSystem.self]
}

extension ObserveSystem {
    /// A system whose observations are queries already (GRDB: SQL) has one form of each.
    func watchResults(matchingID id: Int64, until done: ([CrudRecord]) throws -> Bool) async throws {
        try await watchResults(id: id, until: done)
    }

    func watchResults(priorityMatching range: Range<Int>, until done: ([CrudRecord]) throws -> Bool) async throws {
        try await watchResults(priorityIn: range, until: done)
    }
}
