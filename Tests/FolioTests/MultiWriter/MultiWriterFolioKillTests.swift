import Foundation
import Testing
import Folio
import FolioTestSupport

/// Folio-level writer processes killed with `kill -9` while the others keep writing (B7, at
/// the level of `Persistence`, datastores, indexes and observers): three `folio-torture
/// folio-writers` processes commit seeded transactions into one store at once (writers in
/// turn), each into a datastore of its own and all of them into a shared one (a ledger they
/// read and update, and indexed slots they upsert and delete: FolioWritersWorkload in test
/// support), waiting up to 30 s for each other's turns; one of them compacts now and then.
/// Each round kills one writer at a seeded random moment and restarts it, so it resumes its
/// own sequence from what the store holds. After each kill the store, opened for writing
/// beside the running writers, equals the result of some serial order of the transactions
/// it holds, holds every acknowledged one and each writer's as a prefix, its indexes agree
/// with scans, and `verify` is clean (FolioWritersModel). Two read-only `folio-torture
/// folio-observer` processes observe the shared datastore, one from the start and one
/// started after the first kill: at the end each was told of every commit in order, with
/// no gap a `reload` did not announce, each commit one whole transaction, and every
/// snapshot they read agreed with itself.
///
/// Short by default (3 kills); `FOLIO_CRASH_TESTS=1` runs 30.
@Suite(.serialized) struct MultiWriterFolioKillTests {
    static let writers = 3
    static let seed: UInt64 = 0xB7F0
    static let busyTimeoutMilliseconds = 30_000

    @Test func acknowledgedTransactionsOfFolioWriterProcessesSurviveKills() async throws {
        let kills = CrashTestMode.pick(short: 3, long: 30)
        // Transactions a writer makes before it ends by itself; one that ends while kills
        // remain is started again with `step` more, so that all three keep writing.
        let (base, step) = CrashTestMode.pick(short: (300, 100), long: (600, 200))
        let tool = try ProjectExecutable.path("folio-torture")
        let path = FileManager.default.temporaryDirectory.path + "/folio-writers-kill-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let start = Date()
        try await FolioWritersModel.create(at: path)
        var started: [ChildProcess] = []
        // Declared after the directory's removal, so it runs first.
        defer {
            for child in started where child.isRunning {
                child.kill()
                _ = try? child.wait(timeout: 10)
            }
        }
        func startObserver() async throws -> ChildProcess {
            let observer = try ChildProcess(
                tool, ["folio-observer", path, String(Self.writers), "--seed", String(Self.seed)])
            started.append(observer)
            try await observer.nextLine(timeout: 60) { $0.hasPrefix("start ") }
            return observer
        }
        var observers = [try await startObserver()]

        var targets = Array(repeating: base, count: Self.writers)
        /// Starts writer `index`, which resumes from what the store holds. Writer 0 compacts
        /// every 97 transactions, beside the others' turns and the observers' reads.
        func startWriter(_ index: Int) throws -> ChildProcess {
            var arguments = [
                "folio-writers", path, String(index), String(targets[index]), "--seed", String(Self.seed),
                "--busy-timeout-ms", String(Self.busyTimeoutMilliseconds),
            ]
            if index == 0 { arguments += ["--compact-every", "97"] }
            let child = try ChildProcess(tool, arguments)
            started.append(child)
            return child
        }
        var writerProcesses: [[ChildProcess]] = Array(repeating: [], count: Self.writers)
        var writers = try (0..<Self.writers).map { index in
            let child = try startWriter(index)
            writerProcesses[index].append(child)
            return child
        }
        func restart(_ index: Int) throws {
            writers[index] = try startWriter(index)
            writerProcesses[index].append(writers[index])
        }
        var acknowledged = Array(repeating: -1, count: Self.writers)
        func recordAcknowledgements() {
            for (writer, children) in writerProcesses.enumerated() {
                for child in children {
                    for line in child.output where line.hasPrefix("ack ") {
                        if let n = Int(line.split(separator: " ")[1]) {
                            acknowledged[writer] = max(acknowledged[writer], n)
                        }
                    }
                }
            }
        }
        var rng = SplitMix64(seed: Self.seed)
        var killed = 0
        // A victim may reach its target before the kill lands (its process ended by itself:
        // restarted with more at the next round), which a loaded machine makes common: the
        // rounds go on until every kill has landed.
        for round in 0..<(kills * 20) where killed < kills {
            let context = "round \(round)"
            for index in 0..<Self.writers where !writers[index].isRunning {
                try await expectFinished(index, writers[index], context: context)
                targets[index] += step
                try restart(index)
            }
            let victim = rng.index(Self.writers)
            let child = writers[victim]
            // A random moment: after 0 to 39 more of its transactions (0: at once, which for a
            // writer just restarted is in its open or its first turn's catch-up), and up to
            // 20 ms more.
            try await waitForAcknowledgements(of: child, more: rng.index(40), timeout: 60)
            try await Task.sleep(for: .milliseconds(rng.index(20)))
            child.kill()
            let status = try await child.waitUntilExit(timeout: 60)
            if status == -SIGKILL {
                killed += 1
            } else {
                #expect(status == 0, "\(context): writer \(victim) failed: \(child.errorOutput.suffix(600))")
            }
            // Acknowledgements first, then the store: it must hold at least these.
            recordAcknowledgements()
            try await check(path, acknowledged: acknowledged, context: context)
            if status == -SIGKILL { try restart(victim) }
            if observers.count == 1 { observers.append(try await startObserver()) }
        }
        #expect(killed == kills)

        // The end: every writer finishes, those with a lower target then write on to the
        // highest, so that every writer ends with the same number of transactions.
        for (index, writer) in writers.enumerated() { try await expectFinished(index, writer, context: "the end") }
        let target = targets.max()!
        let lagging = (0..<Self.writers).filter { targets[$0] < target }
        for index in lagging {
            targets[index] = target
            try restart(index)
        }
        for index in lagging { try await expectFinished(index, writers[index], context: "the end") }
        recordAcknowledgements()
        let (counts, ledger) = try await check(path, acknowledged: acknowledged, context: "the end")
        #expect(counts == Array(repeating: target, count: Self.writers), "the end: \(counts)")

        let final = try await finalEntries(path)
        var told: [FolioObserverTranscript] = []
        for (index, observer) in observers.enumerated() {
            observer.closeInput()
            let status = try await observer.waitUntilExit(timeout: 120)
            #expect(status == 0, "observer \(index) failed: \(observer.errorOutput.suffix(600))")
            told.append(
                FolioObserverTranscript(
                    observer.output, final: final, finalTotal: ledger.seq, name: "observer \(index)"))
        }
        #expect(told[0].commits + told[0].reloads > 0, "the first observer was told of nothing")
        print(
            "durability B7 (Folio): \(String(format: "%.0f", Date().timeIntervalSince(start))) s, \(killed) kills of "
                + "\(Self.writers) writer processes, \(target) transactions each (total \(ledger.seq)); observers told of "
                + "\(told.map(\.commits)) commits, \(told.map(\.reloads)) reloads, read \(told.map(\.snapshots)) snapshots"
        )
    }

