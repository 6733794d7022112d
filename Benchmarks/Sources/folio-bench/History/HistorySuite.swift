import Foundation
import Folio

/// The `history` suite: reads of a past generation (`read(at:)`) against the same reads of
/// the newest one, in one store of the crud data set (n records, default 10,000) after
/// 1,000 more durable single-record commits. The past generation is the one before those
/// commits. Folio only (GRDB keeps no past states); each pair runs interleaved, so their
/// ratio compares the same conditions. The record cache is off in every row, as in the crud
/// suite (a read of a past generation never uses it: Docs/Cache.md §7.1).
///
/// Workloads:
/// - `point-current` / `point-past`: every record loaded by identifier, inside one
///   `read { }` / `read(at:) { }` scope;
/// - `scope-current` / `scope-past`: n/10 scopes of one load each (what a scope costs);
/// - `range-current` / `range-past`: 20 queries of a tenth of the priority range (its index);
/// - `first-past-read`: the first `read(at:)` of a persistence opened afresh, 1,000 commits
///   back (the walk along the chain), per commit walked;
/// - `transaction-1000` / `undo-1000`: a named transaction changing 1,000 records (their
///   tag, one indexed field untouched), and `undo()` of such a transaction: one commit
///   that writes back what it changed;
/// - `update-individual` / `update-individual-retained`: the crud suite's update-individual
///   (n durable single-record updates in a random order) on a fresh store of n records,
///   without and with a declared retention of the newest n generations
///   (`setHistoryRetention(.generations(n))`): the time, and the bytes on disk after it,
///   whose difference divided by n is what keeping the history costs per changed record.
enum HistorySuite {
    static let name = "history"
    static let commitsBack = 1_000
    static let workloadNames = [
        "point-current", "point-past", "scope-current", "scope-past", "range-current", "range-past",
        "first-past-read", "transaction-1000", "undo-1000", "update-individual", "update-individual-retained",
    ]

