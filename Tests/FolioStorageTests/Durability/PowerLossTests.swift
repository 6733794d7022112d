import Testing
import Synchronization
import FolioStorage
import FolioTestSupport

/// A4: simulated power loss, in the model "fsynced data survives; unsynced writes may
/// vanish, be reordered, or tear at 512-byte granularity; un-fsynced create/rename/unlink
/// may be undone" (``PowerLossFileSystem``, Docs/Durability.md §7).
///
/// The transfer workload runs on a power-loss file system through every kind of commit:
/// creation, full-durability commits, compactions (the replaced file removed at once),
/// writer reopenings, grouped commits and their flushes. At every sync point (just before
/// it takes effect, which covers a cut anywhere since the previous one) the test builds
/// crash images, the harshest (`durableOnly`), the kindest (`everything`) and seeded random
/// mixes, and checks D1-D4 on each (``checkRecovered``). Some images are restored and cut
/// again while they recover, to cover a power loss during recovery.
@Suite struct PowerLossTests {
    static let workload = TransferWorkload(seed: 41, accounts: 100, blobEvery: 5, blobBytes: 3_000)
    /// Random images per sync point, besides `durableOnly` and `everything`.
    static let randomImagesPerSyncPoint = 18

    struct Counts { var syncPoints = 0; var images = 0; var recoveryImages = 0 }
    /// Counts shared with the sync-point observers.
    final class Tally: Sendable {
        let counts = Mutex(Counts())
        func withLock<R>(_ body: (inout Counts) -> R) -> R { counts.withLock { body(&$0) } }
    }

    /// Checks D1-D4 on `image`; every tenth one is also restored and cut again at each sync
    /// point of its own recovery.
    static func check(_ image: MemoryFileSystem, bounds: Acknowledged, context: String, deep: Bool, tally: Tally) {
        tally.withLock { $0.images += 1 }
        guard deep else {
            checkRecovered(image, workload: workload, bounds: bounds, context: context)
            return
        }
        let restored = PowerLossFileSystem(restoring: image)
        restored.onSyncPoint = { point in
            for (index, mode) in [CrashMode.durableOnly, .random].enumerated() {
                let again = restored.crashImage(mode: mode, seed: UInt64(point.number * 7 + index))
                tally.withLock { $0.recoveryImages += 1 }
                checkRecovered(
                    again, workload: workload, bounds: bounds, context: "\(context), then \(point) of recovery, \(mode)"
                )
            }
        }
        checkRecovered(restored, workload: workload, bounds: bounds, context: context)
    }

    /// At least 1,000 crash images over every sync point of creation, commits, compactions,
    /// reopenings and grouped flushes: each one opens unaided and holds exactly the state
    /// after G transactions, last acknowledged <= G <= last attempted, and verifies clean.
    @Test func crashImagesAtEverySyncPoint() throws {
        let power = try powerLossFileSystem()
        let driver = TransferDriver(Self.workload)
        let tally = Tally()
        power.onSyncPoint = { point in
            let bounds = driver.acknowledged
            let number = tally.withLock { tally -> Int in
                tally.syncPoints += 1; return tally.syncPoints
            }
            var modes: [(CrashMode, UInt64)] = [(.durableOnly, 0), (.everything, 0)]
            for index in 0..<Self.randomImagesPerSyncPoint {
                modes.append((.random, UInt64(point.number * 1_000 + index)))
            }
            for (index, (mode, seed)) in modes.enumerated() {
                // Every other random image also tears inside sectors: root slots torn mid-slot.
                let tearing = mode == .random && index % 2 == 0
                Self.check(
                    power.crashImage(mode: mode, seed: seed, tearingSectors: tearing), bounds: bounds,
                    context: "\(point), \(mode)\(tearing ? " torn sectors" : "") seed \(seed)",
                    deep: (number + index) % 10 == 0, tally: tally)
            }
        }
        // Full durability: creation, 12 commits, a compaction, a clean reopen, 12 more, six
        // group commits and another compaction, with a commit after each of its background
        // passes (between its copy and its catch-up). Format version 2 until the reopen;
        // from then on a change record key limit of 1 records the two accounts of every
        // transfer wholesale, so the first commit after it upgrades the store to version 3
        // (its slot synced before it returns, Docs/Format.md §18.2) and every later one
        // writes the wholesale marker.
        var store = try driver.open(options: testOptions(power))
        for _ in 0..<12 { try driver.commitNext(store) }
        try driver.compact(store)
        store.close()
        var wholesale = testOptions(power)
        wholesale.changeRecordKeyLimit = 1
        store = try driver.open(options: wholesale)
        for _ in 0..<12 { try driver.commitNext(store) }
        // Group commit: three commits appended before any waits, so one sync covers all
        // three (and the waits of the first two find them durable), twice.
        for _ in 0..<2 {
            let appended = try (0..<3).map { _ in try driver.appendNext(store) }
            for commit in appended.reversed() { try driver.acknowledge(commit, in: store) }
        }
        try driver.compactWithCommitsDuring(store)
        store.close()
        // Grouped: two groups of four commits, each made durable by one flush, then a
        // compaction with commits during it (made durable by the catch-up's flush).
        wholesale.durability = .grouped(window: .seconds(3600))
        store = try driver.open(options: wholesale)
        for _ in 0..<2 {
            for _ in 0..<4 { try driver.commitNext(store, durable: false) }
            try driver.flush(store)
        }
        try driver.compactWithCommitsDuring(store, durable: false)
        try driver.flush(store)
        store.close()
        power.onSyncPoint = nil
        // After the last sync point: everything is durable.
        let final = driver.acknowledged
        #expect(final.acknowledged == 40, "38 plus one commit during each of the last two compactions")
        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(power.crashImage(mode: .durableOnly)))
        #expect(try reader.describe().rootFormatVersion == 3, "the run went through the upgrade to version 3")
        reader.close()
        Self.check(
            power.crashImage(mode: .durableOnly), bounds: final, context: "after the workload", deep: true, tally: tally
        )

