import Foundation
import FolioStorage
import Folio

/// The `engine` suite: the FolioStorage engine alone (byte keys and values, no Codable),
/// and the floors it cannot beat on this machine (raw commits of several shapes, Foundation's
/// JSON).
enum EngineSuite {
    static let name = "engine"
    /// Workloads measured on the engine (system `folio`) and floors (system `floor`).
    static let engineWorkloads = [
        "put-random", "get-random", "open", "commit-latency",
        "json-encode", "json-decode", "json-encode-nested", "json-decode-nested",
    ]
    /// The commit floors (``CommitShape/all``), seconds per commit.
    static let commitFloorWorkloads = CommitShape.all.map(\.workload)
    static let floorWorkloads =
        commitFloorWorkloads + [
            "json-encode-floor", "json-decode-floor",
            "json-encode-nested", "json-decode-nested",
        ]

    static func run(_ context: BenchContext) async throws {
        let state = EngineState(context: context)
        defer { state.removeFixture() }
        try await context.measure(state.putRandom())
        try await context.measure(state.getRandom())
        try await context.measure(state.open())
        // Interleaved, so all see the same disk: fsync latency here moves by 10x with what
        // other processes write.
        try await context.measureInterleaved([state.commitLatency()] + CommitShape.all.map(state.commitFloor))
        let dataset = context.datasets.dataset(context.sizes.crudN)
        try await context.measure(state.jsonEncodeFloor(dataset))
        try await context.measure(state.jsonDecodeFloor(dataset))
        // Folio's own coder (FolioJSON) on the same records, and both coders on a larger
        // nested record: system `folio` beside `floor` (Foundation) in each pair.
        try await context.measure(state.folioEncode(dataset))
        try await context.measure(state.folioDecode(dataset))
        let nested = (0..<Int64(max(1, context.sizes.crudN / 5))).map(NestedRecord.make)
        for folio in [false, true] {
            try await context.measure(state.nestedEncode(nested, folio: folio))
            try await context.measure(state.nestedDecode(nested, folio: folio))
        }
    }
}

/// The engine suite's workloads and the store they share: the first put-random run's store
/// is kept (closed) for get-random and open.
final class EngineState {
    private let context: BenchContext
    private var fixture: String?

    init(context: BenchContext) { self.context = context }

    private var n: Int { context.sizes.engineKeys }
    private var durability: BenchDurability { context.durability }

    private func options(cacheCapacity: Int = StoreOptions().cacheCapacity) -> StoreOptions {
        StoreOptions(durability: durability.engine, cacheCapacity: cacheCapacity)
    }

    func removeFixture() {
        if let fixture { context.scratch.remove(fixture) }
        fixture = nil
    }

    /// A closed store holding keys 0..<n (built by put-random's first run, or here).
    private func fixtureDirectory() throws -> String {
        if let fixture { return fixture }
        let path = try context.scratch.makeDirectory("engine-fixture")
        let store = try Store.open(at: path, options: options())
        try insertAll(store)
        store.close()
        fixture = path
        return path
    }

    private func insertAll(_ store: Store) throws {
        let n = n, batch = context.sizes.engineTransactionSize
        var start = 0
        while start < n {
            let end = min(start + batch, n)
            try store.write { txn in
                for i in start..<end { try txn.put(EngineData.value(i), for: EngineData.key(i), in: EngineData.tree) }
            }
            start = end
        }
    }

