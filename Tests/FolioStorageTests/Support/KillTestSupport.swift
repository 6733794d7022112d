import Foundation
import Testing
@_spi(Testing) import FolioStorage
import FolioTestSupport

/// What one `folio-torture transfers` run printed (see its Transfers.swift).
struct TransferTranscript {
    /// `open C G V`: the state the child opened at, after recovery.
    var opened: Recovered?
    /// The highest transaction number printed in an `ack` line, and its generation.
    var acknowledged = 0
    var acknowledgedGeneration: UInt64 = 0
    /// The highest transaction number printed in an `attempt` line.
    var attempted = 0
    /// `compacted G` lines: compactions that completed.
    var compactions = 0
    /// `done C G`: the child finished cleanly.
    var done: Recovered?
    /// `V` of `open C G V`: the store's format version when the child had opened it.
    var format: UInt32?

    init(_ lines: [String]) {
        for line in lines {
            let parts = line.split(separator: " ")
            func number(_ index: Int) -> Int? { parts.count > index ? Int(parts[index]) : nil }
            func generation(_ index: Int) -> UInt64? { parts.count > index ? UInt64(parts[index]) : nil }
            switch parts.first {
            case "open":
                if let c = number(1), let g = generation(2) { opened = Recovered(count: c, generation: g) }
                format = parts.count > 3 ? UInt32(parts[3]) : nil
            case "attempt": attempted = max(attempted, number(1) ?? 0)
            case "ack":
                if let n = number(1), n > acknowledged { acknowledged = n }
                acknowledgedGeneration = max(acknowledgedGeneration, generation(2) ?? 0)
            case "compacted": compactions += 1
            case "done": if let c = number(1), let g = generation(2) { done = Recovered(count: c, generation: g) }
            default: break
            }
        }
    }
}

/// The parent's side of a chain of kills on one store: what every child so far was told,
/// and the D1-D4 checks after each death.
struct KillChain {
    let path: String
    let workload: TransferWorkload
    /// What the parent may rely on: acknowledged transactions and generations so far.
    var bounds = Acknowledged()
    /// The newest generation anyone (child or parent) has seen the store at.
    var seenGeneration: UInt64 = 0
    var kills = 0
    var cleanExits = 0
    /// Past generations read back after the deaths (``checkHistory(_:_:)``).
    var pastGenerationsChecked = 0
    /// Deaths whose store ``checkHistory(_:_:)`` was shown.
    private var deathsSeen = 0
    /// The store's format version when last seen read-only (0: not yet seen).
    var formatVersion: UInt32 = 0
    /// Times the store was seen at version 3 after being seen at version 2.
    var upgradesSeen = 0

    init(path: String, workload: TransferWorkload) {
        self.path = path
        self.workload = workload
    }

