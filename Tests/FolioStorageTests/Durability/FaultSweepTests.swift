import Testing
import FolioStorage
import FolioTestSupport

/// A3: the exhaustive fault sweep. A script of 30 transfer transactions through every kind
/// of commit runs once to count its file-system calls; then, for every call N, it runs
/// again on a fresh memory file system with call N failed, for each fault kind (EIO,
/// ENOSPC, and a short write for calls that are writes), once (transient) and from then on
/// (persistent: every later mutating call fails too, like a dead or full device).
///
/// The script behaves as an application would: a failed step is retried (twice at most,
/// then the run ends with that typed error), and a store that answers
/// ``StorageError/needsReopen(path:cause:)`` is closed and opened again. Each run checks:
///
/// - every error is a typed I/O error (`.io` or `.needsReopen`), never corruption;
/// - after every error, the store's memory state is exactly the last commit that returned;
/// - every reopening in the run, and a final open of what is on "disk" without faults,
///   satisfies D1-D4 against what the script had been told (``checkRecovered``);
/// - a transient fault never stops the script: the failures that leave the store
///   committable (Docs/Durability.md §7) really do, and the others are cured by a reopen.
@Suite struct FaultSweepTests {
    static let workload = TransferWorkload(seed: 23, accounts: 100, blobEvery: 6, blobBytes: 3_000)

    enum Step: Equatable {
        case open(grouped: Bool)
        case commit
        case flush
        case compact
        case close
    }

    /// Creation and 10 full-durability commits; a reopening in grouped mode (slot 1 of the
    /// root still names a readable generation) and two groups of four commits, each flushed;
    /// a compaction; a reopening in full mode, 6 commits, a compaction and 6 more: 30
    /// transactions.
    static let script: [Step] =
        [.open(grouped: false)] + Array(repeating: .commit, count: 10) + [.close]
        + [.open(grouped: true)]
        + Array(repeating: [Step.commit, .commit, .commit, .commit, .flush], count: 2).flatMap { $0 }
        + [.compact, .close, .open(grouped: false)] + Array(repeating: .commit, count: 6) + [.compact]
        + Array(repeating: .commit, count: 6) + [.close]

    struct Outcome {
        var finished = false
        var errors: [StorageError] = []
        var reopenings = 0
    }

