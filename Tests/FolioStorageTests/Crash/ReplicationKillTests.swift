import Foundation
import Testing
@_spi(Testing) import FolioStorage
import FolioTestSupport

/// B1 for replication: real `kill -9` of a writer (`folio-torture transfers`, compacting
/// every 10 transactions under a declared retention, so the replica must follow
/// compactions and keep history) and of the replicator following it (`folio replicate`),
/// at random moments and at the replicator's crash points, chained on one store and one
/// replica. After each round, both processes dead (``ReplicationKillChain``):
///
/// - the replica opens read-only, at a generation G no older than any it showed before or
///   its replicator reported, no newer than the source's, and that the source committed:
///   it reads as the workload's model at its count, which is the count the source
///   acknowledged for G (if it did) and the count the source reads at G (if it still holds
///   it); `verify()` is clean; a sample of its retained generations reads the same;
/// - bytes past its published root (a copy cut off mid-file, a write a full disk cut
///   short: torn here by the test as well) change nothing of what it opens to;
/// - `folio replicate --once` (itself killed part-way in some rounds) brings it to the
///   source's generation exactly, with the source's contents, and no snapshot file the
///   source no longer has;
/// - `folio restore REPLICA DEST --at G` and `Store.restore(from:to:at:)` at a few
///   retained generations give stores equal to the model there.
///
/// Short by default (8 rounds, one of each kind); `FOLIO_CRASH_TESTS=1` runs 160.
/// `FOLIO_REPLICATION_KILL_SEED` replays a chain (the seed is printed).
@Suite(.serialized) struct ReplicationKillTests {
    @Test func killsOfTheWriterAndTheReplicator() throws {
        let rounds = CrashTestMode.pick(short: 8, long: 160)
        let seed =
            ProcessInfo.processInfo.environment["FOLIO_REPLICATION_KILL_SEED"].flatMap { UInt64($0) }
            ?? CrashTestMode.pick(short: 0x5EED_0001, long: UInt64.random(in: 1...UInt64.max))
        print("replication kills: seed \(seed) (FOLIO_REPLICATION_KILL_SEED=\(seed) replays it)")
        let directory = TemporaryDirectory("folio-replication-kill")
        defer { directory.remove() }
        var chain = try ReplicationKillChain(directory: directory, seed: seed)
        let start = ContinuousClock.now
        for round in 0..<rounds {
            let kind = ReplicationKillChain.Kind.allCases[round % ReplicationKillChain.Kind.allCases.count]
            try chain.run(round: round, kind: kind)
        }
        // Unkilled to the end: the writer finishes, the replicator catches up and the
        // replica is the source.
        try chain.finish()
        #expect(chain.tally.replicaOpened > 0, "the replica never opened: no round checked anything")
        print("replication kills: \(chain.tally) in \(ContinuousClock.now - start)")
    }
}

/// What ``ReplicationKillChain`` did and saw, over all its rounds.
struct ReplicationKillTally: CustomStringConvertible {
    var rounds = 0
    var writerKilledAtRandom = 0
    var writerKilledAtPoint = 0
    var writerFinished = 0
    var replicatorKilledAtRandom = 0
    var replicatorKilledAtPoint = 0
    var replicatorKilledAfterCompaction = 0
    var catchUpsKilled = 0
    /// Rounds that removed the replica and seeded a new one.
    var freshReplicas = 0
    var pointsNotReached = 0
    /// Rounds after which the replica opened (before any catch-up).
    var replicaOpened = 0
    /// ... at a generation the writer had acknowledged, or at one it committed durably but
    /// died before acknowledging (or a compaction's, which no `ack` line names).
    var atAcknowledged = 0
    var atUnacknowledged = 0
    /// ... and the source still held that generation, and read the same count there.
    var sourceHeldIt = 0
    /// Generations the replica lagged behind the source, at most.
    var mostBehind: UInt64 = 0
    var tornByTheTest = 0
    var catchUps = 0
    var pastGenerationsChecked = 0
    var restores = 0
    var failedShipmentsReported = 0

