import Foundation

/// Runs workloads and turns their runs into result rows.
///
/// Each workload runs `runs` times (at least 3); its seconds are the median of the runs
/// (the mean of the two middle ones for an even count), its peak memory the highest of the
/// runs, its bytes on disk and run notes those of the last run (every run writes the same
/// data). Workloads that mutate their store set up fresh state inside each run; read-only
/// ones share a store.
struct Runner {
    /// The minimum the issue asks for.
    static let minimumRuns = 3

    var runs: Int
    /// Where progress lines go (standard error).
    var log: (String) -> Void

    /// Measures `workload` and returns its row.
    func measure(_ workload: Workload) async throws -> BenchResult {
        try await measureInterleaved([workload])[0]
    }

    /// Measures several workloads with their runs interleaved (A B A B A B), so that each
    /// sees the same conditions: used for a workload and its floor, on a disk whose fsync
    /// latency changes with what else the machine is writing.
    func measureInterleaved(_ workloads: [Workload]) async throws -> [BenchResult] {
        precondition(runs >= Self.minimumRuns)
        var contexts: [[RunContext]] = Array(repeating: [], count: workloads.count)
        for _ in 0..<runs {
            for (index, workload) in workloads.enumerated() {
                let context = RunContext()
                try await workload.run(context)
                guard context.seconds != nil, context.peakRSS != nil else {
                    throw BenchError.harness(
                        "\(workload.suite)/\(workload.name) [\(workload.system)] ran without measuring")
                }
                contexts[index].append(context)
            }
        }
        return zip(workloads, contexts).map { workload, runs in
            let result = Self.result(workload, runs)
            log(Self.progressLine(result))
            return result
        }
    }

    /// The row of `workload` from its runs.
    private static func result(_ workload: Workload, _ runs: [RunContext]) -> BenchResult {
        let samples = runs.compactMap(\.seconds)
        let last = runs[runs.count - 1]
        let median = Self.median(samples)
        let perOperation = workload.secondsPerOperation
        // The workload's own notes, then what its last run observed, then the medians of the
        // named parts of the timed span.
        var notes = workload.notes + last.notes.filter { !workload.notes.contains($0) }
        var partNames: [String] = []
        for run in runs { for part in run.parts where !partNames.contains(part.name) { partNames.append(part.name) } }
        for name in partNames {
            let values = runs.compactMap { run in run.parts.first { $0.name == name }?.seconds }
            notes.append(
                "\(name): median \(Format.seconds(Self.median(values))) (runs \(values.map(Format.seconds).joined(separator: " ")))"
            )
        }
        let counted = runs.compactMap(\.allocations)
        if !counted.isEmpty {
            let operations = Double(max(1, workload.operations))
            let calls = Self.median(counted.map { Double($0.calls) }) / operations
            let bytes = Self.median(counted.map { Double($0.bytes) }) / operations
            notes.append(
                "heap allocations in the timed part (Tools/alloc-count.sh), median of runs: "
                    + "\(String(format: "%.1f", calls)) calls and \(String(format: "%.0f", bytes)) bytes per operation")
        }
        return BenchResult(
            suite: workload.suite, workload: workload.name, system: workload.system, n: workload.n,
            durability: workload.durability.label, status: .ok,
            seconds: perOperation ? median / Double(max(1, workload.operations)) : median,
            secondsUnit: perOperation ? "per-operation" : "per-run",
            operationsPerSecond: median > 0 ? Double(workload.operations) / median : nil,
            operations: workload.operations, samples: samples, bytesOnDisk: last.bytesOnDisk,
            peakRSSBytes: runs.compactMap(\.peakRSS).max(), peakRSSScope: last.peakScope.rawValue, notes: notes)
    }

    /// The row of a workload whose system side does not exist yet.
    func unavailable(_ workload: UnavailableWorkload) -> BenchResult {
        let result = BenchResult(
            suite: workload.suite, workload: workload.name, system: workload.system, n: workload.n,
            durability: workload.durability.label, status: .notAvailable, seconds: nil, secondsUnit: "per-run",
            operationsPerSecond: nil, operations: 0, samples: [], bytesOnDisk: nil, peakRSSBytes: nil,
            peakRSSScope: nil, notes: [workload.reason])
        log(Self.progressLine(result))
        return result
    }

    /// The median of `values` (non-empty).
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    static func progressLine(_ r: BenchResult) -> String {
        let head = "[\(r.suite)] \(r.workload) \(r.system) n=\(r.n) \(r.durability):"
        guard r.status == .ok, let seconds = r.seconds else { return "\(head) not yet available" }
        let unit = r.secondsUnit == "per-operation" ? " per op" : ""
        let rate = r.operationsPerSecond.map { " \(Format.rate($0)) ops/s" } ?? ""
        return
            "\(head) \(Format.seconds(seconds))\(unit),\(rate), runs \(r.samples.map(Format.seconds).joined(separator: " "))"
    }
}

/// Errors the harness reports and exits on.
enum BenchError: Error, CustomStringConvertible {
    /// A workload found a wrong result (a count, a missing record): its timing is void.
    case wrongResult(String)
    /// A fault of the harness or its environment.
    case harness(String)

    var description: String {
        switch self {
        case .wrongResult(let message): return "wrong result: \(message)"
        case .harness(let message): return message
        }
    }
}

/// Verifies a workload's result; a mismatch voids the measurement.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw BenchError.wrongResult(message()) }
}
