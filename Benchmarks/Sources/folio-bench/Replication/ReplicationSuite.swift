import Foundation
@_spi(Engine) import Folio
import FolioStorage
import Synchronization

/// The `replication` suite: the crud suite's `update-individual` (n durable single-record
/// updates, title and tag, in a random order, on a fresh copy of the crud store of n
/// records) without replication and with it, interleaved (A B C A B C), so that their
/// ratio compares the same conditions. The replica is a directory on the same disk as the
/// store (the scratch directory), or in `--replica-dir` when given (another device), empty
/// at the start of each run; its first shipment (the whole store) is made before the timed
/// part.
///
/// Workloads:
/// - `update-individual`: no replication;
/// - `update-individual-replicated-watch`: a `Replicator` of the persistence's store
///   following it on a thread of the same process, woken only by its watch of the store's
///   directory (inotify);
/// - `update-individual-replicated`: `persistence.replicate(to:)` following in a task of
///   the same process (woken by the watch and by each commit of the persistence);
/// - `update-individual-replicated-process`: a separate process following the store with
///   a `Replicator` to a `DirectoryReplica`, as `folio replicate STORE DEST` does
///   (``ReplicationChild``).
///
/// The replicated rows also measure the replica's lag at each commit's acknowledgement
/// (when `persist` returned), over every run (``ReplicaLag``): how many generations the
/// replica's published root was behind the commit's, and the milliseconds from the
/// acknowledgement until the replica published a root at or past it (0 when it was
/// published before the acknowledgement). Every instant is `CLOCK_MONOTONIC`, one clock for
/// both processes. The replica is checked after each run: opened read-only, it is at the
/// writer's last generation and holds the last update.
enum ReplicationSuite {
    static let name = "replication"

    /// How the replica is kept.
    enum Mode: String, CaseIterable {
        case off = "update-individual"
        case watchOnly = "update-individual-replicated-watch"
        case inProcess = "update-individual-replicated"
        case process = "update-individual-replicated-process"
        case batched = "update-individual-replicated-10ms"
    }

    /// The batched row's minimum interval between shipments.
    static let batchingInterval = Duration.milliseconds(10)

    static let workloadNames = Mode.allCases.map(\.rawValue)

    /// How long a replica may take to catch up after the timed part, or to make its first
    /// shipment, before the run fails.
    static let catchUpSeconds = 60.0

    static func run(_ context: BenchContext) async throws {
        let n = context.sizes.crudN
        let dataset = context.datasets.dataset(n)
        let fixture = try context.scratch.makeDirectory("replication-fixture")
        do {
            let system = try await FolioCrudSystem.open(directory: fixture, durability: context.durability)
            try await system.insert(dataset.records)
            try await system.close()
        }
        let updated = dataset.shuffledIDs(seed: 11).map { id -> CrudRecord in
            var record = dataset.records[Int(id) - 1]
            record.title = "updated-\(id)"
            record.tag = "tag-updated"
            return record
        }
        let workloads = Mode.allCases.map { mode in
            let lag = ReplicaLag()
            let notes =
                switch mode {
                case .off: ["n updates, one durable transaction each, no replication"]
                case .watchOnly:
                    ["the same with a Replicator following on a thread of this process, woken by its directory watch"]
                case .inProcess: ["the same with persistence.replicate(to:) following, in this process"]
                case .batched:
                    [
                        "the same with persistence.replicate(to:minimumInterval: .milliseconds(10)) following, in this process"
                    ]
                case .process:
                    ["the same with a separate process following it (Replicator, DirectoryReplica: folio replicate)"]
                }
            return Workload(
                suite: Self.name, name: mode.rawValue, system: "folio", n: n, durability: .flag(context.durability),
                operations: n,
                notes: notes + (mode == .off ? [] : context.replicaScratch.map { ["replica under \($0.root)"] } ?? [])
            ) { run in
                try await measure(mode, run, context: context, fixture: fixture, updated: updated, lag: lag)
            }
        }
        try await context.measureInterleaved(workloads)
        context.scratch.remove(fixture)
    }