    /// n random 16-byte keys with 100-byte values, in transactions of 10,000, into an
    /// empty store.
    func putRandom() -> Workload {
        let n = n, batch = context.sizes.engineTransactionSize, scratch = context.scratch
        let groupedNote =
            durability == .grouped
            ? "; grouped: timed until the last commit returned, the final flush is not timed" : ""
        return Workload(
            suite: EngineSuite.name, name: "put-random", system: "folio", n: n, durability: .flag(durability),
            operations: n,
            notes: [
                "\(EngineData.keyLength)-byte random keys, \(EngineData.valueLength)-byte values, transactions of \(Format.grouped(batch)); default options (8 MiB cache, auto-compaction on); bytes on disk after closing\(groupedNote)"
            ]
        ) { [self] run in
            let path = try scratch.makeDirectory("engine-put")
            let store = try Store.open(at: path, options: options())
            try await run.measure { try insertAll(store) }
            let count = try store.read().count(in: EngineData.tree)
            try expect(count == UInt64(n), "put-random: \(count) keys stored, expected \(n)")
            let live = try store.statistics().liveBytes
            store.close()
            let onDisk = Scratch.bytesOnDisk(path)
            run.notes.removeAll { $0.hasPrefix("after the last run: live bytes") }
            run.notes.append(
                "after the last run: live bytes \(Format.bytes(Int64(live))); files on disk \((Double(onDisk) / Double(max(live, 1)) * 100).rounded() / 100)x the live bytes"
            )
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
            if let note = EngineState.snapshotNote(path), !run.notes.contains(note) { run.notes.append(note) }
            if fixture == nil { fixture = path } else { scratch.remove(path) }
        }
    }

    /// How the bytes on disk split between the current snapshot file and older ones that the
    /// engine keeps for its retention grace period (readers in other processes may still
    /// open them), per the layout of Docs/Format.md: `snapshots/<number>.folio`.
    static func snapshotNote(_ path: String) -> String? {
        let directory = path + "/snapshots"
        guard
            let names = try? FileManager.default.contentsOfDirectory(atPath: directory).filter({
                $0.hasSuffix(".folio")
            }).sorted(),
            let newest = names.last
        else { return nil }
        let size = { (name: String) -> Int64 in
            ((try? FileManager.default.attributesOfItem(atPath: directory + "/" + name))?[.size] as? NSNumber)?
                .int64Value ?? 0
        }
        let older = names.dropLast().reduce(Int64(0)) { $0 + size($1) }
        return
            "after the last run: current snapshot file \(Format.bytes(size(newest))), \(names.count - 1) older snapshot files kept by the retention grace period \(Format.bytes(older))"
    }

    /// n gets in a random order on a store whose cache holds every page, warmed first.
    func getRandom() -> Workload {
        let n = n
        let order = shuffledIndices(n, seed: 3)
        var store: Store?
        var notes: [String] = []
        var workload = Workload(
            suite: EngineSuite.name, name: "get-random", system: "folio", n: n, durability: .flag(durability),
            operations: n,
            notes: []
        ) { [self] run in
            if store == nil {
                let path = try fixtureDirectory()
                // 1 KiB per key: several times the live data (116 bytes a key), so every
                // decoded page fits; the page-read count below proves it.
                let capacity = max(64 << 20, n * 1024)
                let opened = try Store.open(at: path, options: options(cacheCapacity: capacity))
                var cursor = try opened.read().cursor(in: EngineData.tree)
                var warmed = 0
                while let entry = try cursor.next() { warmed &+= entry.value.count }
                Sink.consume(warmed)
                notes.append(
                    "warm cache: store opened with cacheCapacity \(Format.bytes(Int64(capacity))) (1 KiB per key), warmed by a full cursor scan; a read view per get"
                )
                store = opened
            }
            guard let store else { return }
            let before = store.ioStatistics
            let (found, checksum) = try await run.measure { () throws -> (Int, Int) in
                var found = 0, checksum = 0
                for i in order {
                    if let value = try store.read().get(EngineData.key(i), in: EngineData.tree) {
                        found += 1
                        checksum &+= Int(value[0]) &+ value.count
                    }
                }
                return (found, checksum)
            }
            let pagesRead = store.ioStatistics.since(before).pagesRead
            try expect(found == n, "get-random found \(found) of \(n)")
            Sink.consume(checksum)
            for note in notes + ["pages read from disk during the timed part: \(pagesRead)"]
            where !run.notes.contains(note) {
                run.notes.append(note)
            }
        }
        workload.tearDown = {
            store?.close(); store = nil
        }
        return workload
    }

    /// `Store.open` of the n-key store and one get, in a fresh process.
    func open() -> Workload {
        let n = n, durability = durability
        let index = n / 2
        let expected = EngineData.value(index).reduce(0) { $0 &+ Int($1) }
        return Workload(
            suite: EngineSuite.name, name: "open", system: "folio", n: n, durability: .flag(durability), operations: 1,
            notes: [
                "fresh process; timed inside it from before Store.open to after one get; default 8 MiB cache; the OS file cache is warm"
            ]
        ) { [self] run in
            let report = try await ChildProcess.run([
                "engine-open", "--dir", try fixtureDirectory(), "--key-index", String(index),
                "--durability", durability.rawValue,
            ])
            try expect(report.checksum == expected, "open read the wrong value")
            run.recordChild(report)
        }
    }