    /// Folds in what a child printed before it died (or finished), checks its own open
    /// against what came before (D4: it opened unaided, nothing acknowledged lost, the
    /// generation not behind), then checks the store as the child left it: read-only, so
    /// that nothing is repaired before looking (D1-D3), and `verify`.
    mutating func childEnded(_ transcript: TransferTranscript, context: String) {
        if let opened = transcript.opened {
            #expect(
                opened.count >= bounds.acknowledged && opened.count <= bounds.attempted,
                "\(context): the child opened holding \(opened.count), \(bounds)")
            #expect(
                opened.generation >= seenGeneration,
                "\(context): the child opened at \(opened.generation) after \(seenGeneration) was seen")
            seenGeneration = max(seenGeneration, opened.generation)
            if let first = workload.firstWholesale {
                // Recovery follows a run recorded wholesale only from a version 3 slot, so
                // what the child opened holds a stamps transaction exactly when it is version 3.
                #expect(
                    transcript.format == (opened.count >= first ? 3 : 2),
                    "\(context): the child opened holding \(opened.count) at format \(transcript.format ?? 0)")
            }
        }
        bounds.attempted = max(bounds.attempted, transcript.attempted, transcript.opened?.count ?? 0)
        bounds.acknowledged = max(bounds.acknowledged, transcript.acknowledged, transcript.done?.count ?? 0)
        bounds.generation = max(bounds.generation, transcript.acknowledgedGeneration, transcript.done?.generation ?? 0)
        let reader: Store
        do {
            reader = try Store.openReadOnly(at: path, options: testOptions())
        } catch StorageError.storeNotFound {
            // Killed before the store's creation completed: fine only if nothing was acknowledged.
            #expect(bounds.acknowledged == 0 && bounds.generation == 0, "\(context): the store is gone, \(bounds)")
            return
        } catch {
            Issue.record("\(context): the store does not open: \(error)")
            return
        }
        defer { reader.close() }
        do {
            let count = try workload.check(reader.read())
            #expect(count >= bounds.acknowledged, "D1: \(context): holds \(count), \(bounds)")
            #expect(count <= bounds.attempted, "D2: \(context): holds \(count), \(bounds)")
            #expect(
                reader.generation >= bounds.generation && reader.generation >= seenGeneration,
                "D4: \(context): generation \(reader.generation), \(bounds), seen \(seenGeneration)")
            seenGeneration = max(seenGeneration, reader.generation)
            // What the store holds now is what the next child must find, at least. It may
            // find more, up to what was attempted: a read-only open takes the root slots
            // only, and the next writer's recovery also follows the complete runs a killed
            // writer left after its last slot (format version 2, Docs/Durability.md §3).
            bounds.acknowledged = count
            if let first = workload.firstWholesale { checkFormatVersion(reader, count: count, first: first, context) }
            try checkHistory(reader, context)
        } catch {
            Issue.record("D2/D3: \(context): \(error)")
        }
        let report = reader.verify()
        #expect(report.isClean, "D3: \(context): \(report.problems.prefix(3))")
    }

    /// The past generations the store still holds after the death (the newest 30 of them;
    /// in the long mode the newest 10, after every 20th death)
    /// read as the model at their counts, one more transaction at each transaction commit:
    /// `read(at:)` follows the chain a recovery left, and no killed commit left a generation
    /// in it that is not one the model knows.
    private mutating func checkHistory(_ reader: Store, _ context: String) throws {
        let newest = reader.generation
        // The parent reads every generation whole, against a model it replays: the long
        // mode's hundreds of deaths read back the newest 10 after every 20th.
        deathsSeen += 1
        guard !CrashTestMode.isLong || deathsSeen % 20 == 0 else { return }
        let depth = UInt64(CrashTestMode.pick(short: 30, long: 10))
        let oldest = max(try reader.oldestReadableGeneration(), newest > depth ? newest - depth : 1)
        var previous: Int?
        for generation in oldest...newest {
            let view = try reader.read(at: generation)
            let count = try workload.check(view)
            // Each transaction is one commit that counts itself; a compaction changes nothing.
            if let previous {
                let expected = previous + (try view.changes().trees.isEmpty ? 0 : 1)
                #expect(
                    count == expected,
                    "\(context): generation \(generation) holds \(count) transactions, the one before \(previous)")
            }
            previous = count
            pastGenerationsChecked += 1
        }
    }

    /// A store holding a commit recorded wholesale (transaction `first` or later) is format
    /// version 3, one that does not is still version 2, and a store never goes back.
    private mutating func checkFormatVersion(_ reader: Store, count: Int, first: Int, _ context: String) {
        guard let version = try? reader.describe().rootFormatVersion else {
            Issue.record("\(context): the store does not describe itself")
            return
        }
        #expect(version == (count >= first ? 3 : 2), "\(context): format \(version) holding \(count) transactions")
        #expect(version >= formatVersion, "\(context): format \(version) after \(formatVersion)")
        if formatVersion == 2 && version == 3 { upgradesSeen += 1 }
        formatVersion = version
    }
}

extension KillChain {
    /// Runs `folio-torture transfers` children on the chain's store until `kills` of them
    /// died by `kill -9`: every second child at one of `points` (taken in turn, skipped a
    /// seeded number of passes), the others at a random instant 0-40 ms after they opened;
    /// every fifth in grouped durability. Each child runs to 60 transactions past what is
    /// acknowledged; D1-D4 are checked after each (``childEnded(_:context:)``). Returns how
    /// many kills landed where ("random time" or the point's name).
    mutating func killRepeatedly(
        tool: String, seed: UInt64, arguments: [String], kills: Int, points: [(CrashPoint, skips: Int)],
        rng: inout SplitMix64
    ) throws -> [String: Int] {
        var byPoint: [String: Int] = [:]
        var round = 0
        let killsBefore = self.kills
        while self.kills - killsBefore < kills {
            round += 1
            guard round < kills * 3 else {
                Issue.record("too many rounds without a kill: \(self.kills - killsBefore) kills in \(round) rounds")
                break
            }
            let grouped = round % 5 == 4
            let target = bounds.acknowledged + 60
            var environment: [String: String] = [:]
            var label = "random time"
            if round % 2 == 0 {
                let (point, skips) = points[(round / 2) % points.count]
                let skip = rng.index(grouped && skips == 40 ? 5 : skips)
                environment = ["FOLIO_CRASH_POINT": point.name, "FOLIO_CRASH_POINT_SKIP": String(skip)]
                label = "\(point.name) skip \(skip)"
            }
            var childArguments = ["transfers", path, String(seed), String(target)] + arguments
            if grouped { childArguments.append("--grouped") }
            let child = try ChildProcess(tool, childArguments, environment: environment)
            if environment.isEmpty {
                // A random instant: after it opened, 0-40 ms into its commits.
                _ = try? child.waitForLine(timeout: 60) { $0.hasPrefix("open") }
                Thread.sleep(forTimeInterval: Double(rng.index(40)) / 1000)
                child.kill()
            }
            let status = try child.wait(timeout: 120)
            let context = "round \(round) (\(label)\(grouped ? ", grouped" : ""))"
            if status == -SIGKILL {
                self.kills += 1
                byPoint[
                    label.hasPrefix("random") ? "random time" : String(label.split(separator: " ")[0]), default: 0] +=
                    1
            } else {
                #expect(status == 0, "\(context): the child failed: \(child.errorOutput.suffix(400))")
                cleanExits += 1
            }
            childEnded(TransferTranscript(child.output), context: context)
        }
        return byPoint
    }
}
