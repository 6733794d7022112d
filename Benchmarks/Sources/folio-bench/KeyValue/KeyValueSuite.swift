/// The `kv` suite: Dflat's key-value cases for Folio's key-value store
/// (`persistence.values`), Foundation's `UserDefaults` as it persists on this platform, and
/// a GRDB key-value table, once with `Int` values and once with ``BenchSetting``.
///
/// Workloads, each `-int` and `-struct`, n keys (default 40,000): `set-memory`,
/// `set-persisted`, `get-hot`, `get-cold` (1% of the keys, 100 times each), `set-more-memory`
/// and `set-more-persisted` (n more into a store of n), `set-each-transaction` (5% of n, one
/// transaction per key). UserDefaults' insert rows set n/10 keys (its sets cost the square of
/// the keys set since the last synchronize; see ``UserDefaultsKeyValueSystem``). Each workload's systems run interleaved (A B C A B C ...), so that
/// the ratios of one run compare the same conditions.
enum KeyValueSuite {
    static let name = "kv"

    /// The workloads, in report order (without the value type's suffix).
    static let workloadNames = [
        "set-memory", "set-persisted", "get-hot", "get-cold", "set-more-memory",
        "set-more-persisted", "set-each-transaction",
    ]

    /// Whether `system` has a row for `workload`: the in-memory rows are Folio's and
    /// UserDefaults' (GRDB's writes are transactions), `set-each-transaction` Folio's and
    /// GRDB's (UserDefaults has no transactions).
    static func applies(_ workload: String, to system: any KeyValueSystem.Type) -> Bool {
        switch workload {
        case "set-memory", "set-more-memory": return !system.setIsPersisted
        case "set-each-transaction": return system.hasTransactions
        default: return true
        }
    }

    /// Every (workload, system, n) row the suite produces at `sizes`.
    static func rows(_ sizes: Sizes) -> [(workload: String, system: String, n: Int)] {
        var rows: [(String, String, Int)] = []
        for label in [Int.label, BenchSetting.label] {
            for workload in workloadNames {
                for system in KeyValueSystems.all where applies(workload, to: system) {
                    let n =
                        switch workload {
                        case "set-each-transaction": max(1, sizes.kvKeys / 20)
                        case "get-hot", "get-cold": sizes.kvKeys
                        default: system.timedSetKeys(sizes.kvKeys)
                        }
                    rows.append(("\(workload)-\(label)", system.systemName, n))
                }
            }
        }
        return rows
    }

    static func run(_ context: BenchContext) async throws {
        try await run(Int.self, context)
        try await run(BenchSetting.self, context)
    }

    private static func run<Value: BenchValue>(_ type: Value.Type, _ context: BenchContext) async throws {
        let n = context.sizes.kvKeys
        let keys = BenchKeys<Value>(count: 2 * n)
        for workload in workloadNames {
            var workloads: [Workload] = []
            for system in KeyValueSystems.all where applies(workload, to: system) {
                workloads.append(try make(workload, system, keys, n, context))
            }
            try await context.measureInterleaved(workloads)
        }
    }

    /// The workload named `workload` of `system`.
    private static func make<System: KeyValueSystem, Value: BenchValue>(
        _ workload: String, _ system: System.Type, _ keys: BenchKeys<Value>, _ n: Int, _ context: BenchContext
    ) throws -> Workload {
        let workloads = KeyValueWorkloads<System, Value>(context: context, keys: keys, n: n)
        switch workload {
        case "set-memory": return workloads.setMemory()
        case "set-persisted": return workloads.setPersisted()
        case "get-hot": return workloads.getHot()
        case "get-cold": return workloads.getCold()
        case "set-more-memory": return workloads.setMore(persist: false)
        case "set-more-persisted": return workloads.setMore(persist: true)
        case "set-each-transaction":
            guard let each = workloads.setEachTransaction() else { break }
            return each
        default: break
        }
        throw BenchError.harness("kv: no workload \(workload) for \(System.systemName)")
    }
}