    /// One run of `mode`.
    private static func measure(
        _ mode: Mode, _ run: RunContext, context: BenchContext, fixture: String, updated: [CrudRecord],
        lag: ReplicaLag
    ) async throws {
        let path = try context.scratch.copy(fixture, label: "replication-source")
        let replicaScratch = context.replicaScratch ?? context.scratch
        let replica = try replicaScratch.makeDirectory("replication-replica")
        defer {
            context.scratch.remove(path)
            replicaScratch.remove(replica)
        }
        let system = try await FolioCrudSystem.open(directory: path, durability: context.durability)
        let persistence = system.persistence
        let shipments = ShipmentLog()
        var follower: Follower?
        switch mode {
        case .off:
            break
        case .inProcess, .batched:
            let interval = mode == .batched ? batchingInterval : .zero
            let task = Task {
                try await persistence.replicate(to: replica, minimumInterval: interval) { event in
                    if case .shipped(let report) = event { shipments.add(report.generation) }
                }
            }
            follower = .task(task)
        case .watchOnly:
            let store = persistence.store
            let replicator = store.replicator(to: store.replicaDirectory(replica))
            let task = Task { () async throws -> ReplicationReport in
                try await withCheckedThrowingContinuation { continuation in
                    let thread = Thread {
                        do {
                            try replicator.follow { event in
                                if case .shipped(let report) = event { shipments.add(report.generation) }
                            }
                            try replicator.close()
                            let generation = replicator.publishedGeneration ?? 0
                            continuation.resume(
                                returning: ReplicationReport(
                                    fromGeneration: nil, generation: generation, bytesShipped: 0, filesWritten: [],
                                    filesRemoved: []))
                        } catch {
                            continuation.resume(throwing: error)
                        }
                    }
                    thread.start()
                }
            }
            follower = .replicator(replicator, task)
        case .process:
            let child = try LineChild.launch([
                ReplicationChild.command, "--source", path, "--dest", replica, "--durability",
                context.durability.rawValue,
            ])
            follower = .process(child, ReplicationChild.LineReader(child: child, log: shipments))
        }
        do {
            // The first shipment (the whole store) is not timed.
            try await follower?.waitUntil(persistence.currentToken.generation, shipments)
            var acknowledged: [(generation: UInt64, nanoseconds: UInt64)] = []
            acknowledged.reserveCapacity(updated.count)
            let firstTimedShipment = shipments.count
            try await run.measure {
                for record in updated {
                    try await system.update(record)
                    acknowledged.append((persistence.currentToken.generation, MonotonicClock.nanoseconds()))
                }
            }
            let last = persistence.currentToken.generation
            try await follower?.waitUntil(last, shipments)
            try await follower?.stop()
            follower = nil
            try await system.close()
            run.bytesOnDisk = Scratch.bytesOnDisk(path)
            guard mode != .off else { return }
            try await checkReplica(replica, generation: last, record: updated[updated.count - 1])
            let shipped = shipments.entries
            lag.add(acknowledged, shipped, shipmentsDuringRun: shipped.count - firstTimedShipment)
            run.notes = lag.notes
        } catch {
            try? await follower?.stop()
            try? await system.close()
            throw error
        }
    }

    /// Opens the replica read-only: it must be at `generation` and hold `record`.
    private static func checkReplica(_ replica: String, generation: UInt64, record: CrudRecord) async throws {
        let reader = try Persistence(readingFrom: replica)
        defer { reader.close() }
        try expect(
            reader.currentToken.generation == generation,
            "the replica is at \(reader.currentToken), the writer at generation \(generation)")
        let loaded = try await reader.datastore(for: CrudRecordFormat.self).load(record.id)
        try expect(loaded == record, "the replica does not hold the last update")
    }

    /// What follows the store during a run.
    enum Follower {
        case task(Task<ReplicationReport, any Error>)
        case replicator(Replicator, Task<ReplicationReport, any Error>)
        case process(LineChild, ReplicationChild.LineReader)

