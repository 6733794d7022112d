/// How big each suite's workloads are: the defaults, `--n N`, or `--smoke`.
struct Sizes: Sendable, Equatable {
    /// Records of the crud suite (and of the JSON floors).
    var crudN = 10_000
    /// Keys of the engine suite's put-random, get-random and open.
    var engineKeys = 1_000_000
    /// Keys per transaction in put-random.
    var engineTransactionSize = 10_000
    /// Commits timed by commit-latency (one key each) and by each commit floor, per run.
    var commitCount = 200
    /// The sizes of the scale suite.
    var scaleSizes = [1_000, 10_000, 100_000, 1_000_000]
    /// Concurrent writers of mt-insert (each inserts n records).
    var concurrentWriters = 4
    /// Records per transaction in mt-insert.
    var concurrentBatch = 100
    /// Keys of the kv suite's inserts and hot reads (Dflat's 40,000); its cold reads use
    /// 1% of them, its one-transaction-per-key inserts 5%.
    var kvKeys = 40_000
    /// Durable single-record updates each process of the `mp` suite makes (its store holds
    /// ``crudN`` records; 4 processes × 2,500 update all 10,000).
    var multiProcessUpdates = 2_500
    /// Live bytes of the `restore` suite's stores.
    var restoreBytes = 100 << 20
    /// Generations the `restore` suite's store retains beyond its load.
    var restoreGenerations = 100_000

    /// The sizes.
    static let defaults = Sizes()

    /// `--n N`: every suite at size N. The kv suite uses N keys; the engine suite uses N keys (in transactions of at
    /// most 10,000), the JSON floors N records, the scale suite N/1000, N/100, N/10 and N
    /// (sizes below 10 dropped), the mp suite a store of N records with N/4 updates per
    /// process (at most 2,500), and the restore suite N retained generations (its live
    /// bytes stay 100 MiB).
    static func uniform(_ n: Int) -> Sizes {
        var sizes = Sizes()
        sizes.crudN = n
        sizes.kvKeys = n
        sizes.multiProcessUpdates = max(1, min(2_500, n / 4))
        sizes.engineKeys = n
        sizes.restoreGenerations = n
        sizes.engineTransactionSize = min(10_000, n)
        var scale: [Int] = []
        for divisor in [1000, 100, 10, 1] where n / divisor >= 10 && !scale.contains(n / divisor) {
            scale.append(n / divisor)
        }
        sizes.scaleSizes = scale.isEmpty ? [n] : scale
        return sizes
    }

    /// `--smoke`: tiny everything, for CI (seconds in all).
    static let smoke: Sizes = {
        var sizes = Sizes.uniform(100)
        sizes.commitCount = 5
        sizes.engineTransactionSize = 25
        sizes.multiProcessUpdates = 10
        sizes.restoreBytes = 1 << 20
        return sizes
    }()
}
