/// The `scale` suite: insert-batch and get-by-id at 1,000 to 1,000,000 records, to show how
/// the cost per operation grows with the store.
enum ScaleSuite {
    static let name = "scale"
    static let workloadNames = ["insert-batch", "get-by-id"]
    /// get-by-id loads at most this many random ids (out of all n) per run: cost per load
    /// is what the curve shows, and GRDB alone took 15-25 s per run for 100,000 single loads
    /// on the 2-core machine, too much for the 10-minute budget of a full run.
    static let maximumLoads = 10_000

    static func run(_ context: BenchContext) async throws {
        let fixtures = CrudFixtures(context: context)
        for n in context.sizes.scaleSizes {
            let dataset = context.datasets.dataset(n)
            for entry in CrudSystems.all {
                guard let system = entry.type else {
                    context.unavailableCrudSystem(entry.name, suite: Self.name, names: workloadNames, n: n)
                    continue
                }
                let workloads = CrudWorkloads(context: context, fixtures: fixtures, system: system, suite: Self.name)
                try await context.measure(workloads.insertBatch(dataset))
                try await context.measure(workloads.getByID(dataset, limit: maximumLoads))
            }
            fixtures.release(n: n)
            context.datasets.release(n)
        }
    }
}