        /// Returns once the replica has published `generation` or later.
        func waitUntil(_ generation: UInt64, _ log: ShipmentLog) async throws {
            let seconds = ReplicationSuite.catchUpSeconds
            switch self {
            case .task(let task), .replicator(_, let task):
                let deadline = MonotonicClock.nanoseconds() + UInt64(seconds * 1e9)
                while (log.latest ?? 0) < generation {
                    guard !task.isCancelled, MonotonicClock.nanoseconds() < deadline else {
                        throw BenchError.harness("the replica did not reach generation \(generation) in \(seconds) s")
                    }
                    try await Task.sleep(for: .microseconds(200))
                }
            case .process(_, let reader):
                try await reader.waitUntil(generation, seconds: seconds)
            }
        }

        /// Stops following: the replica's newest root made durable, the task or process ended.
        func stop() async throws {
            switch self {
            case .task(let task):
                task.cancel()
                _ = try await task.value
            case .replicator(let replicator, let task):
                replicator.stop()
                _ = try await task.value
            case .process(let child, let reader):
                _ = child
                try await reader.finish()
            }
        }
    }
}

/// The replica's published generations, each with the instant it was reported
/// (`CLOCK_MONOTONIC` nanoseconds), in order.
final class ShipmentLog: Sendable {
    private let state = Mutex<[(generation: UInt64, nanoseconds: UInt64)]>([])

    /// Records that the replica published `generation` now (or at `nanoseconds`).
    func add(_ generation: UInt64, at nanoseconds: UInt64 = MonotonicClock.nanoseconds()) {
        state.withLock { $0.append((generation, nanoseconds)) }
    }

    var latest: UInt64? { state.withLock { $0.last?.generation } }
    var count: Int { state.withLock { $0.count } }
    var entries: [(generation: UInt64, nanoseconds: UInt64)] { state.withLock { $0 } }
}

/// The replica's lag at each acknowledged commit, pooled over the runs of one workload.
final class ReplicaLag {
    private var generationsBehind: [Double] = []
    private var milliseconds: [Double] = []
    private var publishedBeforeAcknowledgement = 0
    private var shipments = 0
    private var runs = 0

    /// Adds one run: the commits acknowledged (generation, instant) and the replica's
    /// publications (generation, instant), both in order.
    func add(
        _ acknowledged: [(generation: UInt64, nanoseconds: UInt64)],
        _ shipped: [(generation: UInt64, nanoseconds: UInt64)], shipmentsDuringRun: Int
    ) {
        runs += 1
        shipments += shipmentsDuringRun
        // Generations behind: the newest publication at or before the acknowledgement.
        var published = 0
        for commit in acknowledged {
            while published < shipped.count, shipped[published].nanoseconds <= commit.nanoseconds { published += 1 }
            let replica = published == 0 ? 0 : shipped[published - 1].generation
            generationsBehind.append(Double(commit.generation - min(commit.generation, replica)))
        }
        // Milliseconds: the first publication at or past the commit's generation.
        var first = 0
        for commit in acknowledged {
            while first < shipped.count, shipped[first].generation < commit.generation { first += 1 }
            guard first < shipped.count else { break }
            let at = shipped[first].nanoseconds
            if at <= commit.nanoseconds {
                publishedBeforeAcknowledgement += 1
                milliseconds.append(0)
            } else {
                milliseconds.append(Double(at - commit.nanoseconds) / 1e6)
            }
        }
    }

    /// The figures so far, as a row's notes.
    var notes: [String] {
        let commits = generationsBehind.count
        func percentile(_ values: [Double], _ p: Double) -> Double {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)]
        }
        func generations(_ p: Double) -> String { String(format: "%.0f", percentile(generationsBehind, p)) }
        func ms(_ p: Double) -> String { String(format: "%.3f", percentile(milliseconds, p)) }
        return [
            "replica lag at each commit's acknowledgement, \(commits) commits over \(runs) runs: "
                + "generations behind p50 \(generations(0.5)), p99 \(generations(0.99)), max \(generations(1)); "
                + "ms until published p50 \(ms(0.5)), p99 \(ms(0.99)), max \(ms(1)) "
                + "(\(publishedBeforeAcknowledgement) published before acknowledged)",
            String(
                format: "shipments: %d, %.2f commits per shipment", shipments,
                shipments > 0 ? Double(commits) / Double(shipments) : 0),
        ]
    }
}
