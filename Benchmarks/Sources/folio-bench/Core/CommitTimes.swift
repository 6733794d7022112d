import Foundation

/// The latency of each commit of one run, for rows whose seconds are per commit: the row's
/// figure is the run's mean per commit (as every per-operation row), and these add the
/// median and 90th percentile of single commits to its notes, robust to the few commits
/// that another process's writes delay.
struct CommitTimes {
    private var seconds: [Double] = []

    init(capacity: Int) { seconds.reserveCapacity(capacity) }

    /// Runs one commit and records how long it took (monotonic clock).
    @discardableResult
    mutating func time<T>(_ commit: () throws -> T) rethrows -> T {
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try commit()
        seconds.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        return result
    }

    /// Adds this run's median and 90th-percentile commit to `run` (the row's notes give the
    /// median of each over the runs, and every run's value).
    func record(in run: RunContext) {
        guard !seconds.isEmpty else { return }
        let sorted = seconds.sorted()
        run.recordPart("median single commit", seconds: Runner.median(sorted))
        run.recordPart("90th-percentile single commit", seconds: sorted[min(sorted.count - 1, sorted.count * 9 / 10)])
    }
}
