import Foundation

/// One row of the report before it is measured: which workload, on which system, at which
/// size, and how to run it once.
struct Workload {
    var suite: String
    var name: String
    /// `folio`, `grdb` or `floor`.
    var system: String
    var n: Int
    var durability: RowDurability
    /// Operations one run performs (records inserted, loads, commits...): operations per
    /// second is this divided by the run's seconds.
    var operations: Int
    /// Report seconds per operation (commit latencies) instead of seconds per run.
    var secondsPerOperation = false
    /// Facts a reader needs to interpret the row (cache sizes, what is timed).
    var notes: [String] = []
    /// Runs the workload once: sets up untimed, calls ``RunContext/measure(_:)`` exactly
    /// once around the timed part (or ``RunContext/recordChild(_:)`` for a child process),
    /// may set ``RunContext/bytesOnDisk``, and cleans up. It runs in the harness's task
    /// (never on a thread of its own); work it starts in child tasks ends before it returns.
    var run: (RunContext) async throws -> Void
    /// Called once after the last run (or a failure): closes and removes state shared
    /// between runs.
    var tearDown: (() async -> Void)? = nil
}

/// A row that cannot be measured yet (the system's side is not written), reported as such
/// rather than estimated.
struct UnavailableWorkload {
    var suite: String
    var name: String
    var system: String
    var n: Int
    var durability: RowDurability
    var reason: String
}

/// What one run of a workload measured.
final class RunContext {
    private(set) var seconds: Double?
    private(set) var peakRSS: Int?
    private(set) var peakScope: PeakMemory.Scope = PeakMemory.scope
    /// Bytes of the store's files after the workload, where that applies.
    var bytesOnDisk: Int64?
    /// Notes learned while running (e.g. page reads seen during a warm-cache run).
    var notes: [String] = []
    /// Named parts of the timed span (e.g. "commit returned"), in seconds, in the order
    /// first recorded: the row's notes give the median of each over the runs.
    private(set) var parts: [(name: String, seconds: Double)] = []
    /// Heap allocations of the timed part (calls, bytes), when ``AllocationCounter`` counts.
    private(set) var allocations: AllocationCounter.Reading?

    /// Times `body` (monotonic clock) and records the peak resident memory reached while it
    /// ran. Call it once per run. `body` runs in the caller's task: what it awaits (commits,
    /// deliveries to other tasks) is part of the time.
    func measure<T>(_ body: () async throws -> T) async rethrows -> T {
        precondition(seconds == nil, "measure called twice in one run")
        PeakMemory.resetPeak()
        let before = AllocationCounter.read()
        let start = DispatchTime.now().uptimeNanoseconds
        startNanoseconds = start
        let result = try await body()
        let end = DispatchTime.now().uptimeNanoseconds
        if let before, let after = AllocationCounter.read() {
            allocations = AllocationCounter.Reading(
                calls: after.calls - before.calls, bytes: after.bytes - before.bytes)
        }
        seconds = Double(end - start) / 1e9
        peakRSS = PeakMemory.peakBytes()
        return result
    }

    /// When the current ``measure(_:)`` started (`DispatchTime` uptime nanoseconds).
    private(set) var startNanoseconds: UInt64 = 0

    /// Records a named part of the timed span: seconds from the start of ``measure(_:)``
    /// (or between two instants of the run) that the row's notes report as a median.
    func recordPart(_ name: String, seconds: Double) {
        parts.append((name, seconds))
    }

    /// Records what a child process measured of itself.
    func recordChild(_ report: ChildReport) {
        precondition(seconds == nil, "measure called twice in one run")
        seconds = report.seconds
        peakRSS = report.peakRSSBytes
        peakScope = .childProcess
    }
}
