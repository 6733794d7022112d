/// One row of the report: a workload on one system at one size, measured or not yet
/// available. Encoded in `--json` output exactly as these properties (missing figures are
/// `null`).
struct BenchResult: Codable, Sendable, Equatable {
    /// `ok`, or `not-available` when the system's side is not written yet (no figures).
    enum Status: String, Codable, Sendable { case ok, notAvailable = "not-available" }

    var suite: String
    var workload: String
    /// `folio`, `grdb` or `floor`.
    var system: String
    var n: Int
    /// `full`, `grouped`, or `none` (no store involved).
    var durability: String
    var status: Status
    /// Median over ``samples``; per operation when ``secondsUnit`` is `per-operation`.
    var seconds: Double?
    /// `per-run` (the whole workload) or `per-operation` (commit latencies).
    var secondsUnit: String
    /// Operations per run divided by the median seconds per run.
    var operationsPerSecond: Double?
    /// Operations one run performs.
    var operations: Int
    /// Seconds of each run, in the order they ran (per run, never per operation).
    var samples: [Double]
    /// Bytes of the store's files after the workload; nil where no store is written.
    var bytesOnDisk: Int64?
    /// Highest peak resident memory over the runs.
    var peakRSSBytes: Int?
    /// What ``peakRSSBytes`` covers: `workload`, `process` or `child-process`.
    var peakRSSScope: String?
    var notes: [String]

    enum CodingKeys: String, CodingKey {
        case suite, workload, system, n, durability, status, seconds, secondsUnit, operationsPerSecond
        case operations, samples, bytesOnDisk, peakRSSBytes, peakRSSScope, notes
    }

    func encode(to encoder: any Encoder) throws {
        // Written by hand so that missing figures appear as explicit nulls.
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(suite, forKey: .suite)
        try c.encode(workload, forKey: .workload)
        try c.encode(system, forKey: .system)
        try c.encode(n, forKey: .n)
        try c.encode(durability, forKey: .durability)
        try c.encode(status, forKey: .status)
        try c.encode(seconds, forKey: .seconds)
        try c.encode(secondsUnit, forKey: .secondsUnit)
        try c.encode(operationsPerSecond, forKey: .operationsPerSecond)
        try c.encode(operations, forKey: .operations)
        try c.encode(samples, forKey: .samples)
        try c.encode(bytesOnDisk, forKey: .bytesOnDisk)
        try c.encode(peakRSSBytes, forKey: .peakRSSBytes)
        try c.encode(peakRSSScope, forKey: .peakRSSScope)
        try c.encode(notes, forKey: .notes)
    }
}
