/// The workloads of the `crud` suite for one system, also used by `scale` (insert-batch
/// and get-by-id at several sizes). Each builds a ``Workload`` whose run does its set-up
/// untimed, times only the operations the workload names, and checks their result.
struct CrudWorkloads {
    /// The crud suite's workload names, in report order.
    static let names = ["insert-batch", "scan-filter", "get-by-id", "range-index",
                        "update-individual", "delete-batch", "open-cold", "mt-insert", "mt-update-individual"]

    let context: BenchContext
    let fixtures: CrudFixtures
    let system: any CrudSystem.Type
    let suite: String

    private var durability: BenchDurability { context.durability }
    private var scratch: Scratch { context.scratch }

    private func workload(_ name: String, n: Int, operations: Int, notes: [String] = [],
                          run: @escaping (RunContext) async throws -> Void) -> Workload {
        Workload(suite: suite, name: name, system: system.systemName, n: n, durability: .flag(durability),
                 operations: operations, notes: notes, run: run)
    }

    private func openShared(_ dataset: CrudDataset) -> OpenFixture {
        let system = system, fixtures = fixtures, durability = durability
        return OpenFixture { try await system.open(directory: try await fixtures.directory(system, dataset), durability: durability) }
    }

    /// n records inserted in one transaction into an empty store (a new one each run).
    func insertBatch(_ dataset: CrudDataset) -> Workload {
        let system = system, scratch = scratch, durability = durability, fixtures = fixtures
        return workload("insert-batch", n: dataset.n, operations: dataset.n,
                        notes: ["one transaction; bytes on disk after closing the store; the first run's store is the fixture of the read workloads"]) { run in
            let path = try scratch.makeDirectory("\(system.systemName)-insert")
            var kept = false
            defer { if !kept { scratch.remove(path) } }
            let store = try await system.open(directory: path, durability: durability)
            try await run.measure { try await store.insert(dataset.records) }
            guard let probe = try await store.fetch(id: Int64(dataset.n)) else { throw BenchError.wrongResult("last record missing after insert-batch") }
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
        var w = workload("scan-filter", n: dataset.n, operations: dataset.n,
                         notes: ["color == 1 without an index: \(dataset.colorOneCount) of \(dataset.n) records; ops = records scanned"]) { run in
            let store = try await shared.get()
            let found = try await run.measure { try await store.fetchAll(color: 1) }
            try expect(found.count == dataset.colorOneCount, "scan-filter found \(found.count), expected \(dataset.colorOneCount)")
            try expect(found.allSatisfy { $0.color == 1 }, "scan-filter returned a record of another color")
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
        var w = workload("get-by-id", n: dataset.n, operations: ids.count,
                         notes: ["\(what) by primary key in a random order, one read each"]) { run in
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

    /// The records of a tenth of the priority range, through the secondary index.
    func rangeIndex(_ dataset: CrudDataset) -> Workload {
        let shared = openShared(dataset)
        let range = dataset.priorityRange
        var w = workload("range-index", n: dataset.n, operations: dataset.priorityRangeCount,
                         notes: ["priority in \(range.lowerBound)..<\(range.upperBound) through the index: \(dataset.priorityRangeCount) records; ops = records returned"]) { run in
            let store = try await shared.get()
            if let note = try await store.rangeQueryNote(), !run.notes.contains(note) { run.notes.append(note) }
            let found = try await run.measure { try await store.fetchAll(priorityIn: range) }
            try expect(found.count == dataset.priorityRangeCount, "range-index found \(found.count), expected \(dataset.priorityRangeCount)")
            try expect(found.allSatisfy { range.contains($0.priority) }, "range-index returned a record outside the range")
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
        return workload("update-individual", n: dataset.n, operations: dataset.n,
                        notes: ["title and tag changed, one transaction per record; bytes on disk after closing the store"]) { run in
            let path = try scratch.copy(try await fixtures.directory(system, dataset), label: "\(system.systemName)-update")
            defer { scratch.remove(path) }
            let store = try await system.open(directory: path, durability: durability)
            try await run.measure { for record in updated { try await store.update(record) } }
            try expect(try await store.fetch(id: updated[0].id) == updated[0], "update-individual: record not updated")
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
        let slices = (0..<writers).map { writer in stride(from: writer, to: updated.count, by: writers).map { updated[$0] } }
        return workload("mt-update-individual", n: dataset.n, operations: dataset.n,
                        notes: ["\(writers) concurrent tasks, n updates in all, one transaction per record; bytes on disk after closing the store"]) { run in
            let path = try scratch.copy(try await fixtures.directory(system, dataset), label: "\(system.systemName)-mt-update")
            defer { scratch.remove(path) }
            let store = try await system.open(directory: path, durability: durability)
            try await run.measure {
                try await runConcurrently(writers) { writer in
                    for record in slices[writer] { try await store.update(record) }
                }
            }
            if let note = try await store.commitSyncNote(commits: dataset.n) { run.notes.append(note) }
            try expect(try await store.fetch(id: updated[0].id) == updated[0], "mt-update-individual: record not updated")
            try await store.close()
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
        }
    }

    /// Every record deleted by id in one transaction, on a fresh copy of the fixture.
    func deleteBatch(_ dataset: CrudDataset) -> Workload {
        let system = system, scratch = scratch, durability = durability, fixtures = fixtures
        let ids = dataset.records.map(\.id)
        return workload("delete-batch", n: dataset.n, operations: dataset.n,
                        notes: ["all n deleted by id, in id order, one transaction; bytes on disk after closing the store"]) { run in
            let path = try scratch.copy(try await fixtures.directory(system, dataset), label: "\(system.systemName)-delete")
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
        return workload("open-cold", n: dataset.n, operations: 1,
                        notes: ["fresh process; timed inside it from before opening to after loading one record; the OS file cache is warm"]) { run in
            let path = try await fixtures.directory(system, dataset)
            let report = try await ChildProcess.run(["crud-open", "--system", system.systemName, "--dir", path,
                                               "--id", String(record.id), "--durability", durability.rawValue])
            try expect(report.checksum == record.priority, "open-cold read the wrong record")
            run.recordChild(report)
        }
    }

    /// 4 concurrent tasks, each inserting its own n records in transactions of 100, into an
    /// empty store (a new one each run).
    func mtInsert(n: Int) -> Workload {
        let system = system, scratch = scratch, durability = durability
        let writers = context.sizes.concurrentWriters, batch = context.sizes.concurrentBatch
        let dataset = context.datasets.dataset(n * writers)
        let slices: [[[CrudRecord]]] = (0..<writers).map { writer in
            stride(from: writer * n, to: (writer + 1) * n, by: batch).map { start in
                Array(dataset.records[start..<min(start + batch, (writer + 1) * n)])
            }
        }
        return workload("mt-insert", n: n, operations: n * writers,
                        notes: ["\(writers) concurrent tasks x \(n) records, transactions of \(batch); bytes on disk after closing the store"]) { run in
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
                try expect(try await store.fetch(id: last.id) == last, "mt-insert: writer \(writer)'s last record missing")
            }
            try await store.close()
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
        }
    }
}
