import Foundation

/// The workloads of the `kv` suite for one system and one value type. Each run opens a new
/// store (set-up untimed), times only what the workload names, checks what it read or
/// wrote, and removes the store.
struct KeyValueWorkloads<System: KeyValueSystem, Value: BenchValue> {
    let context: BenchContext
    /// Keys `0..<2n`: the first n for the inserts and reads, the next n for `set-more-*`.
    let keys: BenchKeys<Value>
    /// Keys of the inserts and hot reads.
    let n: Int

    private var durability: BenchDurability { context.durability }

    /// The row's durability: the flag, or a fixed label for UserDefaults.
    private var rowDurability: RowDurability {
        System.self == UserDefaultsKeyValueSystem.self ? .fixed("plist") : .flag(durability)
    }

    private func workload(
        _ name: String, n: Int, operations: Int, notes: [String],
        run: @escaping (RunContext) async throws -> Void
    ) -> Workload {
        Workload(
            suite: KeyValueSuite.name, name: "\(name)-\(Value.label)", system: System.systemName, n: n,
            durability: rowDurability, operations: operations,
            notes: notes + [System.durabilityNote(durability)], run: run)
    }

    /// Opens a new store in a new scratch directory.
    private func openNew() async throws -> System {
        try await System.open(
            directory: try context.scratch.makeDirectory("kv-\(System.systemName)"), durability: durability)
    }

    /// Reads key `index` and checks it holds its value.
    private func check(_ store: System, _ index: Int, _ what: String) throws {
        let found = try store.value(keys, at: index)
        try expect(
            found == keys.values[index],
            "\(what) [\(System.systemName)]: key \(index) reads \(String(describing: found))")
    }

    /// Case 1 (`set-memory`): n keys set, not persisted (Folio: `set` outside a transaction,
    /// committed in the background; UserDefaults: `set` without synchronize).
    func setMemory() -> Workload {
        let keys = keys, n = System.timedSetKeys(n)
        return workload(
            "set-memory", n: n, operations: n,
            notes: [
                "\(Format.grouped(n)) keys set into an empty store, timed without persisting (persisted untimed after)"
            ] + reducedNote
        ) { run in
            let store = try await openNew()
            try await run.measure { try store.set(keys, in: 0..<n) }
            try check(store, n - 1, "set-memory")
            try await store.persist()
            try await store.closeAndRemove()
        }
    }

    /// Case 2 (`set-persisted`): n keys set, then persisted (Folio: `flush()`;
    /// UserDefaults: `synchronize()`; GRDB: one write transaction).
    func setPersisted() -> Workload {
        let keys = keys, n = System.timedSetKeys(n)
        return workload(
            "set-persisted", n: n, operations: n,
            notes: ["\(Format.grouped(n)) keys set into an empty store and persisted (\(Self.persistWord))"]
                + reducedNote
        ) { run in
            let store = try await openNew()
            try await run.measure {
                try store.set(keys, in: 0..<n)
                try await store.persist()
            }
            run.bytesOnDisk = store.bytesOnDisk()
            try check(store, n - 1, "set-persisted")
            try await store.closeAndRemove()
        }
    }

    /// Why this system's insert rows set fewer keys than n, if they do.
    private var reducedNote: [String] {
        let m = System.timedSetKeys(n)
        guard m < n else { return [] }
        return [
            "\(Format.grouped(m)) keys, not \(Format.grouped(n)): this system's set costs grow with the square of the keys set since its last persist (about 2 minutes for \(Format.grouped(n))); its per-key rate here is better than at \(Format.grouped(n))"
        ]
    }

    /// What persisting is for this system, for the notes.
    private static var persistWord: String {
        System.setIsPersisted
            ? "all in one write transaction"
            : "set all, then \(System.self == FolioKeyValueSystem.self ? "values.flush()" : "synchronize()")"
    }

    /// Case 3 (`get-hot`): the n keys just set and persisted, each read once in an untimed
    /// pass, then read again (timed), one call per key.
    func getHot() -> Workload {
        let keys = keys, n = n
        let expected = keys.expectedChecksum(0..<n)
        return workload(
            "get-hot", n: n, operations: n,
            notes: [
                "\(Format.grouped(n)) keys set and persisted (1,000 per persist), read once (untimed), then each read once more, one call per key"
            ]
        ) { run in
            let store = try await openNew()
            try await store.fill(keys, in: 0..<n)
            _ = try Self.readAll(store, keys, 0..<n)
            let checksum = try await run.measure { try Self.readAll(store, keys, 0..<n) }
            try expect(
                checksum == expected, "get-hot [\(System.systemName)]: checksum \(checksum), expected \(expected)")
            Sink.consume(checksum)
            try await store.closeAndRemove()
        }
    }

