import Foundation

/// What every suite shares during one `folio-bench` run: sizes, durability, the runner,
/// scratch space, cached data sets and stores, and the rows so far.
final class BenchContext {
    let sizes: Sizes
    let durability: BenchDurability
    let runner: Runner
    let scratch: Scratch
    let datasets = DatasetCache()
    private(set) var results: [BenchResult] = []
    /// Workload and system names to run (`--workload`, `--system`); empty: all.
    var onlyWorkloads: Set<String> = []
    var onlySystems: Set<String> = []
    /// `--busy-timeout`: the `mp` suite's wait for another process's lock (nil: the default).
    var busyTimeout: Double?
    /// `--replica-dir`: scratch space for the replication suite's replicas (nil: ``scratch``).
    var replicaScratch: Scratch?

    init(sizes: Sizes, durability: BenchDurability, runner: Runner, scratch: Scratch) {
        self.sizes = sizes
        self.durability = durability
        self.runner = runner
        self.scratch = scratch
    }

    /// Whether the command line selects `workload` (``onlyWorkloads``, ``onlySystems``).
    func selects(_ workload: Workload) -> Bool {
        (onlyWorkloads.isEmpty || onlyWorkloads.contains(workload.name))
            && (onlySystems.isEmpty || onlySystems.contains(workload.system))
    }

    /// Measures `workload` and keeps its row; runs its tear-down even if it fails.
    func measure(_ workload: Workload) async throws {
        guard selects(workload) else {
            await workload.tearDown?()
            return
        }
        do {
            results.append(try await runner.measure(workload))
        } catch {
            await workload.tearDown?()
            throw error
        }
        await workload.tearDown?()
    }

    /// Measures workloads with interleaved runs (see ``Runner/measureInterleaved(_:)``).
    func measureInterleaved(_ workloads: [Workload]) async throws {
        let skipped = workloads.filter { !selects($0) }
        for workload in skipped { await workload.tearDown?() }
        let workloads = workloads.filter(selects)
        if workloads.isEmpty { return }
        do {
            results.append(contentsOf: try await runner.measureInterleaved(workloads))
        } catch {
            for workload in workloads { await workload.tearDown?() }
            throw error
        }
        for workload in workloads { await workload.tearDown?() }
    }

    /// Keeps a "not yet available" row.
    func unavailable(_ workload: UnavailableWorkload) {
        results.append(runner.unavailable(workload))
    }

    /// Keeps a "not yet available" row for each of `names`, of a crud system whose side is
    /// not written (`CrudSystems`), at size `n`: what the crud-based suites do for it.
    func unavailableCrudSystem(_ system: String, suite: String, names: some Sequence<String>, n: Int) {
        for name in names {
            unavailable(
                UnavailableWorkload(
                    suite: suite, name: name, system: system, n: n, durability: .flag(durability),
                    reason: CrudSystems.unavailableReason))
        }
    }
}

/// Crud data sets by size, generated once and kept until released (1,000,000 records take
/// a few hundred MiB).
final class DatasetCache {
    private var sets: [Int: CrudDataset] = [:]

    func dataset(_ n: Int) -> CrudDataset {
        if let set = sets[n] { return set }
        let set = CrudDataset(n: n)
        sets[n] = set
        return set
    }

    func release(_ n: Int) { sets[n] = nil }
}

/// Runs `body(0..<count)` as `count` concurrent child tasks (on the global executor, not the
/// caller's) and returns when all have finished; rethrows the first error (the others are
/// then cancelled). Folio serialises writers in its actor; GRDB's synchronous writes wait
/// for its writer queue inside their task.
func runConcurrently(_ count: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<count {
            group.addTask { try await body(index) }
        }
        try await group.waitForAll()
    }
}
