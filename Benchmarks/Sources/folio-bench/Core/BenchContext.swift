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

    init(sizes: Sizes, durability: BenchDurability, runner: Runner, scratch: Scratch) {
        self.sizes = sizes
        self.durability = durability
        self.runner = runner
        self.scratch = scratch
    }

    /// Measures `workload` and keeps its row; runs its tear-down even if it fails.
    func measure(_ workload: Workload) throws {
        defer { workload.tearDown?() }
        results.append(try runner.measure(workload))
    }

    /// Measures workloads with interleaved runs (see ``Runner/measureInterleaved(_:)``).
    func measureInterleaved(_ workloads: [Workload]) throws {
        defer { for workload in workloads { workload.tearDown?() } }
        results.append(contentsOf: try runner.measureInterleaved(workloads))
    }

    /// Keeps a "not yet available" row.
    func unavailable(_ workload: UnavailableWorkload) {
        results.append(runner.unavailable(workload))
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

/// Runs `body(0..<count)` on `count` threads of its own at once (not a thread pool, which
/// on 2 cores would run only 2 at a time) and waits for all; rethrows the first error.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
    final class Failures: @unchecked Sendable {
        // @unchecked: `errors` is guarded by `lock`.
        let lock = NSLock()
        var errors: [any Error] = []
    }
    let failures = Failures()
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            defer { group.leave() }
            do { try body(index) } catch {
                failures.lock.lock()
                failures.errors.append(error)
                failures.lock.unlock()
            }
        }
        thread.stackSize = 8 << 20
        thread.start()
    }
    group.wait()
    if let error = failures.errors.first { throw error }
}