    /// The checksum of the values of `indexes`, read one call each; a missing key is an error.
    private static func readAll<S: Sequence>(_ store: System, _ keys: BenchKeys<Value>, _ indexes: S) throws -> Int
    where S.Element == Int {
        var checksum = 0
        for index in indexes {
            guard let value = try store.value(keys, at: index) else {
                throw BenchError.wrongResult("key \(index) missing")
            }
            checksum &+= value.checksum
        }
        return checksum
    }

    /// The keys `get-cold` reads: 1% of n (400 of 40,000), spread evenly.
    var coldIndexes: [Int] {
        let count = max(1, n / 100)
        return (0..<count).map { $0 * (n / count) }
    }

    /// Times each cold key is read in `get-cold` (Dflat: 100).
    static var coldRepeats: Int { 100 }

    /// Case 4 (`get-cold`): n keys set and persisted (1,000 per persist), the store closed and opened again
    /// (untimed), then 1% of the keys read 100 times each, in passes over them: the first
    /// pass reads each from the file. The first pass's time is a part of the row.
    func getCold() -> Workload {
        let keys = keys, n = n, indexes = coldIndexes, repeats = Self.coldRepeats
        let expected = keys.expectedChecksum(indexes) &* repeats
        return workload(
            "get-cold", n: n, operations: indexes.count * repeats,
            notes: [
                "\(Format.grouped(indexes.count)) of \(Format.grouped(n)) stored keys read \(repeats) times each (passes over them) from a freshly opened store; opening untimed",
                System.self == UserDefaultsKeyValueSystem.self
                    ? "UserDefaults: a copy of the persisted plist under a new suite (Foundation caches a suite per process); its first read loads the whole plist"
                    : "the store closed and reopened: no value in memory before the first pass",
            ]
        ) { run in
            var store = try await openNew()
            try await store.fill(keys, in: 0..<n)
            store = try await store.reopenedCold(durability: durability)
            let cold = store
            var firstPass = 0.0
            let checksum = try await run.measure { () throws -> Int in
                let start = DispatchTime.now().uptimeNanoseconds
                var checksum = try Self.readAll(cold, keys, indexes)
                firstPass = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                for _ in 1..<repeats { checksum &+= try Self.readAll(cold, keys, indexes) }
                return checksum
            }
            run.recordPart("first pass (\(Format.grouped(indexes.count)) cold reads)", seconds: firstPass)
            try expect(
                checksum == expected, "get-cold [\(System.systemName)]: checksum \(checksum), expected \(expected)")
            Sink.consume(checksum)
            try await store.closeAndRemove()
        }
    }

    /// Case 5 (`set-more-memory`, `set-more-persisted`): n keys set and persisted (timed as a
    /// part of the row, "first n"), then n more (timed), into the same store; with `persist`
    /// each batch is persisted as in `set-persisted`, without it as in `set-memory`.
    func setMore(persist: Bool) -> Workload {
        let keys = keys, n = System.timedSetKeys(n)
        let name = persist ? "set-more-persisted" : "set-more-memory"
        let what = persist ? "persisted (\(Self.persistWord))" : "not persisted (persisted untimed after)"
        return workload(
            name, n: n, operations: n,
            notes: [
                "\(Format.grouped(n)) keys set into a store that holds \(Format.grouped(n)) others, \(what); the first \(Format.grouped(n)) of the same run are a part"
            ] + reducedNote
        ) { run in
            let store = try await openNew()
            let start = DispatchTime.now().uptimeNanoseconds
            try store.set(keys, in: 0..<n)
            if persist { try await store.persist() }
            run.recordPart(
                "first \(Format.grouped(n)) (same run)",
                seconds: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            if !persist { try await store.persist() }
            try await run.measure {
                try store.set(keys, in: n..<2 * n)
                if persist { try await store.persist() }
            }
            if !persist { try await store.persist() }
            run.bytesOnDisk = store.bytesOnDisk()
            try check(store, 0, name)
            try check(store, 2 * n - 1, name)
            try await store.closeAndRemove()
        }
    }

    /// Keys of `set-each-transaction`: 5% of n (2,000 of 40,000).
    var transactionKeys: Int { max(1, n / 20) }

    /// Case 6 (`set-each-transaction`): keys set one transaction each, each committed with
    /// the run's durability before the next (Folio: `perform { try values.set(v, for: k) }`;
    /// GRDB: one `write` per key). Nil for a system without transactions.
    func setEachTransaction() -> Workload? {
        guard System.hasTransactions else { return nil }
        let keys = keys, count = transactionKeys
        return workload(
            "set-each-transaction", n: count, operations: count,
            notes: [
                "\(Format.grouped(count)) keys (5% of n) into an empty store, one transaction each, committed before the next"
            ]
        ) { run in
            let store = try await openNew()
            try await run.measure { try await store.setEachInTransaction(keys, in: 0..<count) }
            run.bytesOnDisk = store.bytesOnDisk()
            try check(store, count - 1, "set-each-transaction")
            try await store.closeAndRemove()
        }
    }
}
