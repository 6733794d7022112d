/// Keeps the optimiser from deleting work whose result the benchmark would otherwise drop.
///
/// Every workload folds what it read (counts, ids, value bytes) into a checksum and passes
/// it here. The function is opaque to the optimiser (`@inline(never)`, writes a global that
/// is printed at exit in verbose runs), so the loops that produced the value must run. Most
/// workloads also check their result against the expected one, which consumes it too.
enum Sink {
    nonisolated(unsafe) private static var accumulator: UInt64 = 0

    /// Folds `value` into the global accumulator.
    @inline(never)
    static func consume(_ value: Int) {
        accumulator = accumulator &* 31 &+ UInt64(truncatingIfNeeded: value)
    }

    /// The accumulated value (read at exit so the writes stay observable).
    @inline(never)
    static var value: UInt64 { accumulator }
}