    /// One-key commits into a fresh store; seconds per commit.
    func commitLatency() -> Workload {
        let commits = context.sizes.commitCount, scratch = context.scratch
        let note =
            durability == .full
            ? "one put per transaction, each commit durable before it returns"
            : "one put per transaction; grouped: a commit returns before its fsync (10 ms window)"
        return Workload(
            suite: EngineSuite.name, name: "commit-latency", system: "folio", n: commits, durability: .flag(durability),
            operations: commits, secondsPerOperation: true, notes: ["\(note); \(commits) commits per run"]
        ) { [self] run in
            let path = try scratch.makeDirectory("engine-commit")
            defer { scratch.remove(path) }
            let store = try Store.open(at: path, options: options())
            var times = CommitTimes(capacity: commits)
            try await run.measure {
                for i in 0..<commits {
                    try times.time {
                        try store.write { txn in
                            try txn.put(EngineData.value(i), for: EngineData.key(i), in: EngineData.tree)
                        }
                    }
                }
            }
            times.record(in: run)
            try expect(try store.read().count(in: EngineData.tree) == UInt64(commits), "commit-latency lost a commit")
            store.close()
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
        }
    }

    /// A raw-POSIX commit floor (``CommitFloor``) of `shape`; seconds per commit.
    func commitFloor(_ shape: CommitShape) -> Workload {
        let commits = context.sizes.commitCount, scratch = context.scratch
        return Workload(
            suite: EngineSuite.name, name: shape.workload, system: "floor", n: commits, durability: .alwaysFull,
            operations: commits, secondsPerOperation: true, notes: shape.notes(commits: commits)
        ) { run in
            let path = try scratch.makeDirectory(shape.workload)
            defer { scratch.remove(path) }
            let floor = try CommitFloor(shape: shape, directory: path, commits: commits)
            var times = CommitTimes(capacity: commits)
            try await run.measure { for i in 0..<commits { try times.time { try floor.commit(i) } } }
            times.record(in: run)
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
        }
    }

    /// `JSONEncoder` alone on the crud records, one record per call.
    func jsonEncodeFloor(_ dataset: CrudDataset) -> Workload {
        Workload(
            suite: EngineSuite.name, name: "json-encode-floor", system: "floor", n: dataset.n,
            durability: .notApplicable,
            operations: dataset.n,
            notes: ["Foundation JSONEncoder (default settings), one encode per crud record, no store"]
        ) { run in
            let encoder = JSONEncoder()
            let blobs = try await run.measure { try JSONFloor.encodeAll(dataset.records, with: encoder) }
            try expect(blobs.count == dataset.n, "json-encode-floor encoded \(blobs.count)")
            Sink.consume(blobs.reduce(0) { $0 &+ $1.count })
        }
    }

    /// `JSONDecoder` alone on the crud records, one record per call.
    func jsonDecodeFloor(_ dataset: CrudDataset) -> Workload {
        let blobs = (try? JSONFloor.encodeAll(dataset.records, with: JSONEncoder())) ?? []
        let expected = dataset.records.reduce(0) { $0 &+ Int($1.id) &+ $1.priority }
        return Workload(
            suite: EngineSuite.name, name: "json-decode-floor", system: "floor", n: dataset.n,
            durability: .notApplicable,
            operations: dataset.n,
            notes: ["Foundation JSONDecoder (default settings), one decode per crud record, no store"]
        ) { run in
            let decoder = JSONDecoder()
            let checksum = try await run.measure { try JSONFloor.decodeAll(blobs, with: decoder) }
            try expect(checksum == expected, "json-decode-floor decoded wrong records")
        }
    }

