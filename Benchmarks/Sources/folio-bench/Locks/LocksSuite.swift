/// The `locks` suite: which lock Folio's memory cache should put around each shard
/// (Docs/Cache.md). The cache's critical section (``BenchLRU``: a lookup or insert that
/// updates the use order) runs under each lock of ``lockTypes``, on one thread and with two
/// threads contending for the same lock (the project's machine has 2 cores). Rows are
/// seconds per operation; the system column names the lock (`no-lock`: the critical
/// section alone, one thread).
enum LocksSuite {
    static let name = "locks"

    /// The locks compared. `os_unfair_lock` does not exist on Linux, so it is not here.
    static let lockTypes: [any GuardedLRU.Type] = [
        MutexGuarded.self, NSLockGuarded.self, PthreadMutexGuarded.self, SemaphoreGuarded.self,
        QueueGuarded.self, RWLockGuarded.self,
    ]
    /// Entries in the LRU (all present before a run; the cache's shards are this order of size).
    static let capacity = 4096

    /// What one thread does in a workload.
    enum Kind: String, CaseIterable {
        /// Reads of present keys, each moving its entry to the front (exclusive).
        case get1 = "get-1t"
        /// Inserts of keys from twice the capacity: half replace, half evict (exclusive).
        case insert1 = "insert-1t"
        case get2 = "get-2t"
        case insert2 = "insert-2t"
        /// 90% reads, 10% inserts, two threads.
        case mixed2 = "mixed-2t"
        /// Read-only lookups that leave the order alone, under the shared mode where the lock
        /// has one: the best case for a reader-writer lock, which an LRU cannot use as is
        /// (its reads write).
        case lookup2 = "lookup-2t"

        var threads: Int { self == .get1 || self == .insert1 ? 1 : 2 }
    }

    static var workloadNames: [String] { Kind.allCases.map(\.rawValue) }

    /// Systems of `kind`'s rows: the locks, and `no-lock` on one thread.
    static func systems(_ kind: Kind) -> [String] {
        (kind.threads == 1 ? [UnlockedLRU.name] : []) + lockTypes.map { $0.name }
    }

    /// Operations per thread per run: 50 per crud record (500,000 by default, 5,000 with
    /// `--smoke`).
    static func operationsPerThread(_ sizes: Sizes) -> Int { max(1_000, sizes.crudN * 50) }

    static func run(_ context: BenchContext) async throws {
        let m = operationsPerThread(context.sizes)
        for kind in Kind.allCases {
            let operations = Self.operations(kind, perThread: m)
            var workloads = lockTypes.map { workload(kind, $0, operations, m) }
            if kind.threads == 1 { workloads.insert(workload(kind, UnlockedLRU.self, operations, m), at: 0) }
            // Interleaved, so that every lock sees the same load from the rest of the machine.
            try await context.measureInterleaved(workloads)
        }
    }

    /// Each thread's operations: keys to read, or for inserts the key's complement (< 0).
    static func operations(_ kind: Kind, perThread m: Int) -> [[Int]] {
        (0..<kind.threads).map { thread in
            var rng = SplitMix64(seed: 0x10C5 &+ UInt64(thread))
            return (0..<m).map { _ in
                switch kind {
                case .get1, .get2, .lookup2: return Int.random(in: 0..<capacity, using: &rng)
                case .insert1, .insert2: return ~Int.random(in: 0..<2 * capacity, using: &rng)
                case .mixed2:
                    let key = Int.random(in: 0..<capacity, using: &rng)
                    return Int.random(in: 0..<10, using: &rng) == 0 ? ~key : key
                }
            }
        }
    }

    static func workload<G: GuardedLRU>(_ kind: Kind, _ type: G.Type, _ operations: [[Int]], _ m: Int) -> Workload {
        var notes = [
            "critical section: an LRU of \(Format.grouped(capacity)) Int entries (dictionary + linked node arrays, as a cache shard), all present before the run",
            "\(Format.grouped(m)) operations per thread; seconds per op = wall time / all operations",
        ]
        if kind.threads == 2 { notes.append("2 tasks on the global executor contending for one lock") }
        if kind == .lookup2 { notes.append("read-only lookups: shared mode for rwlock and queue-barrier") }
        let expected = operations.joined().reduce(0) { $0 &+ ($1 < 0 ? ~$1 : $1) }
        return Workload(
            suite: name, name: kind.rawValue, system: G.name, n: m, durability: .notApplicable,
            operations: m * kind.threads, secondsPerOperation: true, notes: notes
        ) { run in
            let guarded = G(BenchLRU(filledTo: capacity))
            let sum = await run.measure { await execute(kind, guarded, operations) }
            // Every key read is present (values equal keys), so the sum is known.
            try expect(sum == expected, "\(kind.rawValue) [\(G.name)]: checksum \(sum), expected \(expected)")
            Sink.consume(sum)
        }
    }

    /// Runs every thread's operations (a child task per thread when there are two); returns
    /// the sum of the values read and keys inserted.
    static func execute<G: GuardedLRU>(_ kind: Kind, _ guarded: G, _ operations: [[Int]]) async -> Int {
        if operations.count == 1 { return perform(kind, guarded, operations[0]) }
        return await withTaskGroup(of: Int.self) { group in
            for thread in operations {
                group.addTask { perform(kind, guarded, thread) }
            }
            var sum = 0
            for await part in group { sum &+= part }
            return sum
        }
    }

    static func perform<G: GuardedLRU>(_ kind: Kind, _ guarded: G, _ operations: [Int]) -> Int {
        var sum = 0
        if kind == .lookup2 {
            for key in operations { sum &+= guarded.read { $0.peek(key) } ?? 0 }
            return sum
        }
        for operation in operations {
            if operation >= 0 {
                sum &+= guarded.write { $0.value(forKey: operation) } ?? 0
            } else {
                let key = ~operation
                guarded.write { $0.insert(key, forKey: key) }
                sum &+= key
            }
        }
        return sum
    }
}
