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
    /// `declared R G`: the child committed the declaration of R retained generations, as
    /// generation G (durable: printed once the commit returned).
    var declared: (generations: UInt64, generation: UInt64)?

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
            case "declared":
                if let r = generation(1), let g = generation(2) {
                    declared = (r, g)
                    acknowledgedGeneration = max(acknowledgedGeneration, g)
                }
            case "done": if let c = number(1), let g = generation(2) { done = Recovered(count: c, generation: g) }
            default: break
            }
        }
    }
}

/// A chain whose children declare that the store keeps its newest `generations`
/// generations (`folio-torture transfers --retain-generations R`).
struct DeclaredRetention {
    /// R.
    var generations: UInt64
    /// The children's `--compact-every`: a compaction after every this many transactions.
    var compactEvery: Int

    /// The children's option.
    var arguments: [String] { ["--retain-generations", String(generations)] }

    /// How many snapshot files may be on disk after a death: those holding the retained
    /// generations (R / `compactEvery` compactions' worth, one more for the file the oldest of
    /// them starts in), the current one, and one the dead child had not let go yet or an
    /// interrupted compaction's copy.
    var fileBound: Int { Int(generations) / compactEvery + 3 }
}

/// What the checks of a chain under a ``DeclaredRetention`` found, over all its deaths.
struct RetainedHistoryTally: CustomStringConvertible {
    /// Deaths after which the store declared the retention, and was checked.
    var deathsChecked = 0
    /// Of those, the deaths after which the whole sample of the retained range was read.
    var wholeSamples = 0
    /// Past generations read back in the retained ranges (sampled above the newest 30).
    var generationsRead = 0
    /// The retained ranges' sizes (newest - floor + 1): smallest, largest, sum.
    var smallestRange: UInt64 = .max
    var largestRange: UInt64 = 0
    var rangeSum: UInt64 = 0
    /// Deaths whose retained range was a full R generations (older ones had been let go).
    var fullRanges = 0
    /// The most generations readable at one death (newest - oldestReadable + 1).
    var deepestReadable: UInt64 = 0
    /// Snapshot files on disk after a death: the most of them; of those holding pages, the
    /// most; the most holding pages below the file of the oldest retained generation (not
    /// let go yet); the most header-only files (reclaimed copies); the most above the
    /// current file (interrupted compactions' copies); and the sum, for the mean.
    var mostFiles = 0
    var mostFilesWithPages = 0
    var mostBelowRetained = 0
    var mostHeaderOnly = 0
    var mostAbove = 0
    var fileSum = 0
    /// Time spent in these checks.
    var duration = Duration.zero

    var description: String {
        guard deathsChecked > 0 else { return "no death checked under the declared retention" }
        return "\(deathsChecked) deaths checked under the declared retention (\(wholeSamples) reading the whole "
            + "sample), \(generationsRead) retained generations read back, retained range \(smallestRange)-\(largestRange) generations "
            + "(mean \(rangeSum / UInt64(deathsChecked)), full \(fullRanges) times), up to \(deepestReadable) readable; "
            + "snapshot files on disk: at most \(mostFiles) (mean "
            + "\(String(format: "%.1f", Double(fileSum) / Double(deathsChecked)))), at most \(mostFilesWithPages) "
            + "holding pages, \(mostBelowRetained) below the retained range, \(mostHeaderOnly) header-only, "
            + "\(mostAbove) above the current one; checked in \(duration.formatted(.units(allowed: [.seconds])))"
    }
}

/// The parent's side of a chain of kills on one store: what every child so far was told,
/// and the D1-D4 checks after each death.
struct KillChain {
    let path: String
    let workload: TransferWorkload
    /// The history the children declare, if they do (then ``checkHistory(_:_:)`` checks
    /// the retained generations after each death).
    let retention: DeclaredRetention?
    /// The generation of the first commit that held the declaration, once the parent has
    /// seen the store hold it.
    private(set) var declaredAt: UInt64?
    /// The generation the first child that committed the declaration printed.
    private var announcedDeclaration: UInt64?
    var retained = RetainedHistoryTally()
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