    static func run(_ context: BenchContext) async throws {
        let n = context.sizes.crudN
        let dataset = context.datasets.dataset(n)
        let directory = try context.scratch.makeDirectory("history")
        // The store, once for every row: n records, then `commitsBack` single-record commits.
        let past: ObservationToken
        do {
            let system = try await FolioCrudSystem.open(directory: directory, durability: context.durability)
            try await system.insert(dataset.records)
            past = system.persistence.currentToken
            let records = system.persistence.datastore(for: CrudRecordFormat.self)
            for step in 0..<commitsBack {
                var record = dataset.records[(step * 7) % dataset.records.count]
                record.tag = "changed-\(step)"
                try await records.persist(record)
            }
            try await system.close()
        }
        let shared = try await FolioCrudSystem.open(directory: directory, durability: context.durability)
        let persistence = shared.persistence
        let records = persistence.datastore(for: CrudRecordFormat.self)
        let ids = dataset.records.map { (record: CrudRecord) in record.id }
        let range = dataset.priorityRange
        let read = { (token: ObservationToken?, body: () async throws -> Int) async throws -> Int in
            if let token { return try await persistence.read(at: token) { try await body() } }
            return try await persistence.read { try await body() }
        }
        func pair(
            _ label: String, operations: Int, notes: [String], _ body: @escaping (ObservationToken?) async throws -> Int
        )
            -> [Workload]
        {
            [(label + "-current", nil), (label + "-past", Optional(past))].map { name, token in
                Workload(
                    suite: Self.name, name: name, system: "folio", n: n, durability: .flag(context.durability),
                    operations: operations, notes: notes
                ) { run in
                    _ = try await body(token)  // warm: the walk, and the pages
                    Sink.consume(try await run.measure { try await body(token) })
                }
            }
        }
        try await context.measureInterleaved(
            pair("point", operations: ids.count, notes: ["every record by identifier, one scope"]) { token in
                try await read(token) {
                    var found = 0
                    for id in ids where try await records.load(id) != nil { found += 1 }
                    return found
                }
            })
        let scopes = Array(ids.prefix(max(1, ids.count / 10)))
        try await context.measureInterleaved(
            pair("scope", operations: scopes.count, notes: ["one scope per load, n/10 loads"]) { token in
                var found = 0
                for id in scopes { found += try await read(token) { try await records.load(id) == nil ? 0 : 1 } }
                return found
            })
        try await context.measureInterleaved(
            pair("range", operations: 20, notes: ["20 queries of priority in \(range), by its index"]) { token in
                try await read(token) {
                    var found = 0
                    for _ in 0..<20 {
                        found += try await records.fetch(where: #Predicate { range.contains($0.priority) }).collect()
                            .count
                    }
                    return found
                }
            })
        try await shared.close()
        try await context.measure(
            Workload(
                suite: Self.name, name: "first-past-read", system: "folio", n: n,
                durability: .flag(context.durability), operations: commitsBack, secondsPerOperation: true,
                notes: [
                    "the first read(at:) \(commitsBack) commits back of a persistence opened afresh, per commit walked"
                ]
            ) { run in
                let fresh = try await FolioCrudSystem.open(directory: directory, durability: context.durability)
                let datastore = fresh.persistence.datastore(for: CrudRecordFormat.self)
                let id = ids[0]
                _ = try await datastore.count()  // prepared, so that only the walk is timed
                Sink.consume(
                    try await run.measure {
                        try await fresh.persistence.read(at: past) { try await datastore.load(id)?.priority ?? -1 }
                    })
                try await fresh.close()
            })
        // Undo last: its transactions rewrite a tenth of the store each, and the compactions
        // they bring remove the history the rows above read.
        do {
            let undoing = try await FolioCrudSystem.open(directory: directory, durability: context.durability)
            let persistence = undoing.persistence
            let records = persistence.datastore(for: CrudRecordFormat.self)
            let changed = Array(dataset.records.prefix(1_000))
            var round = 0
            let update = { (label: String) async throws in
                round += 1
                let tag = "\(label)-\(round)"
                try await persistence.perform(named: "update 1,000") {
                    for var record in changed {
                        record.tag = tag
                        try await records.persist(record)
                    }
                }
            }
            try await context.measureInterleaved([
                Workload(
                    suite: Self.name, name: "transaction-1000", system: "folio", n: n,
                    durability: .flag(context.durability),
                    operations: 1, notes: ["perform(named:) of 1,000 records updated (tag)"]
                ) { run in
                    try await run.measure { try await update("do") }
                },
                Workload(
                    suite: Self.name, name: "undo-1000", system: "folio", n: n, durability: .flag(context.durability),
                    operations: 1, notes: ["undo() of such a transaction"]
                ) { run in
                    try await update("undone")
                    let undone = try await run.measure { try await persistence.undo() }
                    guard undone?.name == "update 1,000" else {
                        throw BenchError.wrongResult("undo reverted \(String(describing: undone))")
                    }
                },
            ])
            try await undoing.close()
        }
        context.scratch.remove(directory)
        try await measureRetention(context)
    }

    /// `update-individual` without and with a declared retention of n generations.
    static func measureRetention(_ context: BenchContext) async throws {
        let n = context.sizes.crudN
        let dataset = context.datasets.dataset(n)
        let updated = dataset.shuffledIDs(seed: 11).map { id -> CrudRecord in
            var record = dataset.records[Int(id) - 1]
            record.title = "updated-\(id)"
            record.tag = "tag-updated"
            return record
        }
        func workload(_ name: String, retention: HistoryRetention?) -> Workload {
            let notes =
                retention == nil
                ? ["n updates, one durable transaction each; bytes on disk after closing"]
                : ["the same with setHistoryRetention(.generations(n)) declared first"]
            return Workload(
                suite: Self.name, name: name, system: "folio", n: n, durability: .flag(context.durability),
                operations: n, notes: notes
            ) { run in
                let path = try context.scratch.makeDirectory(name)
                defer { context.scratch.remove(path) }
                let system = try await FolioCrudSystem.open(directory: path, durability: context.durability)
                try await system.insert(dataset.records)
                let persistence = system.persistence
                if let retention { try await persistence.setHistoryRetention(retention) }
                let records = persistence.datastore(for: CrudRecordFormat.self)
                let written = persistence.ioStatistics.bytesWritten
                try await run.measure { for record in updated { try await records.persist(record) } }
                // Where the bytes go: what each commit appends, and the files kept.
                let perCommit = (persistence.ioStatistics.bytesWritten - written) / n
                let files = (try? FileManager.default.contentsOfDirectory(atPath: path + "/snapshots"))?.count ?? 0
                run.notes = ["last run: \(perCommit) bytes written per commit, \(files) snapshot files at the end"]
                if retention != nil {
                    // Every update is still readable: the one before the first is the
                    // generation n commits back.
                    let oldest = try persistence.oldestReadableToken()
                    guard oldest.generation + UInt64(n) <= persistence.currentToken.generation else {
                        throw BenchError.wrongResult("retention kept only back to \(oldest)")
                    }
                }
                try await system.close()
                run.bytesOnDisk = Scratch.bytesOnDisk(path)
            }
        }
        try await context.measureInterleaved([
            workload("update-individual", retention: nil),
            workload("update-individual-retained", retention: .generations(n)),
        ])
    }
}