        let result = tally.withLock { $0 }
        #expect(result.images >= 1_000)
        print(
            "durability A4: \(result.syncPoints) sync points, \(result.images) crash images, \(result.recoveryImages) images cut during recovery"
        )
    }

    /// Across the anchor lag bound: 140 commits in one open, so the root file is synced
    /// before the slot writes at 64 and 127 generations past the anchor (Docs/Durability.md
    /// §1 step 4), with crash images at every sync point, that root file sync included. Each
    /// image opens at the state after G transactions, last acknowledged <= G <= last
    /// attempted: whichever slot survives, recovery follows the synced runs past it.
    @Test func crashImagesAcrossTheAnchorLagBound() throws {
        let power = try powerLossFileSystem()
        let driver = TransferDriver(Self.workload)
        let tally = Tally()
        let rootSyncs = Mutex(0)
        power.onSyncPoint = { point in
            if point.kind == .file && point.path.hasSuffix("/root") { rootSyncs.withLock { $0 += 1 } }
            let bounds = driver.acknowledged
            let modes: [(CrashMode, UInt64, Bool)] = [
                (.durableOnly, 0, false), (.everything, 0, false),
                (.random, UInt64(point.number), true), (.random, UInt64(point.number) + 1, false),
            ]
            for (mode, seed, tearing) in modes {
                Self.check(
                    power.crashImage(mode: mode, seed: seed, tearingSectors: tearing), bounds: bounds,
                    context: "\(point), \(mode)\(tearing ? " torn sectors" : "") seed \(seed)", deep: false,
                    tally: tally)
            }
        }
        let store = try driver.open(options: testOptions(power))
        for _ in 0..<140 { try driver.commitNext(store) }
        power.onSyncPoint = nil
        store.close()
        let syncs = rootSyncs.withLock { $0 }
        #expect(syncs >= 3, "the open's root sync and the two at the bound (seen \(syncs))")
        let result = tally.withLock { $0 }
        print("durability A4 (anchor lag bound): \(result.images) crash images, \(syncs) root file syncs")
    }

    /// A process killed at any instant, a new writer that recovers, then a power cut: the
    /// generation the recovering writer opened at (and showed its caller) must survive the
    /// cut: D4, the generation never goes backwards.
    ///
    /// The kill is simulated in-process: a persistent fault at mutating call N makes every
    /// later mutating call fail without effect, so nothing after call N reaches the file
    /// system, exactly as if the process had died there (un-synced writes stay pending in
    /// the power-loss model, as they would in the kernel's page cache). Every N of the
    /// workload is tried.
    @Test func killRecoverThenPowerLoss() throws {
        let kinds: Set<FileOperation.Kind> = [
            .open, .write, .sync, .truncate, .rename, .remove, .syncDirectory, .createDirectory, .lock,
            .openLockFile,
        ]
        func workload(_ fileSystem: any FileSystem, _ driver: TransferDriver) throws {
            var store = try driver.open(options: testOptions(fileSystem))
            defer { store.close() }
            for _ in 0..<5 { try driver.commitNext(store) }
            try driver.compact(store)
            store.close()
            store = try driver.open(options: testOptions(fileSystem, durability: .grouped(window: .seconds(3600))))
            for _ in 0..<3 { try driver.commitNext(store, durable: false) }
            try driver.flush(store)
            try driver.commitNext(store, durable: false)
            try driver.compact(store)
        }
        let counting = FaultInjectingFileSystem(wrapping: try powerLossFileSystem(), countedKinds: kinds)
        try workload(counting, TransferDriver(Self.workload))
        let calls = counting.callCount
        var images = 0
        for kill in 1...calls {
            let power = try powerLossFileSystem()
            let dying = FaultInjectingFileSystem(
                wrapping: power, plan: FaultPlan(failingCall: kill, persistence: .persistent),
                countedKinds: kinds)
            let driver = TransferDriver(Self.workload)
            do { try workload(dying, driver) } catch {}
            // The next process recovers on what the dead one left...
            guard
                let recovered = checkRecovered(
                    power, workload: Self.workload, bounds: driver.acknowledged,
                    context: "killed at call \(kill)")
            else { continue }
            // ... and then the power fails.
            let opened = Acknowledged(
                acknowledged: recovered.count, attempted: recovered.count, generation: recovered.generation)
            for (mode, seed) in [(CrashMode.durableOnly, UInt64(0)), (.random, 1), (.random, 2), (.random, 3)] {
                checkRecovered(
                    power.crashImage(mode: mode, seed: seed), workload: Self.workload, bounds: opened,
                    context: "killed at call \(kill), recovered at \(recovered), then a power cut (\(mode) \(seed))")
                images += 1
            }
        }
        print("durability A4: \(calls) kill points, each recovered and then cut (\(images) crash images)")
    }
}