    /// `FolioJSONEncoder` alone on the crud records: json-encode-floor's work with Folio's coder.
    func folioEncode(_ dataset: CrudDataset) -> Workload {
        Workload(
            suite: EngineSuite.name, name: "json-encode", system: "folio", n: dataset.n, durability: .notApplicable,
            operations: dataset.n,
            notes: [
                "FolioJSONEncoder (default strategies), one encode per crud record, no store; compare json-encode-floor"
            ]
        ) { run in
            let encoder = FolioJSONEncoder()
            let blobs = try await run.measure { try JSONFloor.encodeAll(dataset.records, with: encoder) }
            try expect(
                try blobs.map { try JSONDecoder().decode(CrudRecord.self, from: Data($0)) } == dataset.records,
                "json-encode: Foundation does not read back what Folio's encoder wrote")
            Sink.consume(blobs.reduce(0) { $0 &+ $1.count })
        }
    }

    /// `FolioJSONDecoder` alone on what Foundation's encoder wrote: json-decode-floor's work
    /// with Folio's coder.
    func folioDecode(_ dataset: CrudDataset) -> Workload {
        let blobs = ((try? JSONFloor.encodeAll(dataset.records, with: JSONEncoder())) ?? []).map { [UInt8]($0) }
        let expected = dataset.records.reduce(0) { $0 &+ Int($1.id) &+ $1.priority }
        return Workload(
            suite: EngineSuite.name, name: "json-decode", system: "folio", n: dataset.n, durability: .notApplicable,
            operations: dataset.n,
            notes: [
                "FolioJSONDecoder (default strategies), one decode per crud record as Foundation encoded it, no store; compare json-decode-floor"
            ]
        ) { run in
            let decoder = FolioJSONDecoder()
            let checksum = try await run.measure { try JSONFloor.decodeAll(blobs, with: decoder) }
            try expect(checksum == expected, "json-decode decoded wrong records")
        }
    }

    /// One coder encoding the nested records (`folio`: FolioJSONEncoder, `floor`: Foundation).
    func nestedEncode(_ records: [NestedRecord], folio: Bool) -> Workload {
        Workload(
            suite: EngineSuite.name, name: "json-encode-nested", system: folio ? "folio" : "floor", n: records.count,
            durability: .notApplicable, operations: records.count,
            notes: [
                "\(folio ? "FolioJSONEncoder" : "Foundation JSONEncoder") on an order record of 20 nested lines (about 3 KB of JSON), default strategies"
            ]
        ) { run in
            let bytes: Int
            if folio {
                let encoder = FolioJSONEncoder()
                bytes = try await run.measure { try JSONFloor.encodeAll(records, with: encoder) }.reduce(0) {
                    $0 &+ $1.count
                }
            } else {
                let encoder = JSONEncoder()
                bytes = try await run.measure { try JSONFloor.encodeAll(records, with: encoder) }.reduce(0) {
                    $0 &+ $1.count
                }
            }
            if !run.notes.contains(where: { $0.hasPrefix("bytes per record") }) {
                run.notes.append("bytes per record: \(bytes / max(1, records.count))")
            }
        }
    }

    /// One coder decoding the nested records as Foundation encoded them.
    func nestedDecode(_ records: [NestedRecord], folio: Bool) -> Workload {
        let blobs = (try? JSONFloor.encodeAll(records, with: JSONEncoder())) ?? []
        let expected = JSONFloor.decodeNested(records) { $0 }
        return Workload(
            suite: EngineSuite.name, name: "json-decode-nested", system: folio ? "folio" : "floor", n: records.count,
            durability: .notApplicable, operations: records.count,
            notes: [
                "\(folio ? "FolioJSONDecoder" : "Foundation JSONDecoder") on an order record of 20 nested lines (about 3 KB of JSON), default strategies"
            ]
        ) { run in
            let checksum: Int
            if folio {
                let decoder = FolioJSONDecoder()
                let bytes = blobs.map { [UInt8]($0) }
                checksum = try await run.measure {
                    try JSONFloor.decodeNested(bytes) { try decoder.decode(NestedRecord.self, from: $0) }
                }
            } else {
                let decoder = JSONDecoder()
                checksum = try await run.measure {
                    try JSONFloor.decodeNested(blobs) { try decoder.decode(NestedRecord.self, from: $0) }
                }
            }
            try expect(checksum == expected, "json-decode-nested decoded wrong records")
        }
    }
}
