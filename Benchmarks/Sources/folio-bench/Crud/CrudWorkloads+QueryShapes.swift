import Foundation

// Query shapes beyond one condition: a sort the index cannot give with a limit, and a
// conjunction over two indexed keys (the priority index and the primary key).
extension CrudWorkloads {
    /// The first 20 records with `priority >= 90 % of n` in title order (the priority index
    /// narrows to a tenth; the sort by title has no index in either system).
    func querySortedLimit(_ dataset: CrudDataset) -> Workload {
        let shared = openShared(dataset)
        let lower = dataset.n * 9 / 10, limit = 20
        let expected = Array(
            dataset.records.filter { $0.priority >= lower }.sorted { ($0.title, $0.id) < ($1.title, $1.id) }.prefix(
                limit))
        var w = workload(
            "query-sorted-limit", n: dataset.n, operations: expected.count,
            notes: [
                "priority >= \(lower) sorted by title, limit \(limit), through the query API (Folio: SortDescriptor(\\.title, comparator: .lexical); GRDB: order(Column(\"title\")).limit(\(limit))); ops = records returned"
            ]
        ) { run in
            let store = try await shared.get()
            let note = try await store.queryPlanNote(.priorityAtLeastByTitle(lower, limit: limit))
            if !run.notes.contains(note) { run.notes.append(note) }
            let found = try await run.measure {
                try await store.query(priorityAtLeast: lower, sortedByTitleLimit: limit)
            }
            try expect(
                found == expected, "query-sorted-limit returned \(found.map(\.id)), expected \(expected.map(\.id))")
        }
        w.tearDown = shared.close
        return w
    }

    /// `range-index`'s priority range and `id <= n / 2`: half of those records.
    func queryCompound(_ dataset: CrudDataset) -> Workload {
        let shared = openShared(dataset)
        let range = dataset.priorityRange, maximumID = Int64(dataset.n / 2)
        let expected = Set(
            dataset.records.lazy.filter { range.contains($0.priority) && $0.id <= maximumID }.map(\.id))
        var w = workload(
            "query-compound", n: dataset.n, operations: expected.count,
            notes: [
                "\(range.lowerBound) <= priority < \(range.upperBound) && id <= \(maximumID) through the query API: \(expected.count) records; ops = records returned"
            ]
        ) { run in
            let store = try await shared.get()
            let note = try await store.queryPlanNote(.priorityRangeAndID(range.lowerBound, range.upperBound, maximumID))
            if !run.notes.contains(note) { run.notes.append(note) }
            let found = try await run.measure {
                try await store.query(priorityFrom: range.lowerBound, below: range.upperBound, idAtMost: maximumID)
            }
            try expect(
                found.count == expected.count && Set(found.map(\.id)) == expected,
                "query-compound found \(found.count), expected \(expected.count)")
            try expect(
                found.allSatisfy { $0 == dataset.records[Int($0.id) - 1] }, "query-compound returned a wrong record")
        }
        w.tearDown = shared.close
        return w
    }
}
