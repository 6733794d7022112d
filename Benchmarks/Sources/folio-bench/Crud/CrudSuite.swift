/// The `crud` suite: Dflat's operations on n records (default 10,000) for each system of
/// ``CrudSystems/all``.
enum CrudSuite {
    static let name = "crud"

    static func run(_ context: BenchContext) async throws {
        let n = context.sizes.crudN
        let dataset = context.datasets.dataset(n)
        let fixtures = CrudFixtures(context: context)
        defer { fixtures.release(n: n) }
        for entry in CrudSystems.all {
            guard let system = entry.type else {
                // get-hot is Folio's alone.
                context.unavailableCrudSystem(
                    entry.name, suite: Self.name, names: CrudWorkloads.names.filter { $0 != "get-hot" }, n: n)
                continue
            }
            let workloads = CrudWorkloads(context: context, fixtures: fixtures, system: system, suite: Self.name)
            try await context.measure(workloads.insertBatch(dataset))
            try await context.measure(workloads.scanFilter(dataset))
            try await context.measure(workloads.scanDecodeFilter(dataset))
            try await context.measure(workloads.getByID(dataset))
            if let hot = workloads.getHot(dataset) { try await context.measure(hot) }
            try await context.measure(workloads.rangeIndex(dataset))
            try await context.measure(workloads.updateIndividual(dataset))
            try await context.measure(workloads.updateIndexedIndividual(dataset))
            try await context.measure(workloads.deleteBatch(dataset))
            try await context.measure(workloads.openCold(dataset))
            try await context.measure(workloads.mtInsert(n: n))
            try await context.measure(workloads.mtInsertDisjoint(n: n))
            try await context.measure(workloads.mtUpdateIndividual(dataset))
            try await context.measure(workloads.queryScan(dataset))
            try await context.measure(workloads.queryIndexed(dataset))
            try await context.measure(workloads.pointQuery(dataset))
            try await context.measure(workloads.updateWhere(dataset))
            try await context.measure(workloads.deleteWhere(dataset))
            try await context.measure(workloads.querySortedLimit(dataset))
            try await context.measure(workloads.queryCompound(dataset))
            try await context.measure(workloads.getByIDScaling(dataset))
            try await context.measure(workloads.rangeIndexScaling(dataset))
        }
        context.datasets.release(n * context.sizes.concurrentWriters)
        context.datasets.release(n)
    }
}
