import Dispatch
import Foundation

// Reads from several tasks at once: whether read throughput grows with cores, as LMDB's
// does. Each row times the same reads twice in one run: by one task, then split between
// `tasks` concurrent tasks; the row's time is the concurrent one, and its notes give the
// single-task time and the speed-up (throughput of `tasks` tasks ÷ one task's).
extension CrudWorkloads {
    /// get-by-id's n random loads, by one task and then by `tasks` tasks.
    func getByIDScaling(_ dataset: CrudDataset, tasks: Int = 2) -> Workload {
        let ids = dataset.shuffledIDs(seed: 7)
        return scaling(
            "get-by-id-\(tasks)-tasks", dataset, tasks: tasks, operationsPerPass: ids.count,
            what: "get-by-id's \(Format.grouped(ids.count)) random loads"
        ) { store, part, parts in
            var found = 0
            for id in ids[(ids.count * part / parts)..<(ids.count * (part + 1) / parts)]
            where try await store.fetch(id: id) != nil {
                found += 1
            }
            return found
        }
    }

    /// range-index's query, repeated: 20 times by one task, then 20 times in all by `tasks` tasks.
    func rangeIndexScaling(_ dataset: CrudDataset, tasks: Int = 2) -> Workload {
        let range = dataset.priorityRange, repeats = 20
        return scaling(
            "range-index-\(tasks)-tasks", dataset, tasks: tasks,
            operationsPerPass: repeats * dataset.priorityRangeCount,
            what: "range-index's query \(repeats) times"
        ) { store, part, parts in
            var found = 0
            for _ in (repeats * part / parts)..<(repeats * (part + 1) / parts) {
                found += try await store.fetchAll(priorityIn: range).count
            }
            return found
        }
    }

    /// A pass of reads split into `parts` parts; `read(store, part, parts)` reads one part
    /// and returns how many records it found.
    private func scaling(
        _ name: String, _ dataset: CrudDataset, tasks: Int, operationsPerPass: Int, what: String,
        read: @escaping @Sendable (any CrudSystem, Int, Int) async throws -> Int
    ) -> Workload {
        let shared = openShared(dataset)
        var w = workload(
            name, n: dataset.n, operations: operationsPerPass,
            notes: [
                "\(what), split between \(tasks) concurrent tasks (timed); the same reads by one task just before (in the notes); nothing else of the harness runs meanwhile"
            ]
        ) { run in
            let store = try await shared.get()
            let start = DispatchTime.now().uptimeNanoseconds
            let alone = try await read(store, 0, 1)
            let single = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            run.recordPart("one task", seconds: single)
            let together = try await run.measure { () throws -> Int in
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for part in 0..<tasks { group.addTask { try await read(store, part, tasks) } }
                    var found = 0
                    for try await count in group { found += count }
                    return found
                }
            }
            try expect(together == alone, "\(name): \(tasks) tasks found \(together), one task \(alone)")
        }
        w.tearDown = shared.close
        return w
    }
}