    var description: String {
        "\(rounds) rounds; writer killed \(writerKilledAtRandom) at random, \(writerKilledAtPoint) at crash points, "
            + "\(writerFinished) finished; replicator killed \(replicatorKilledAtRandom) at random, "
            + "\(replicatorKilledAtPoint) at crash points, \(replicatorKilledAfterCompaction) just after a compaction, "
            + "\(catchUpsKilled) catch-ups killed, \(pointsNotReached) points not reached; \(freshReplicas) replicas "
            + "seeded afresh; replica opened "
            + "\(replicaOpened) times (\(atAcknowledged) at an acknowledged generation, \(atUnacknowledged) at a "
            + "durable unacknowledged one, the source holding it \(sourceHeldIt) times, at most \(mostBehind) "
            + "generations behind); \(tornByTheTest) torn by the test; \(catchUps) catch-ups; "
            + "\(pastGenerationsChecked) generations read back; \(restores) restores; "
            + "\(failedShipmentsReported) failed shipments reported"
    }
}

/// One store, one replica, and the rounds of kills on them (``ReplicationKillTests``).
struct ReplicationKillChain {
    /// How a round ends its two processes.
    enum Kind: CaseIterable {
        /// The writer at a random instant, then the replicator a random while later.
        case writerThenReplicator
        /// The replicator at a random instant, then the writer.
        case replicatorThenWriter
        /// Both at one instant.
        case together
        /// The replicator at one of its crash points (mid-file, before or after publishing).
        case replicatorAtPoint
        /// The replicator just after the writer's first compaction: copying its new file.
        case replicatorAfterCompaction
        /// The writer at one of its commit or compaction crash points, then the replicator.
        case writerAtPoint
        /// The replicator at random, then the writer runs to its end.
        case replicatorWhileWriterFinishes
        /// The replica removed: a new one is seeded with the source's whole retained
        /// history (some files of MB), and the replicator killed mid-file in that copy.
        case freshReplicaKilledWhileSeeded
    }

    static let workload = TransferWorkload(seed: 53, blobEvery: 20, blobBytes: 2_500_000)
    static let retainedGenerations: UInt64 = 80
    static let writerArguments = [
        "--compact-every", "10", "--blob-every", "20", "--blob-bytes", "2500000", "--retention-ms", "0",
        "--retain-generations", String(retainedGenerations), "--commit-during-compaction",
    ]
    /// Transactions each round's writer runs to, past what is acknowledged.
    static let transactionsPerRound = 30

    static let writerPoints: [(CrashPoint, skips: Int)] = [
        (.commitAfterSnapshotSync, 25), (.commitBeforeAcknowledge, 25), (.compactBeforeRootSwitch, 2),
        (.compactAfterRootSwitch, 2), (.commitMidAppend, 1),
    ]
    static let replicatorPoints: [(CrashPoint, skips: Int)] = [
        (.replicateMidFile, 4), (.replicateBeforePublish, 6), (.replicateAfterPublish, 6),
    ]

    let directory: TemporaryDirectory
    let store: String
    let replica: String
    let torture: String
    let folio: String
    var rng: SplitMix64
    var tally = ReplicationKillTally()

    /// Generation -> transaction count, from the writers' `ack` lines.
    var acknowledged: [UInt64: Int] = [:]
    /// The most transactions acknowledged, and attempted, by any writer so far.
    var acknowledgedCount = 0
    var attemptedCount = 0
    /// The newest generation the replica was seen at (by the test or in a replicator's
    /// report).
    var replicaSeen: UInt64 = 0
    var writerPointTurn = 0
    var replicatorPointTurn = 0

    init(directory: TemporaryDirectory, seed: UInt64) throws {
        self.directory = directory
        store = directory.child("store")
        replica = directory.child("replica")
        torture = try ProjectExecutable.path("folio-torture")
        folio = try ProjectExecutable.path("folio")
        rng = SplitMix64(seed: seed)
    }

    // MARK: A round

