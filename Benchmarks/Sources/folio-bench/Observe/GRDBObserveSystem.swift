import GRDB

/// GRDB's side of the `observe` suite: `ValueObservation`, consumed through its async
/// sequence `values(in:)` (GRDB 7's default `.task` scheduling: values arrive on the
/// cooperative thread pool), one per subscription. The pool fetches each changed
/// observation's value again after the commit (on its reader connections).
extension GRDBCrudSystem: ObserveSystem {
    static let observationNote =
        "GRDB: ValueObservation.tracking { ... }.values(in: pool) (scheduling .task), each iterated by its own task; a commit makes every observation it touches fetch again"

    /// `ValueObservation.tracking { CrudRecord.filter(key: id).fetchAll($0) }`.
    func watchResults(id: Int64, until done: ([CrudRecord]) throws -> Bool) async throws {
        let observation = ValueObservation.tracking { db in try CrudRecord.filter(key: id).fetchAll(db) }
        for try await results in observation.values(in: pool) {
            if try done(results) { return }
        }
        throw BenchError.wrongResult("GRDB observation of id \(id) ended")
    }

    /// `ValueObservation.tracking { CrudRecord.fetchOne($0, key: id) }`: GRDB has no
    /// object subscription of its own; this is its idiomatic way to watch one record.
    func watchObject(id: Int64, until done: (CrudRecord?) throws -> Bool) async throws {
        let observation = ValueObservation.tracking { db in try CrudRecord.fetchOne(db, key: id) }
        for try await record in observation.values(in: pool) {
            if try done(record) { return }
        }
        throw BenchError.wrongResult("GRDB observation of id \(id) ended")
    }

    /// The query of `range-index` (through the priority index), ordered by priority, id.
    func watchResults(priorityIn range: Range<Int>, until done: ([CrudRecord]) throws -> Bool) async throws {
        let observation = ValueObservation.tracking { db in
            try CrudRecord.filter(range.contains(Column("priority"))).order(Column("priority"), Column("id")).fetchAll(
                db)
        }
        for try await results in observation.values(in: pool) {
            if try done(results) { return }
        }
        throw BenchError.wrongResult("GRDB observation of priorities \(range) ended")
    }

    func updateAll(_ records: [CrudRecord]) async throws { try updateAllNow(records) }

    /// A `ValueObservation` on a pool registers with the writer after its first fetch (from
    /// a block it has already queued on the writer when the first value arrives): an empty
    /// write on that queue waits for every such registration.
    func settle() async throws { settleNow() }

    /// One `write` updating each record (GRDB's synchronous API).
    private func updateAllNow(_ records: [CrudRecord]) throws {
        try pool.write { db in
            for record in records { try record.update(db) }
        }
    }

    private func settleNow() {
        pool.writeWithoutTransaction { _ in }
    }
}