    /// Runs the script on `fileSystem` as an application would; records an issue for every
    /// broken rule. `context` names the fault.
    static func run(_ fileSystem: any FileSystem, driver: TransferDriver, context: String) -> Outcome {
        var outcome = Outcome()
        var store: Store? = nil
        var grouped = false
        var index = 0
        var failures = 0
        defer { store?.close() }
        while index < script.count {
            var step = script[index]
            if store == nil && (step == .commit || step == .flush || step == .compact) {
                step = .open(grouped: grouped)  // reopening after a failure, as an application would
            }
            do throws(StorageError) {
                switch step {
                case .open(let mode):
                    let before = driver.acknowledged
                    store = try driver.openTyped(
                        options: testOptions(fileSystem, durability: mode ? .grouped(window: .seconds(3600)) : .full))
                    grouped = mode
                    if step != script[index] { outcome.reopenings += 1 } else { index += 1 }
                    let count = driver.committed
                    #expect(
                        count >= before.acknowledged && count <= before.attempted,
                        "\(context): reopened holding \(count), \(before)")
                    failures = 0
                    continue
                case .commit: try driver.commitNextTyped(store!, durable: !grouped)
                case .flush: try driver.flushTyped(store!)
                case .compact: try driver.compactTyped(store!)
                case .close:
                    store?.close()
                    store = nil
                }
                index += 1
                failures = 0
            } catch {
                outcome.errors.append(error)
                switch error {
                case .io, .needsReopen: break
                default: Issue.record("\(context): step \(index) (\(step)) failed with \(error), not an I/O error")
                }
                if let current = store {
                    // The memory state is the last commit that returned, nothing more or less.
                    do {
                        let count = try workload.check(current.read())
                        #expect(
                            count == driver.committed,
                            "\(context): after \(error), memory holds \(count), last commit \(driver.committed)")
                    } catch {
                        Issue.record("\(context): after a failed \(step), reading the memory state failed: \(error)")
                    }
                }
                if case .needsReopen = error {
                    store?.close()
                    store = nil
                    continue
                }
                failures += 1
                if failures > 2 { return outcome }  // ends with this typed error
            }
        }
        outcome.finished = true
        return outcome
    }

    struct Sweep: CustomTestStringConvertible, Sendable {
        var kind: FaultPlan.Kind
        var persistence: FaultPlan.Persistence
        var testDescription: String { "\(kind), \(persistence)" }
    }

    static let sweeps: [Sweep] = [FaultPlan.Kind.io, .noSpace, .shortWrite].flatMap { kind in
        [FaultPlan.Persistence.transient, .persistent].map { Sweep(kind: kind, persistence: $0) }
    }

    /// Every call of the script failed in turn, with each fault kind, transient and
    /// persistent (short writes only where the call is a write: elsewhere they are EIO).
    @Test(arguments: sweeps)
    func everyCallFails(_ sweep: Sweep) throws {
        // The calls of a fault-free run, in order.
        let counting = FaultInjectingFileSystem(wrapping: try memoryFileSystem())
        let recording = RecordingFileSystem(wrapping: counting)
        let clean = Self.run(recording, driver: TransferDriver(Self.workload), context: "no fault")
        #expect(clean.finished && clean.errors.isEmpty)
        let calls = recording.operations.filter { $0.kind.canFail }
        #expect(calls.count == counting.callCount)

        var injected = 0, runs = 0, finished = 0, reopenings = 0
        for (offset, operation) in calls.enumerated() {
            if sweep.kind == .shortWrite, operation.kind != .write { continue }
            let plan = FaultPlan(failingCall: offset + 1, kind: sweep.kind, persistence: sweep.persistence)
            let memory = try memoryFileSystem()
            let faulty = FaultInjectingFileSystem(wrapping: memory, plan: plan)
            let driver = TransferDriver(Self.workload)
            let context = "\(plan) (\(operation.relative(to: "/stores/s")))"
            let outcome = Self.run(faulty, driver: driver, context: context)
            runs += 1
            injected += faulty.injectedFaults
            reopenings += outcome.reopenings
            if outcome.finished { finished += 1 }
            #expect(faulty.injectedFaults >= 1, "\(context): the fault never fired")
            if sweep.persistence == .transient {
                #expect(outcome.finished, "\(context): a transient fault stopped the script: \(outcome.errors)")
            }
            // What is on disk, opened without faults: D1-D4.
            checkRecovered(memory, workload: Self.workload, bounds: driver.acknowledged, context: context)
        }
        print(
            "durability A3 \(sweep.testDescription): \(calls.count) calls, \(runs) runs, \(injected) faults injected, "
                + "\(finished) runs completed the script, \(reopenings) reopenings")
    }
}

// Typed-throwing forms of the driver's steps, so the sweep can switch over StorageError.
extension TransferDriver {
    func openTyped(options: StoreOptions) throws(StorageError) -> Store {
        try typed { try self.open(options: options) }
    }

    func commitNextTyped(_ store: Store, durable: Bool) throws(StorageError) {
        try typed { try self.commitNext(store, durable: durable) }
    }

    func flushTyped(_ store: Store) throws(StorageError) { try typed { try self.flush(store) } }

    func compactTyped(_ store: Store) throws(StorageError) { try typed { try self.compact(store) } }

    private func typed<R>(_ body: () throws -> R) throws(StorageError) -> R {
        do {
            return try body()
        } catch let error as StorageError {
            throw error
        } catch {
            Issue.record("an error that is not a StorageError: \(error)")
            throw StorageError.io(operation: "untyped", path: "", code: 0)
        }
    }
}