    mutating func run(round: Int, kind: Kind) throws {
        tally.rounds += 1
        var context = "round \(round) (\(kind))"
        var writerEnvironment: [String: String] = [:]
        var replicatorEnvironment: [String: String] = [:]
        if kind == .writerAtPoint {
            let (point, skips) = Self.writerPoints[writerPointTurn % Self.writerPoints.count]
            writerPointTurn += 1
            let skip = rng.index(skips + 1)
            writerEnvironment = ["FOLIO_CRASH_POINT": point.name, "FOLIO_CRASH_POINT_SKIP": String(skip)]
            context += ", writer at \(point.name) skip \(skip)"
        }
        if kind == .freshReplicaKilledWhileSeeded {
            try? FileManager.default.removeItem(atPath: replica)
            replicaSeen = 0
            tally.freshReplicas += 1
            let skip = rng.index(8)
            replicatorEnvironment = [
                "FOLIO_CRASH_POINT": CrashPoint.replicateMidFile.name, "FOLIO_CRASH_POINT_SKIP": String(skip),
            ]
            context += ", replicator at \(CrashPoint.replicateMidFile.name) skip \(skip)"
        }
        if kind == .replicatorAtPoint {
            let (point, skips) = Self.replicatorPoints[replicatorPointTurn % Self.replicatorPoints.count]
            replicatorPointTurn += 1
            let skip = rng.index(skips + 1)
            replicatorEnvironment = ["FOLIO_CRASH_POINT": point.name, "FOLIO_CRASH_POINT_SKIP": String(skip)]
            context += ", replicator at \(point.name) skip \(skip)"
        }
        let target = acknowledgedCount + Self.transactionsPerRound
        let writer = try ChildProcess(
            torture, ["transfers", store, String(Self.workload.seed), String(target)] + Self.writerArguments,
            environment: writerEnvironment)
        // The replicator needs a store to open: it starts once the writer has opened (made) it.
        _ = try? writer.waitForLine(timeout: 60) { $0.hasPrefix("open") }
        let replicator = try ChildProcess(folio, ["replicate", store, replica], environment: replicatorEnvironment)
        let first = rng.index(250)
        let second = rng.index(250)
        switch kind {
        case .writerThenReplicator:
            sleep(milliseconds: first)
            killIfRunning(writer) { $0.writerKilledAtRandom += 1 }
            sleep(milliseconds: second)
            killIfRunning(replicator) { $0.replicatorKilledAtRandom += 1 }
        case .replicatorThenWriter:
            sleep(milliseconds: first)
            killIfRunning(replicator) { $0.replicatorKilledAtRandom += 1 }
            sleep(milliseconds: second)
            killIfRunning(writer) { $0.writerKilledAtRandom += 1 }
        case .together:
            sleep(milliseconds: first)
            killIfRunning(writer) { $0.writerKilledAtRandom += 1 }
            killIfRunning(replicator) { $0.replicatorKilledAtRandom += 1 }
        case .replicatorAtPoint, .freshReplicaKilledWhileSeeded:
            // The point is reached while the writer commits, or not at all: once the writer
            // is done, the replicator has nothing left to ship.
            _ = try writer.wait(timeout: 300)
            if (try? replicator.wait(timeout: 5)) == nil { tally.pointsNotReached += 1 }
            if replicator.isRunning {
                replicator.kill()
            } else {
                tally.replicatorKilledAtPoint += 1
            }
        case .replicatorAfterCompaction:
            // The compaction's new file (the blob and the ledger, some MB) is what the
            // replicator copies next: the kill lands in that copy or just around it.
            _ = try? writer.waitForLine(timeout: 120) { $0.hasPrefix("compacted") }
            sleep(milliseconds: first % 20)
            killIfRunning(replicator) { $0.replicatorKilledAfterCompaction += 1 }
            sleep(milliseconds: second)
            killIfRunning(writer) { $0.writerKilledAtRandom += 1 }
        case .writerAtPoint:
            let status = try writer.wait(timeout: 300)
            if status == -SIGKILL { tally.writerKilledAtPoint += 1 } else { tally.pointsNotReached += 1 }
            sleep(milliseconds: second)
            killIfRunning(replicator) { $0.replicatorKilledAtRandom += 1 }
        case .replicatorWhileWriterFinishes:
            sleep(milliseconds: first)
            killIfRunning(replicator) { $0.replicatorKilledAtRandom += 1 }
        }
        let writerStatus = try writer.wait(timeout: 300)
        let replicatorStatus = try replicator.wait(timeout: 60)
        if writerStatus != -SIGKILL {
            #expect(writerStatus == 0, "\(context): the writer failed: \(writer.errorOutput.suffix(600))")
            tally.writerFinished += 1
        }
        #expect(
            replicatorStatus == -SIGKILL,
            "\(context): the replicator ended by itself (\(replicatorStatus)): \(replicator.errorOutput.suffix(600))")
        writerEnded(writer.output)
        replicatorEnded(replicator, context: context)
        try check(context: context)
    }

    /// A last writer runs to the end unkilled, a replicator follows it, is stopped with
    /// SIGTERM, and the replica is the source.
    mutating func finish() throws {
        let target = acknowledgedCount + 15
        let writer = try ChildProcess(
            torture, ["transfers", store, String(Self.workload.seed), String(target)] + Self.writerArguments)
        _ = try? writer.waitForLine(timeout: 60) { $0.hasPrefix("open") }
        let replicator = try ChildProcess(folio, ["replicate", store, replica])
        #expect(try writer.wait(timeout: 300) == 0, "the last writer failed: \(writer.errorOutput.suffix(600))")
        writerEnded(writer.output)
        let source = try Store.openReadOnly(at: store, options: testOptions())
        defer { source.close() }
        // Following, it reaches the source's generation on its own.
        func replicaGeneration() -> UInt64? {
            guard let copy = try? Store.openReadOnly(at: replica, options: testOptions()) else { return nil }
            defer { copy.close() }
            return copy.generation
        }
        // A bound only so that a replicator that never catches up fails the test (below)
        // instead of hanging it; no time is asserted.
        let deadline = Date().addingTimeInterval(300)
        while replicator.isRunning, replicaGeneration() != source.generation, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        kill(replicator.pid, SIGTERM)
        #expect(try replicator.wait(timeout: 60) == 0, "SIGTERM: \(replicator.errorOutput.suffix(600))")
        replicatorEnded(replicator, context: "the last round")
        let copy = try Store.openReadOnly(at: replica, options: testOptions())
        defer { copy.close() }
        #expect(copy.generation == source.generation)
        #expect(try TransferWorkload.contents(of: copy.read()) == TransferWorkload.contents(of: source.read()))
        #expect(copy.verify().isClean)
        #expect(try Self.workload.check(copy.read()) == target)
        let extra = try Set(snapshotNames(replica)).subtracting(snapshotNames(store))
        #expect(extra.isEmpty, "the last round: the replica holds files the source does not: \(extra.sorted())")
    }

    private mutating func killIfRunning(_ child: ChildProcess, _ count: (inout ReplicationKillTally) -> Void) {
        guard child.isRunning else { return }
        child.kill()
        count(&tally)
    }

    private func sleep(milliseconds: Int) { Thread.sleep(forTimeInterval: Double(milliseconds) / 1000) }

    /// Folds in a writer's transcript: its acknowledgements, by generation.
    private mutating func writerEnded(_ lines: [String]) {
        for line in lines {
            let parts = line.split(separator: " ")
            switch parts.first {
            case "ack" where parts.count == 3:
                if let count = Int(parts[1]), let generation = UInt64(parts[2]) {
                    acknowledged[generation] = count
                    acknowledgedCount = max(acknowledgedCount, count)
                }
            case "attempt" where parts.count == 2: attemptedCount = max(attemptedCount, Int(parts[1]) ?? 0)
            case "open" where parts.count >= 2: attemptedCount = max(attemptedCount, Int(parts[1]) ?? 0)
            case "done" where parts.count == 3: acknowledgedCount = max(acknowledgedCount, Int(parts[1]) ?? 0)
            default: break
            }
        }
    }

    /// Folds in what a replicator reported: the generations it published (a lower bound
    /// for the replica's), and the shipments that failed (none should: the source and the
    /// destination are healthy; a failure is a replicator that misread one of them).
    private mutating func replicatorEnded(_ replicator: ChildProcess, context: String) {
        for line in replicator.output {
            let parts = line.split(separator: " ")
            if parts.first == "generation", parts.count > 1, let generation = UInt64(parts[1].dropLast()) {
                replicaSeen = max(replicaSeen, generation)
            }
        }
        let failures = replicator.errorOutput.split(separator: "\n").filter { $0.contains("replicating failed") }
        tally.failedShipmentsReported += failures.count
        #expect(failures.isEmpty, "\(context): \(failures.prefix(3))")
    }

    // MARK: The checks

    private mutating func check(context: String) throws {
        let source = try Store.openReadOnly(at: store, options: testOptions())
        defer { source.close() }
        let sourceCount = try Self.workload.check(source.read())
        #expect(
            sourceCount >= acknowledgedCount,
            "\(context): the source holds \(sourceCount), \(acknowledgedCount) acknowledged")
        acknowledgedCount = max(acknowledgedCount, sourceCount)

        if let held = try checkReplicaAsLeft(source: source, context: context), rng.index(2) == 0 {
            try tear(published: held, context: context)
        }
        // Two rounds in three catch up now; the others leave the replica behind (torn or
        // not) for the next round's replicator to resume from.
        if rng.index(3) != 0 {
            try catchUp(source: source, context: context)
        }
    }

    /// The replica as the kills left it, before anything repairs it. Returns its published
    /// root's file and committed length, and its count, nil if it holds none yet.
    private mutating func checkReplicaAsLeft(
        source: Store, context: String
    ) throws -> (file: UInt64, length: UInt64, count: Int)? {
        let copy: Store
        do {
            copy = try Store.openReadOnly(at: replica, options: testOptions())
        } catch StorageError.storeNotFound {
            // Killed before its first root was published: fine only if none was ever seen.
            #expect(replicaSeen == 0, "\(context): the replica is gone after generation \(replicaSeen) was seen")
            return nil
        } catch {
            Issue.record("\(context): the replica does not open: \(error)")
            return nil
        }
        defer { copy.close() }
        tally.replicaOpened += 1
        let generation = copy.generation
        #expect(generation >= replicaSeen, "\(context): the replica is at \(generation) after \(replicaSeen) was seen")
        #expect(
            generation <= source.generation,
            "\(context): the replica is at \(generation), ahead of the source's \(source.generation)")
        replicaSeen = max(replicaSeen, generation)
        tally.mostBehind = max(tally.mostBehind, source.generation - min(generation, source.generation))
        var count = -1
        do {
            count = try Self.workload.check(copy.read())
            #expect(count <= attemptedCount, "\(context): the replica holds \(count), \(attemptedCount) attempted")
            if let acknowledgedThere = acknowledged[generation] {
                #expect(
                    count == acknowledgedThere,
                    "\(context): the replica holds \(count) at \(generation), acknowledged as \(acknowledgedThere)")
                tally.atAcknowledged += 1
            } else {
                tally.atUnacknowledged += 1
            }
            if try source.oldestReadableGeneration() <= generation {
                #expect(
                    try Self.workload.check(source.read(at: generation)) == count,
                    "\(context): the source reads another count at \(generation)")
                tally.sourceHeldIt += 1
            }
            try checkHistory(of: copy, source: source, context: context)
        } catch {
            Issue.record("\(context): the replica at \(generation) is not the model: \(error)")
        }
        let report = copy.verify()
        #expect(report.isClean, "\(context): the replica: \(report.problems.prefix(3))")
        let location = try copy.read().commitLocation
        return (location.fileNumber, location.address.end, count)
    }

    /// A sample of the replica's past generations (its oldest, its newest 4, two between)
    /// read as the model at their counts, as the source reads them where it still can, and
    /// restored at three of them (one through `folio restore`).
    private mutating func checkHistory(of copy: Store, source: Store, context: String) throws {
        let newest = copy.generation
        let oldest = try copy.oldestReadableGeneration()
        var sample: Set<UInt64> = [oldest]
        for back in 0..<min(4, newest - oldest + 1) { sample.insert(newest - back) }
        for _ in 0..<2 { sample.insert(oldest + UInt64(rng.index(Int(newest - oldest + 1)))) }
        let sourceOldest = try source.oldestReadableGeneration()
        var counts: [UInt64: Int] = [:]
        for generation in sample.sorted() {
            let count = try Self.workload.check(copy.read(at: generation))
            counts[generation] = count
            if let acknowledgedThere = acknowledged[generation] {
                #expect(count == acknowledgedThere, "\(context): replica generation \(generation) holds \(count)")
            }
            if generation >= sourceOldest && generation <= source.generation {
                #expect(
                    try Self.workload.check(source.read(at: generation)) == count,
                    "\(context): the source reads another count at \(generation)")
            }
            tally.pastGenerationsChecked += 1
        }
        // Restores: the oldest and the newest in process, one between through the tool.
        let between = oldest + UInt64(rng.index(Int(newest - oldest + 1)))
        for (index, generation) in [oldest, newest, between].enumerated() {
            let destination = directory.child("restored-\(tally.restores)")
            defer { try? FileManager.default.removeItem(atPath: destination) }
            if index == 2 {
                let tool = try ChildProcess(
                    folio, ["restore", replica, destination, "--at", String(generation), "--quiet"])
                #expect(
                    try tool.wait(timeout: 120) == 0,
                    "\(context): folio restore --at \(generation): \(tool.errorOutput)")
            } else {
                try Store.restore(from: replica, to: destination, at: generation, options: testOptions())
            }
            tally.restores += 1
            let restored = try Store.openReadOnly(at: destination, options: testOptions())
            defer { restored.close() }
            #expect(restored.generation == generation, "\(context): restored at \(generation): \(restored.generation)")
            let count = try Self.workload.check(restored.read())
            let expected = try counts[generation] ?? Self.workload.check(copy.read(at: generation))
            #expect(count == expected, "\(context): restored at \(generation) holds \(count), the replica \(expected)")
            #expect(restored.verify().isClean, "\(context): restored at \(generation)")
        }
    }

    /// What a copy cut off mid-file, or a write a full disk cut short, leaves: the replica's
    /// files past its published root torn (cut at a random length, garbage after). Files
    /// before the root's are published history and left alone. The replica must open as
    /// before.
    private mutating func tear(published: (file: UInt64, length: UInt64, count: Int), context: String) throws {
        let snapshots = replica + "/snapshots"
        let names = try FileManager.default.contentsOfDirectory(atPath: snapshots).filter { $0.hasSuffix(".folio") }
        var torn = false
        for name in names {
            guard let number = UInt64(name.dropLast(6), radix: 16), number >= published.file else { continue }
            let path = snapshots + "/" + name
            let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64) ?? 0
            let floor = number == published.file ? published.length : 0
            guard size > floor || number > published.file else { continue }
            let cut = floor + UInt64(rng.index(Int(size - floor) + 1))
            guard let handle = FileHandle(forUpdatingAtPath: path) else { continue }
            try handle.truncate(atOffset: cut)
            try handle.seekToEnd()
            try handle.write(
                contentsOf: Data((0..<(1 + rng.index(9000))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }))
            try handle.close()
            torn = true
        }
        guard torn else { return }
        tally.tornByTheTest += 1
        let copy = try Store.openReadOnly(at: replica, options: testOptions())
        defer { copy.close() }
        #expect(try Self.workload.check(copy.read()) == published.count, "\(context): the torn replica")
        #expect(copy.verify().isClean, "\(context): the torn replica")
        let location = try copy.read().commitLocation
        #expect(
            location.fileNumber == published.file && location.address.end == published.length,
            "\(context): the torn replica opens elsewhere")
    }

    /// `folio replicate --once` (killed part-way first, in some rounds) brings the replica
    /// to the source's generation exactly.
    private mutating func catchUp(source: Store, context: String) throws {
        if rng.index(3) == 0 {
            let point = rng.index(2) == 0 ? CrashPoint.replicateMidFile : CrashPoint.replicateBeforePublish
            let once = try ChildProcess(
                folio, ["replicate", store, replica, "--once"],
                environment: ["FOLIO_CRASH_POINT": point.name, "FOLIO_CRASH_POINT_SKIP": String(rng.index(3))])
            if try once.wait(timeout: 120) == -SIGKILL { tally.catchUpsKilled += 1 }
        }
        let once = try ChildProcess(folio, ["replicate", store, replica, "--once"])
        #expect(try once.wait(timeout: 120) == 0, "\(context): replicate --once: \(once.errorOutput.suffix(600))")
        tally.catchUps += 1
        let copy = try Store.openReadOnly(at: replica, options: testOptions())
        defer { copy.close() }
        #expect(
            copy.generation == source.generation,
            "\(context): caught up to \(copy.generation), not \(source.generation)")
        replicaSeen = max(replicaSeen, copy.generation)
        #expect(
            try TransferWorkload.contents(of: copy.read()) == TransferWorkload.contents(of: source.read()),
            "\(context): the caught-up replica differs from the source")
        #expect(copy.verify().isClean, "\(context): the caught-up replica")
        let (replicaOldest, sourceOldest) = (try copy.oldestReadableGeneration(), try source.oldestReadableGeneration())
        #expect(
            replicaOldest == sourceOldest,
            "\(context): the caught-up replica's history starts at \(replicaOldest), the source's at \(sourceOldest)")
        let extra = try Set(snapshotNames(replica)).subtracting(snapshotNames(store))
        #expect(extra.isEmpty, "\(context): the caught-up replica holds files the source does not: \(extra.sorted())")
    }

    private func snapshotNames(_ path: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path + "/snapshots").filter { $0.hasSuffix(".folio") }
    }
}
