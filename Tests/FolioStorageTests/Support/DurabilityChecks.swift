import Testing
import Synchronization
import FolioStorage
import FolioTestSupport

/// What a workload had told its caller when it was interrupted: transactions up to
/// `acknowledged` had returned from a durable commit (a flush, in grouped mode); the
/// transaction numbered `attempted` was the last one whose commit had begun; and
/// `generation` was the newest generation any acknowledged operation (commit, flush,
/// compaction, open) had reported.
struct Acknowledged: Sendable, Equatable, CustomStringConvertible {
    var acknowledged = 0
    var attempted = 0
    var generation: UInt64 = 0

    var description: String { "acknowledged \(acknowledged), attempted \(attempted), generation >= \(generation)" }
}

/// The state a recovered store opened at.
struct Recovered: Equatable {
    var count: Int
    var generation: UInt64
}

/// The pass criterion of every crash, power-loss and fault test (Docs/Durability.md §4),
/// checked on the store at `path` of `fileSystem`:
///
/// - D4: a writer opens it unaided (recovery only, no repair step), at a generation no
///   older than `bounds.generation`;
/// - D1 and D2: it holds exactly the workload's state after G transactions, with
///   `bounds.acknowledged <= G <= bounds.attempted`;
/// - D3: `verify` reports nothing (reading every tree, above, returned no error).
///
/// A store that never acknowledged its creation may not exist yet; the writer then creates
/// it (G = 0). Records an issue naming `context` for each failed criterion; returns what the
/// store opened at, or nil if it could not be opened or read.
@discardableResult
func checkRecovered(
    _ fileSystem: any FileSystem, path: String = "/stores/s", workload: TransferWorkload,
    bounds: Acknowledged, context: @autoclosure () -> String,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Recovered? {
    let store: Store
    do {
        store = try Store.open(at: path, options: testOptions(fileSystem))
    } catch {
        Issue.record(
            "D4: the store does not open unaided (\(context()), \(bounds)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
    defer { store.close() }
    let count: Int
    do {
        count = try workload.check(store.read())
    } catch {
        Issue.record("D2/D3: \(context()), \(bounds): \(error)", sourceLocation: sourceLocation)
        return nil
    }
    #expect(
        count >= bounds.acknowledged, "D1: acknowledged transaction lost: \(context()), \(bounds), found \(count)",
        sourceLocation: sourceLocation)
    #expect(
        count <= bounds.attempted,
        "D2: a transaction that was never attempted: \(context()), \(bounds), found \(count)",
        sourceLocation: sourceLocation)
    #expect(
        store.generation >= bounds.generation,
        "D4: the generation went backwards: \(context()), \(bounds), found \(store.generation)",
        sourceLocation: sourceLocation)
    let report = store.verify()
    #expect(
        report.isClean, "D3: verify after recovery: \(context()): \(report.problems.prefix(3))",
        sourceLocation: sourceLocation)
    return Recovered(count: count, generation: store.generation)
}

/// Runs the transfer workload against a store while keeping an ``Acknowledged`` record
/// that another thread (a sync-point observer) can read at any moment.
final class TransferDriver: Sendable {
    let workload: TransferWorkload
    private let state = Mutex(Acknowledged())
    /// In grouped mode, commits that returned but are not durable yet.
    private let published = Mutex(0)

    init(_ workload: TransferWorkload) { self.workload = workload }

    var acknowledged: Acknowledged { state.withLock { $0 } }

    /// The count the last returned commit left in memory (durable or not).
    var committed: Int { published.withLock { $0 } }

    /// Opens (creating if needed) and records the opened state as acknowledged.
    func open(_ path: String = "/stores/s", options: StoreOptions) throws -> Store {
        let store = try Store.open(at: path, options: options)
        let count = try TransferWorkload.count(in: store.read())
        published.withLock { $0 = count }
        state.withLock { state in
            state.acknowledged = max(state.acknowledged, count)
            state.attempted = max(state.attempted, count)
            state.generation = max(state.generation, store.generation)
        }
        return store
    }

    /// Commits the next transaction. In full durability it is acknowledged when the commit
    /// returns; in grouped mode only by ``flush(_:)``.
    func commitNext(_ store: Store, durable: Bool = true) throws {
        let number = published.withLock { $0 } + 1
        let transaction = try workload.begin(number, in: store)
        state.withLock { $0.attempted = max($0.attempted, number) }
        try transaction.commit()
        published.withLock { $0 = number }
        if durable {
            state.withLock { state in
                state.acknowledged = number
                state.generation = max(state.generation, store.generation)
            }
        }
    }

    /// Appends the next transaction's commit without waiting for its sync (group commit):
    /// attempted, not acknowledged. The next ``appendNext(_:)`` builds on it.
    func appendNext(_ store: Store) throws -> AppendedCommit {
        let number = published.withLock { $0 } + 1
        let transaction = try workload.begin(number, in: store)
        state.withLock { $0.attempted = max($0.attempted, number) }
        let appended = try transaction.commitAppending()
        published.withLock { $0 = number }
        return appended
    }

    /// Waits for an appended commit; acknowledges it (and, so, every commit before it).
    func acknowledge(_ appended: AppendedCommit, in store: Store) throws {
        try appended.waitUntilDurable()
        let number = try TransferWorkload.count(in: try #require(appended.notification.after))
        state.withLock { state in
            state.acknowledged = max(state.acknowledged, number)
            state.generation = max(state.generation, appended.notification.generation)
        }
    }

    /// Flushes grouped commits and acknowledges them.
    func flush(_ store: Store) throws {
        try store.flush()
        let number = published.withLock { $0 }
        state.withLock { state in
            state.acknowledged = max(state.acknowledged, number)
            state.generation = max(state.generation, store.generation)
        }
    }

    /// Compacts; the new generation is acknowledged when this returns.
    func compact(_ store: Store) throws {
        try store.compact()
        state.withLock { $0.generation = max($0.generation, store.generation) }
    }

    /// Compacts with the next transaction committed after each of the compaction's
    /// background passes (into the old file, between its copy and its catch-up), each
    /// acknowledged as ``commitNext(_:durable:)`` does.
    func compactWithCommitsDuring(_ store: Store, durable: Bool = true) throws {
        let failures = Mutex<[String]>([])
        store.onCompactionPass { _ in
            do {
                try self.commitNext(store, durable: durable)
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        defer { store.onCompactionPass(nil) }
        try compact(store)
        let failed = failures.withLock { $0 }
        if !failed.isEmpty { throw StorageError.notWritable(path: store.path, cause: failed.joined(separator: "; ")) }
    }
}

/// A power-loss file system holding a durable, empty `/stores` directory.
func powerLossFileSystem() throws -> PowerLossFileSystem {
    let fileSystem = PowerLossFileSystem()
    try fileSystem.createDirectory("/stores")
    try fileSystem.syncDirectory("/")
    return fileSystem
}