    /// Waits for a writer that ended by itself: it may only have reached its target.
    private func expectFinished(_ index: Int, _ writer: ChildProcess, context: String) async throws {
        let status = try await writer.waitUntilExit(timeout: 600)
        #expect(status == 0, "\(context): writer \(index) failed: \(writer.errorOutput.suffix(600))")
        #expect(
            writer.output.last?.hasPrefix("done ") == true,
            "\(context): writer \(index) ended at \(writer.output.suffix(2))")
    }

    /// Waits until `child` has printed `more` "ack" lines beyond those it printed so far (or
    /// ended); the timeout is not a verdict (another process's turns may keep it waiting).
    private func waitForAcknowledgements(of child: ChildProcess, more: Int, timeout: Double) async throws {
        func acknowledgements() -> Int { child.output.lazy.filter { $0.hasPrefix("ack ") }.count }
        let goal = acknowledgements() + more
        let deadline = Date().addingTimeInterval(timeout)
        while child.isRunning && Date() < deadline && acknowledgements() < goal {
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Opens the store for writing beside the running writers (as the next launch would)
    /// and checks it (FolioWritersModel.check), then `verify`.
    @discardableResult
    private func check(
        _ path: String, acknowledged: [Int], context: String
    ) async throws -> (counts: [Int], ledger: SharedRecord) {
        var options = PersistenceOptions(log: { _ in })
        options.busyTimeout = .milliseconds(Self.busyTimeoutMilliseconds)
        let persistence = try Persistence(at: path, options: options)
        defer { persistence.close() }
        let result = try await FolioWritersModel.check(
            persistence, seed: Self.seed, acknowledged: acknowledged, context: context)
        let report = persistence.verify()
        #expect(report.isClean, "\(context): \(report.lines.prefix(3))")
        return result
    }

    /// Each writer's entries at the end, read-only.
    private func finalEntries(_ path: String) async throws -> [[WriterEntry]] {
        let persistence = try Persistence(readingFrom: path, options: PersistenceOptions(log: { _ in }))
        defer { persistence.close() }
        var entries: [[WriterEntry]] = []
        for format in FolioWritersModel.formats { entries.append(try await load(persistence, format)) }
        return entries
    }

    private func load<Own: WriterEntriesFormat>(
        _ persistence: Persistence<ReadOnly>, _ format: Own.Type
    ) async throws -> [WriterEntry] {
        try await persistence.datastore(for: format).load(...).collect()
    }
}