    init(path: String, workload: TransferWorkload, retention: DeclaredRetention? = nil) {
        self.path = path
        self.workload = workload
        self.retention = retention
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
        if let declared = transcript.declared {
            #expect(
                declared.generations == retention?.generations,
                "\(context): the child declared \(declared.generations) generations")
            if announcedDeclaration == nil { announcedDeclaration = declared.generation }
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
    /// in it that is not one the model knows. Under a declared retention, once the store
    /// declares it: ``checkRetainedHistory(_:_:_:)`` instead, after every death.
    private mutating func checkHistory(_ reader: Store, _ context: String) throws {
        deathsSeen += 1
        if let retention, try declaredAt != nil || RetentionLayout.read(in: reader.read()).keepsAnything {
            try checkRetainedHistory(reader, retention, context)
            return
        }
        if retention != nil {
            // Not declared yet: no child's declaration became durable, and none said it did.
            #expect(announcedDeclaration == nil, "\(context): declared at \(announcedDeclaration ?? 0), not held")
        }
        let newest = reader.generation
        // The parent reads every generation whole, against a model it replays: the long
        // mode's hundreds of deaths read back the newest 10 after every 20th.
        guard !CrashTestMode.isLong || deathsSeen % 20 == 0 else { return }
        let depth = UInt64(CrashTestMode.pick(short: 30, long: 10))
        let oldest = max(try reader.oldestReadableGeneration(), newest > depth ? newest - depth : 1)
        var previous: Int?
        for generation in oldest...newest {
            let view = try reader.read(at: generation)
            let count = try workload.check(view)
            // Each transaction is one commit that counts itself; a compaction changes nothing.
            if let previous {
                let expected = previous + (TransferWorkload.isTransaction(try view.changes()) ? 1 : 0)
                #expect(
                    count == expected,
                    "\(context): generation \(generation) holds \(count) transactions, the one before \(previous)")
            }
            previous = count
            pastGenerationsChecked += 1
        }
    }

