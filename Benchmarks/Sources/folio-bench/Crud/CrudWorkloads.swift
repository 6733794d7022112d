import Foundation

/// The workloads of the `crud` suite for one system, also used by `scale` (insert-batch
/// and get-by-id at several sizes). Each builds a ``Workload`` whose run does its set-up
/// untimed, times only the operations the workload names, and checks their result.
struct CrudWorkloads {
    /// The crud suite's workload names, in report order.
    static let names = [
        "insert-batch", "scan-filter", "scan-decode-filter", "get-by-id", "get-hot", "range-index",
        "update-individual", "update-indexed-individual", "delete-batch", "open-cold", "mt-insert",
        "mt-insert-disjoint", "mt-update-individual",
        "query-scan", "query-indexed", "point-query", "update-where", "delete-where", "query-sorted-limit",
        "query-compound", "get-by-id-2-tasks", "range-index-2-tasks",
    ]

    let context: BenchContext
    let fixtures: CrudFixtures
    let system: any CrudSystem.Type
    let suite: String

    private var durability: BenchDurability { context.durability }
    private var scratch: Scratch { context.scratch }

    func workload(
        _ name: String, n: Int, operations: Int, notes: [String] = [],
        run: @escaping (RunContext) async throws -> Void
    ) -> Workload {
        Workload(
            suite: suite, name: name, system: system.systemName, n: n, durability: .flag(durability),
            operations: operations, notes: notes, run: run)
    }

    func openShared(_ dataset: CrudDataset) -> OpenFixture {
        let system = system, fixtures = fixtures, durability = durability
        return OpenFixture {
            try await system.open(directory: try await fixtures.directory(system, dataset), durability: durability)
        }
    }

    /// n records inserted in one transaction into an empty store (a new one each run).
    func insertBatch(_ dataset: CrudDataset) -> Workload {
        let system = system, scratch = scratch, durability = durability, fixtures = fixtures
        return workload(
            "insert-batch", n: dataset.n, operations: dataset.n,
            notes: [
                "one transaction; bytes on disk after closing the store; the first run's store is the fixture of the read workloads"
            ]
        ) { run in
            let path = try scratch.makeDirectory("\(system.systemName)-insert")
            var kept = false
            defer { if !kept { scratch.remove(path) } }
            let store = try await system.open(directory: path, durability: durability)
            try await run.measure { try await store.insert(dataset.records) }
            guard let probe = try await store.fetch(id: Int64(dataset.n)) else {
                throw BenchError.wrongResult("last record missing after insert-batch")
            }
            try expect(probe == dataset.records[dataset.n - 1], "last record differs after insert-batch")
            try await store.close()
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
            // The first run's store becomes the fixture the read workloads open and copy.
            kept = fixtures.adopt(path, system, dataset)
        }
    }

    /// Every record with color 1 (a third), fetched and decoded without an index.
    func scanFilter(_ dataset: CrudDataset) -> Workload {
        let shared = openShared(dataset)
        var w = workload(
            "scan-filter", n: dataset.n, operations: dataset.n,
            notes: [
                "color == 1 without an index: \(dataset.colorOneCount) of \(dataset.n) records; ops = records scanned"
            ]
        ) { run in
            let store = try await shared.get()
            let found = try await run.measure { try await store.fetchAll(color: 1) }
            try expect(
                found.count == dataset.colorOneCount,
                "scan-filter found \(found.count), expected \(dataset.colorOneCount)")
            try expect(found.allSatisfy { $0.color == 1 }, "scan-filter returned a record of another color")
        }
        w.tearDown = shared.close
        return w
    }

    /// scan-filter's question answered by decoding every record through `Codable` and
    /// filtering in Swift (GRDB: `fetchAll` then `filter`): the row Folio's scan-filter is
    /// compared with.
    func scanDecodeFilter(_ dataset: CrudDataset) -> Workload {
        let shared = openShared(dataset)
        var w = workload(
            "scan-decode-filter", n: dataset.n, operations: dataset.n,
            notes: [
                "every record fetched and decoded through Codable, color == 1 kept by a Swift filter; ops = records decoded"
            ]
        ) { run in
            let store = try await shared.get()
            let found = try await run.measure { try await store.fetchEveryDecodedRecord(whereColorIs: 1) }
            try expect(
                found.count == dataset.colorOneCount,
                "scan-decode-filter found \(found.count), expected \(dataset.colorOneCount)")
        }
        w.tearDown = shared.close
        return w
    }

