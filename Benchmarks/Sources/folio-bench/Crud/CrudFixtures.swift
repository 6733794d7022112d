/// Stores filled with a data set, built once (untimed) and shared by the workloads that
/// only read them, or copied for those that change them.
///
/// A fixture is the store `insert-batch`'s first run leaves (all n records inserted in one
/// transaction, then closed: see ``adopt(_:_:_:)``), or, where no insert-batch ran first (the
/// observe suite), one built through the system's own ``CrudSystem/insert(_:)`` in
/// transactions of 10,000 records, then closed. Either way its directory can be copied or
/// opened by a child process. Adopting insert-batch's store saves building the same n
/// records twice per system (at n = 1,000,000 about 20 s each, which kept a full
/// `crud engine scale` run near its 10-minute budget on 2 cores).
final class CrudFixtures {
    private let context: BenchContext
    private var built: [String: String] = [:]

    /// Records per transaction while building.
    static let chunk = 10_000

    init(context: BenchContext) { self.context = context }

    /// The directory of a closed store of `system` holding `dataset`.
    func directory(_ system: any CrudSystem.Type, _ dataset: CrudDataset) async throws -> String {
        let key = "\(system.systemName)-\(dataset.label)-\(dataset.n)"
        if let path = built[key] { return path }
        let path = try context.scratch.makeDirectory("fixture-\(key)")
        let store = try await system.open(directory: path, durability: context.durability)
        for start in stride(from: 0, to: dataset.records.count, by: Self.chunk) {
            try await store.insert(Array(dataset.records[start..<min(start + Self.chunk, dataset.records.count)]))
        }
        try await store.close()
        built[key] = path
        return path
    }

    /// Keeps `path`, a closed store of `system` holding exactly `dataset` (written by
    /// insert-batch), as the fixture, unless there is one already. Returns whether it was kept
    /// (then the caller must not remove it).
    func adopt(_ path: String, _ system: any CrudSystem.Type, _ dataset: CrudDataset) -> Bool {
        let key = "\(system.systemName)-\(dataset.label)-\(dataset.n)"
        guard built[key] == nil else { return false }
        built[key] = path
        return true
    }

    /// Removes the fixtures of size `n` (the scale suite, once done with a size).
    func release(n: Int) {
        for (key, path) in built where key.hasSuffix("-\(n)") {
            context.scratch.remove(path)
            built[key] = nil
        }
    }
}

/// A fixture opened once and kept open across the runs of a read-only workload.
final class OpenFixture {
    private let open: () async throws -> any CrudSystem
    private var store: (any CrudSystem)?

    init(_ open: @escaping () async throws -> any CrudSystem) { self.open = open }

    /// The open store (opened, untimed, on first use).
    func get() async throws -> any CrudSystem {
        if let store { return store }
        let opened = try await open()
        store = opened
        return opened
    }

    func close() async {
        try? await store?.close()
        store = nil
    }
}