    /// After a death, under a declared retention of R generations, first committed as
    /// generation D (`declaredAt`), the store at newest generation N:
    ///
    /// - (a) holds every retained generation: `oldestReadableGeneration()` is at most
    ///   max(D, N - R + 1), the floor (generations before the declaration may be gone: the
    ///   compactions before it let them go);
    /// - (b) reads each as the model at its count: the newest 30, and every 7th from the floor
    ///   below them (to bound the time), each declaring R exactly from D on; consecutive ones
    ///   one transaction apart at a transaction commit, none at a compaction or a commit of
    ///   the declaration alone (`TransferWorkload.isTransaction`), sampled ones at most as
    ///   many transactions apart as generations;
    /// - (c) keeps only about what the retention needs: at most
    ///   ``DeclaredRetention/fileBound`` snapshot files holding pages on disk, and at most
    ///   twice that in all (header-only files, compactions' copies reclaimed at an open, are
    ///   kept like the files around them while they are in the retained range).
    ///
    /// The long mode's stores hold thousands of transactions, and every generation read is
    /// a whole store compared with the model: (b) reads the whole sample after every 5th
    /// death, and only the floor (where retention lets files go) after the others.
    private mutating func checkRetainedHistory(
        _ reader: Store, _ retention: DeclaredRetention, _ context: String
    ) throws {
        let start = ContinuousClock.now
        defer { retained.duration += ContinuousClock.now - start }
        let newestView = try reader.read()
        let newest = newestView.generation
        let r = retention.generations
        let history = try RetentionLayout.read(in: newestView)
        #expect(history == RetainedHistory(generations: r), "\(context): generation \(newest) declares \(history)")
        if declaredAt == nil {
            // The first death after which the store holds the declaration: its commit is the
            // oldest generation declaring it (the store is young, the chain reaches it).
            var first = newest
            for generation in try reader.oldestReadableGeneration()...newest
            where try RetentionLayout.read(in: reader.read(at: generation)).generations == r {
                first = generation
                break
            }
            declaredAt = first
            let changes = try reader.read(at: first).changes()
            #expect(
                changes.trees.map(\.tree) == [RetentionLayout.tree],
                "\(context): the declaration's commit \(first) changed \(changes.trees.map(\.tree))")
            if let announced = announcedDeclaration {
                #expect(first == announced, "\(context): declared at \(first), the child said \(announced)")
            }
        }
        let declared = declaredAt!
        let floor = max(declared, newest >= r ? newest - r + 1 : 1)
        // (a)
        let oldest = try reader.oldestReadableGeneration()
        #expect(
            oldest <= floor,
            Comment(
                rawValue: "(a) \(context): the oldest readable generation is \(oldest), the retained ones start at "
                    + "\(floor) (newest \(newest), R \(r), declared at \(declared))"))
        // (b)
        let dense = max(floor, newest >= 30 ? newest - 29 : 1)
        let whole = !CrashTestMode.isLong || deathsSeen % 5 == 0
        let generations = whole ? Array(stride(from: floor, to: dense, by: 7)) + Array(dense...newest) : [floor]
        var previous: (generation: UInt64, count: Int)?
        var floorFile: UInt64?
        for generation in generations {
            let view: ReadView
            do {
                view = try reader.read(at: generation)
            } catch {
                Issue.record("(b) \(context): retained generation \(generation) does not read: \(error)")
                previous = nil
                continue
            }
            if generation == floor { floorFile = view.commitLocation.fileNumber }
            let count = try workload.check(view)
            let policy = try RetentionLayout.read(in: view).generations
            #expect(
                policy == (generation >= declared ? r : nil),
                "(b) \(context): generation \(generation) declares \(policy.map(String.init) ?? "nothing")")
            if let previous {
                let apart = Int(generation - previous.generation)
                if apart == 1 {
                    let expected = previous.count + (TransferWorkload.isTransaction(try view.changes()) ? 1 : 0)
                    #expect(
                        count == expected,
                        "(b) \(context): generation \(generation) holds \(count) transactions, the one before \(previous.count)"
                    )
                } else {
                    #expect(
                        count >= previous.count && count - previous.count <= apart,
                        "(b) \(context): generation \(generation) holds \(count), \(previous.generation) \(previous.count)"
                    )
                }
            }
            previous = (generation, count)
            pastGenerationsChecked += 1
            retained.generationsRead += 1
        }
        // (c)
        let current = newestView.commitLocation.fileNumber
        let files = try snapshotFiles()
        let withPages = files.filter { !$0.headerOnly }
        let below = withPages.filter { $0.number < (floorFile ?? current) }.count
        let above = files.filter { $0.number > current }.count
        #expect(
            withPages.count <= retention.fileBound,
            Comment(
                rawValue: "(c) \(context): \(withPages.count) snapshot files hold pages, at most "
                    + "\(retention.fileBound) expected (\(below) below the retained range's first file "
                    + "\(floorFile ?? 0), \(above) above the current \(current)): \(files.map(\.number))"))
        #expect(
            files.count <= 2 * retention.fileBound,
            "(c) \(context): \(files.count) snapshot files, \(files.count - withPages.count) of them header-only")
        let range = newest - floor + 1
        retained.deathsChecked += 1
        if whole { retained.wholeSamples += 1 }
        retained.smallestRange = min(retained.smallestRange, range)
        retained.largestRange = max(retained.largestRange, range)
        retained.rangeSum += range
        if range == r { retained.fullRanges += 1 }
        retained.deepestReadable = max(retained.deepestReadable, newest - oldest + 1)
        retained.mostFiles = max(retained.mostFiles, files.count)
        retained.mostFilesWithPages = max(retained.mostFilesWithPages, withPages.count)
        retained.mostBelowRetained = max(retained.mostBelowRetained, below)
        retained.mostHeaderOnly = max(retained.mostHeaderOnly, files.count - withPages.count)
        retained.mostAbove = max(retained.mostAbove, above)
        retained.fileSum += files.count
    }

    /// The snapshot files on disk, by number; header-only: no longer than a snapshot header
    /// (64 bytes, Docs/Format.md §3): a reclaimed compaction copy that holds no page.
    private func snapshotFiles() throws -> [(number: UInt64, headerOnly: Bool)] {
        let directory = path + "/snapshots"
        return try FileManager.default.contentsOfDirectory(atPath: directory).compactMap { name in
            guard name.hasSuffix(".folio"), let number = UInt64(name.dropLast(6), radix: 16) else { return nil }
            let size = try FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? Int ?? 0
            return (number, size <= 64)
        }.sorted { $0.number < $1.number }
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