    /// Single loads by id in a random order, each a read on its own: all n records, or the
    /// first `limit` ids of that random order (the scale suite caps loads per run).
    func getByID(_ dataset: CrudDataset, limit: Int? = nil) -> Workload {
        let shared = openShared(dataset)
        let ids = Array(dataset.shuffledIDs(seed: 7).prefix(limit ?? dataset.n))
        let what = ids.count == dataset.n ? "n loads" : "\(Format.grouped(ids.count)) loads (random ids out of all n)"
        var w = workload(
            "get-by-id", n: dataset.n, operations: ids.count,
            notes: ["\(what) by primary key in a random order, one read each"]
        ) { run in
            let store = try await shared.get()
            let (found, checksum) = try await run.measure { () throws -> (Int, Int) in
                var found = 0, checksum = 0
                for id in ids {
                    if let record = try await store.fetch(id: id) {
                        found += 1
                        checksum &+= record.priority &+ record.text.utf8.count
                    }
                }
                return (found, checksum)
            }
            try expect(found == ids.count, "get-by-id found \(found) of \(ids.count)")
            Sink.consume(checksum)
        }
        w.tearDown = shared.close
        return w
    }

    /// Folio only: point reads of a working set that fits the record cache. 1,000 random ids
    /// read 10 times each in a random order (10,000 reads, each a read on its own) with the
    /// record cache on (default limits, warmed by one untimed pass), then the same reads with
    /// it off, in the same run, as a part of the row: the hot-read target of
    /// Docs/Benchmarks.md (cache on at least 5× faster).
    func getHot(_ dataset: CrudDataset) -> Workload? {
        guard system is FolioCrudSystem.Type else { return nil }
        let fixtures = fixtures, durability = durability
        let workingSet = Array(dataset.shuffledIDs(seed: 11).prefix(min(1_000, dataset.n)))
        var rng = SplitMix64(seed: 12)
        var reads: [Int64] = []
        for _ in 0..<10 { reads += workingSet.shuffled(using: &rng) }
        let readsToo = reads
        let offName =
            "the same \(Format.grouped(reads.count)) reads with the record cache off (same run, after the timed part)"
        return workload(
            "get-hot", n: dataset.n, operations: reads.count,
            notes: [
                "\(Format.grouped(workingSet.count)) ids read 10 times each in a random order, one read each, record cache on (default limits, warmed by one untimed pass)"
            ]
        ) { run in
            let directory = try await fixtures.directory(FolioCrudSystem.self, dataset)
            func readAll(_ store: FolioCrudSystem) async throws -> Int {
                var checksum = 0
                for id in readsToo {
                    guard let record = try await store.fetch(id: id) else {
                        throw BenchError.wrongResult("get-hot: record \(id) missing")
                    }
                    checksum &+= record.priority
                }
                return checksum
            }
            let cached = try await FolioCrudSystem.open(directory: directory, durability: durability, recordCache: true)
            for id in workingSet { _ = try await cached.fetch(id: id) }
            let checksum = try await run.measure { try await readAll(cached) }
            try await cached.close()
            let uncached = try await FolioCrudSystem.open(
                directory: directory, durability: durability, recordCache: false)
            let start = DispatchTime.now().uptimeNanoseconds
            let uncachedChecksum = try await readAll(uncached)
            run.recordPart(offName, seconds: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            try await uncached.close()
            try expect(checksum == uncachedChecksum, "get-hot: the cached and uncached reads differ")
        }
    }

    /// The records of a tenth of the priority range, through the secondary index.
    func rangeIndex(_ dataset: CrudDataset) -> Workload {
        let shared = openShared(dataset)
        let range = dataset.priorityRange
        var w = workload(
            "range-index", n: dataset.n, operations: dataset.priorityRangeCount,
            notes: [
                "priority in \(range.lowerBound)..<\(range.upperBound) through the index: \(dataset.priorityRangeCount) records; ops = records returned"
            ]
        ) { run in
            let store = try await shared.get()
            if let note = try await store.rangeQueryNote(), !run.notes.contains(note) { run.notes.append(note) }
            let found = try await run.measure { try await store.fetchAll(priorityIn: range) }
            try expect(
                found.count == dataset.priorityRangeCount,
                "range-index found \(found.count), expected \(dataset.priorityRangeCount)")
            try expect(
                found.allSatisfy { range.contains($0.priority) }, "range-index returned a record outside the range")
        }
        w.tearDown = shared.close
        return w
    }

    /// n updates in a random order, one transaction each, on a fresh copy of the fixture.
    func updateIndividual(_ dataset: CrudDataset) -> Workload {
        let system = system, scratch = scratch, durability = durability, fixtures = fixtures
        let updated = dataset.shuffledIDs(seed: 11).map { id -> CrudRecord in
            var record = dataset.records[Int(id) - 1]
            record.title = "updated-\(id)"
            record.tag = "tag-updated"
            return record
        }
        return workload(
            "update-individual", n: dataset.n, operations: dataset.n,
            notes: ["title and tag changed, one transaction per record; bytes on disk after closing the store"]
        ) { run in
            let path = try scratch.copy(
                try await fixtures.directory(system, dataset), label: "\(system.systemName)-update")
            defer { scratch.remove(path) }
            let store = try await system.open(directory: path, durability: durability)
            try await run.measure { for record in updated { try await store.update(record) } }
            try expect(try await store.fetch(id: updated[0].id) == updated[0], "update-individual: record not updated")
            try await store.close()
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
        }
    }

    /// n updates in a random order, one transaction each, that also change the indexed field
    /// (`priority`): each commit removes an index entry and adds one besides the record.
    func updateIndexedIndividual(_ dataset: CrudDataset) -> Workload {
        let system = system, scratch = scratch, durability = durability, fixtures = fixtures
        let updated = dataset.shuffledIDs(seed: 13).map { id -> CrudRecord in
            var record = dataset.records[Int(id) - 1]
            record.title = "updated-indexed-\(id)"
            record.priority = (record.priority + 37) % max(dataset.n, 1)
            return record
        }
        return workload(
            "update-indexed-individual", n: dataset.n, operations: dataset.n,
            notes: ["title and the indexed priority changed, one transaction per record; bytes on disk after closing"]
        ) { run in
            let path = try scratch.copy(
                try await fixtures.directory(system, dataset), label: "\(system.systemName)-update-indexed")
            defer { scratch.remove(path) }
            let store = try await system.open(directory: path, durability: durability)
            try await run.measure { for record in updated { try await store.update(record) } }
            try expect(
                try await store.fetch(id: updated[0].id) == updated[0], "update-indexed-individual: record not updated")
            let moved = try await store.fetchAll(priorityIn: updated[0].priority..<(updated[0].priority + 1))
            try expect(
                moved.contains(updated[0]), "update-indexed-individual: the index does not find the new priority")
            try await store.close()
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
        }
    }

    /// 4 concurrent tasks updating records one transaction each (n in all, every task a
    /// quarter of them), on a fresh copy of the fixture: the workload group commit is for.
    /// Each task's update returns only when durable, as in update-individual.
    func mtUpdateIndividual(_ dataset: CrudDataset) -> Workload {
        let system = system, scratch = scratch, durability = durability, fixtures = fixtures
        let writers = context.sizes.concurrentWriters
        let updated = dataset.shuffledIDs(seed: 12).map { id -> CrudRecord in
            var record = dataset.records[Int(id) - 1]
            record.title = "updated-mt-\(id)"
            return record
        }
        let slices = (0..<writers).map { writer in
            stride(from: writer, to: updated.count, by: writers).map { updated[$0] }
        }
        return workload(
            "mt-update-individual", n: dataset.n, operations: dataset.n,
            notes: [
                "\(writers) concurrent tasks, n updates in all, one transaction per record; bytes on disk after closing the store"
            ]
        ) { run in
            let path = try scratch.copy(
                try await fixtures.directory(system, dataset), label: "\(system.systemName)-mt-update")
            defer { scratch.remove(path) }
            let store = try await system.open(directory: path, durability: durability)
            try await run.measure {
                try await runConcurrently(writers) { writer in
                    for record in slices[writer] { try await store.update(record) }
                }
            }
            if let note = try await store.commitSyncNote(commits: dataset.n) { run.notes.append(note) }
            try expect(
                try await store.fetch(id: updated[0].id) == updated[0], "mt-update-individual: record not updated")
            try await store.close()
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
        }
    }

    /// Every record deleted by id in one transaction, on a fresh copy of the fixture.
    func deleteBatch(_ dataset: CrudDataset) -> Workload {
        let system = system, scratch = scratch, durability = durability, fixtures = fixtures
        let ids = dataset.records.map(\.id)
        return workload(
            "delete-batch", n: dataset.n, operations: dataset.n,
            notes: ["all n deleted by id, in id order, one transaction; bytes on disk after closing the store"]
        ) { run in
            let path = try scratch.copy(
                try await fixtures.directory(system, dataset), label: "\(system.systemName)-delete")
            defer { scratch.remove(path) }
            let store = try await system.open(directory: path, durability: durability)
            try await run.measure { try await store.delete(ids: ids) }
            try expect(try await store.fetch(id: ids[ids.count / 2]) == nil, "delete-batch: a record survived")
            try await store.close()
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
        }
    }

    /// Opening the fixture in a fresh process and loading one record (timed in the child).
    func openCold(_ dataset: CrudDataset) -> Workload {
        let system = system, durability = durability, fixtures = fixtures
        let record = dataset.records[dataset.n / 2]
        return workload(
            "open-cold", n: dataset.n, operations: 1,
            notes: [
                "fresh process; timed inside it from before opening to after loading one record; the OS file cache is warm"
            ]
        ) { run in
            let path = try await fixtures.directory(system, dataset)
            let report = try await ChildProcess.run([
                "crud-open", "--system", system.systemName, "--dir", path,
                "--id", String(record.id), "--durability", durability.rawValue,
            ])
            try expect(report.checksum == record.priority, "open-cold read the wrong record")
            run.recordChild(report)
        }
    }

    /// Writer w's n records of `dataset` (records w·n up to (w+1)·n), in transactions of
    /// `batch`: what each task of mt-insert and mt-insert-disjoint inserts.
    static func writerSlices(_ dataset: CrudDataset, writers: Int, n: Int, batch: Int) -> [[[CrudRecord]]] {
        (0..<writers).map { writer in
            stride(from: writer * n, to: (writer + 1) * n, by: batch).map { start in
                Array(dataset.records[start..<min(start + batch, (writer + 1) * n)])
            }
        }
    }

    /// 4 concurrent tasks, each inserting its own n records in transactions of 100, into an
    /// empty store (a new one each run).
    func mtInsert(n: Int) -> Workload {
        let system = system, scratch = scratch, durability = durability
        let writers = context.sizes.concurrentWriters, batch = context.sizes.concurrentBatch
        let dataset = context.datasets.dataset(n * writers)
        let slices = Self.writerSlices(dataset, writers: writers, n: n, batch: batch)
        return workload(
            "mt-insert", n: n, operations: n * writers,
            notes: [
                "\(writers) concurrent tasks x \(n) records, transactions of \(batch); bytes on disk after closing the store"
            ]
        ) { run in
            let path = try scratch.makeDirectory("\(system.systemName)-mt")
            defer { scratch.remove(path) }
            let store = try await system.open(directory: path, durability: durability)
            try await run.measure {
                try await runConcurrently(writers) { writer in
                    for records in slices[writer] { try await store.insert(records) }
                }
            }
            for writer in 0..<writers {
                let last = dataset.records[(writer + 1) * n - 1]
                try expect(
                    try await store.fetch(id: last.id) == last, "mt-insert: writer \(writer)'s last record missing")
            }
            try await store.close()
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
        }
    }

    /// mt-insert's work with every task writing a collection of its own (a Folio datastore,
    /// a GRDB table): the writers touch nothing in common, so a store whose writers do not
    /// wait for each other runs them at once.
    func mtInsertDisjoint(n: Int) -> Workload {
        let system = system, scratch = scratch, durability = durability
        let writers = context.sizes.concurrentWriters, batch = context.sizes.concurrentBatch
        let dataset = context.datasets.dataset(n * writers)
        let slices = Self.writerSlices(dataset, writers: writers, n: n, batch: batch)
        return workload(
            "mt-insert-disjoint", n: n, operations: n * writers,
            notes: [
                "\(writers) concurrent tasks x \(n) records, each into its own datastore/table, transactions of \(batch)"
            ]
        ) { run in
            let path = try scratch.makeDirectory("\(system.systemName)-mt-disjoint")
            defer { scratch.remove(path) }
            let store = try await system.open(directory: path, durability: durability)
            // Each partition's collection is created before the clock starts, as the main one is.
            for writer in 0..<writers { _ = try await store.fetch(id: 0, fromPartition: writer) }
            try await run.measure {
                try await runConcurrently(writers) { writer in
                    for records in slices[writer] { try await store.insert(records, intoPartition: writer) }
                }
            }
            for writer in 0..<writers {
                let last = dataset.records[(writer + 1) * n - 1]
                try expect(
                    try await store.fetch(id: last.id, fromPartition: writer) == last,
                    "mt-insert-disjoint: writer \(writer)'s last record missing")
            }
            try await store.close()
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
        }
    }

    // MARK: Queries: the same questions through each system's query API

    /// `scan-filter`'s question (color == 1, no index) through the query API: Folio
    /// `fetch(where: #Predicate { $0.color == 1 }).collect()`, GRDB
    /// `filter(Column("color") == 1).fetchAll(db)`.
    func queryScan(_ dataset: CrudDataset) -> Workload {
        let shared = openShared(dataset)
        let expected = Set(dataset.records.lazy.filter { $0.color == 1 }.map(\.id))
        var w = workload(
            "query-scan", n: dataset.n, operations: dataset.n,
            notes: [
                "color == 1 through the query API, no index: \(dataset.colorOneCount) of \(dataset.n) records; ops = records scanned"
            ]
        ) { run in
            let store = try await shared.get()
            let note = try await store.queryPlanNote(.color(1))
            if !run.notes.contains(note) { run.notes.append(note) }
            let found = try await run.measure { try await store.query(color: 1) }
            try expect(
                found.count == dataset.colorOneCount,
                "query-scan found \(found.count), expected \(dataset.colorOneCount)")
            try expect(
                found.allSatisfy { $0.color == 1 && $0 == dataset.records[Int($0.id) - 1] },
                "query-scan returned a wrong record")
            try expect(Set(found.map(\.id)) == expected, "query-scan returned the wrong set of records")
        }
        w.tearDown = shared.close
        return w
    }

    /// `range-index`'s question (priority in the same tenth of its range) through the query
    /// API: `priority >= lo && priority < hi`, which the planner (Folio) or SQLite (GRDB)
    /// answers through the priority index; the plan is in the row's notes.
    func queryIndexed(_ dataset: CrudDataset) -> Workload {
        let shared = openShared(dataset)
        let range = dataset.priorityRange
        let lower = range.lowerBound, upper = range.upperBound
        var w = workload(
            "query-indexed", n: dataset.n, operations: dataset.priorityRangeCount,
            notes: [
                "\(lower) <= priority < \(upper) through the query API (Folio: (lo..<hi).contains($0.priority); GRDB: priority >= lo && priority < hi): \(dataset.priorityRangeCount) records; ops = records returned"
            ]
        ) { run in
            let store = try await shared.get()
            for query in [CrudQuery.priorityRange(lower, upper), .priorityConjunction(lower, upper)] {
                let note = try await store.queryPlanNote(query)
                if !run.notes.contains(note) { run.notes.append(note) }
            }
            let found = try await run.measure { try await store.query(priorityFrom: lower, below: upper) }
            try expect(
                found.count == dataset.priorityRangeCount,
                "query-indexed found \(found.count), expected \(dataset.priorityRangeCount)")
            try expect(
                found.allSatisfy { range.contains($0.priority) && $0 == dataset.records[Int($0.id) - 1] },
                "query-indexed returned a wrong record")
        }
        w.tearDown = shared.close
        return w
    }

    /// n lookups by an id predicate (first match) in get-by-id's random order, each a read on
    /// its own. In the same run, after the timed part, the same ids are loaded with
    /// `fetch(id:)` (get-by-id's call: Folio `load(id)`, GRDB `fetchOne(db, key:)`), timed
    /// on their own: the notes give both, so the query path's overhead over a plain load is
    /// measured on the same store, in the same run.
    func pointQuery(_ dataset: CrudDataset) -> Workload {
        let shared = openShared(dataset)
        let ids = dataset.shuffledIDs(seed: 7)
        let baselineName =
            "baseline: the same \(Format.grouped(ids.count)) ids by fetch(id:) (Folio load(id), GRDB fetchOne(key:)), same run, after the timed part"
        var w = workload(
            "point-query", n: dataset.n, operations: ids.count,
            notes: [
                "n lookups through the query API by id predicate (Folio first(where: #Predicate { $0.id == id }), GRDB filter(Column(\"id\") == id).fetchOne(db)), random order, one read each"
            ]
        ) { run in
            let store = try await shared.get()
            let note = try await store.queryPlanNote(.id(ids[0]))
            if !run.notes.contains(note) { run.notes.append(note) }
            let (found, checksum) = try await run.measure { () throws -> (Int, Int) in
                var found = 0, checksum = 0
                for id in ids {
                    if let record = try await store.queryFirst(id: id) {
                        found += 1
                        checksum &+= record.priority &+ record.text.utf8.count
                    }
                }
                return (found, checksum)
            }
            try expect(found == ids.count, "point-query found \(found) of \(ids.count)")
            let start = DispatchTime.now().uptimeNanoseconds
            var baselineFound = 0, baselineChecksum = 0
            for id in ids {
                if let record = try await store.fetch(id: id) {
                    baselineFound += 1
                    baselineChecksum &+= record.priority &+ record.text.utf8.count
                }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            try expect(
                baselineFound == ids.count && baselineChecksum == checksum,
                "point-query's baseline loads differ from its queries")
            run.recordPart(baselineName, seconds: seconds)
            Sink.consume(checksum)
        }
        w.tearDown = shared.close
        return w
    }

    /// Every record's tag changed by one predicate call selecting all n (`priority >= 0`),
    /// one transaction, on a fresh copy of the fixture: Folio `update(where:)`, GRDB
    /// `filter(...).updateAll(db, Column("tag").set(to:))`.
    func updateWhere(_ dataset: CrudDataset) -> Workload {
        let system = system, scratch = scratch, durability = durability, fixtures = fixtures
        let tag = "tag-where"
        let probes = [0, dataset.n / 2, dataset.n - 1].map { index -> CrudRecord in
            var record = dataset.records[index]
            record.tag = tag
            return record
        }
        return workload(
            "update-where", n: dataset.n, operations: dataset.n,
            notes: [
                "tag set on every record matching priority >= 0 (all n), one call, one transaction; bytes on disk after closing the store"
            ]
        ) { run in
            let path = try scratch.copy(
                try await fixtures.directory(system, dataset), label: "\(system.systemName)-update-where")
            defer { scratch.remove(path) }
            let store = try await system.open(directory: path, durability: durability)
            let note = try await store.queryPlanNote(.priorityAtLeast(0))
            if !run.notes.contains(note) { run.notes.append(note) }
            let changed = try await run.measure { try await store.updateWhere(priorityAtLeast: 0, tag: tag) }
            try expect(changed == dataset.n, "update-where changed \(changed), expected \(dataset.n)")
            for probe in probes {
                try expect(
                    try await store.fetch(id: probe.id) == probe,
                    "update-where: record \(probe.id) not updated as expected")
            }
            let untouched = try await store.query(color: 1)
            try expect(
                untouched.count == dataset.colorOneCount && untouched.allSatisfy { $0.tag == tag },
                "update-where: a record kept its old tag")
            try await store.close()
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
        }
    }

    /// Every record deleted by one predicate call selecting all n (`priority >= 0`), one
    /// transaction, on a fresh copy of the fixture: Folio `delete(where:)`, GRDB
    /// `filter(...).deleteAll(db)`.
    func deleteWhere(_ dataset: CrudDataset) -> Workload {
        let system = system, scratch = scratch, durability = durability, fixtures = fixtures
        let probes = [0, dataset.n / 2, dataset.n - 1].map { dataset.records[$0].id }
        return workload(
            "delete-where", n: dataset.n, operations: dataset.n,
            notes: [
                "every record matching priority >= 0 (all n) deleted, one call, one transaction; bytes on disk after closing the store"
            ]
        ) { run in
            let path = try scratch.copy(
                try await fixtures.directory(system, dataset), label: "\(system.systemName)-delete-where")
            defer { scratch.remove(path) }
            let store = try await system.open(directory: path, durability: durability)
            let note = try await store.queryPlanNote(.priorityAtLeast(0))
            if !run.notes.contains(note) { run.notes.append(note) }
            let deleted = try await run.measure { try await store.deleteWhere(priorityAtLeast: 0) }
            try expect(deleted == dataset.n, "delete-where deleted \(deleted), expected \(dataset.n)")
            for id in probes { try expect(try await store.fetch(id: id) == nil, "delete-where: record \(id) survived") }
            try expect(try await store.query(priorityFrom: 0, below: Int.max).isEmpty, "delete-where: records survived")
            try await store.close()
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
        }
    }
}
