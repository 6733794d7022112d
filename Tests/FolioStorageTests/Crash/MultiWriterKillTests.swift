import Foundation
import Testing
import FolioStorage
import FolioTestSupport

/// Writer processes killed with `kill -9` while the others keep writing (B7): three
/// `folio-torture concurrent-writers` processes, two threads each, commit into one store at
/// once (writers in turn, Docs/Durability.md §1.6), each thread in a tree of its own and all
/// of them on one shared counter, waiting up to 30 s for each other's turns. Each round kills
/// one writer at a seeded random moment (possibly in its open's recovery, its turn's
/// catch-up or mid-commit) and restarts it, so it resumes from what the store holds. After
/// each kill the store, opened for writing beside the running writers, holds every
/// acknowledged commit of every thread, each thread's commits form a prefix, the shared
/// total equals its log and the log holds exactly the commits that should have logged (no
/// update lost across processes, no half transaction), and `verify` is clean. A read-only
/// `folio-torture follow-generations` process follows the store throughout: at the end it
/// has been told of every generation in order, none skipped unless a `historyUnavailable`
/// event said so, up to the final one.
///
/// Short by default (3 kills); `FOLIO_CRASH_TESTS=1` runs 30.
@Suite(.serialized) struct MultiWriterKillTests {
    static let writers = 3
    static let threadsPerWriter = 2
    static let threads = writers * threadsPerWriter
    static let busyTimeout: Duration = .seconds(30)

    @Test func acknowledgedCommitsOfWriterProcessesSurviveKills() throws {
        let kills = CrashTestMode.pick(short: 3, long: 30)
        // Commits per thread a writer makes before it ends by itself; one that ends while
        // kills remain is started again with `step` more, so that all three keep writing
        // (another process's turn may starve one for a while, and the others run ahead).
        let (base, step) = CrashTestMode.pick(short: (300, 100), long: (600, 200))
        let tool = try ProjectExecutable.path("folio-torture")
        let directory = TemporaryDirectory("folio-multi-writer-kill")
        defer { directory.remove() }
        let path = directory.child("store")
        let start = Date()
        // The follower opens read-only, which needs a store.
        try Store.open(at: path, options: StoreOptions(log: { _ in })).close()
        var started: [ChildProcess] = []
        // Declared after the directory's removal, so it runs first: nothing writes into a
        // removed directory, or outlives the test, if it stops part-way.
        defer {
            for child in started where child.isRunning {
                child.kill()
                _ = try? child.wait(timeout: 10)
            }
        }
        let follower = try ChildProcess(tool, ["follow-generations", path])
        started.append(follower)
        try follower.waitForLine(timeout: 60) { $0.hasPrefix("start ") }

        var targets = Array(repeating: base, count: Self.writers)
        /// Starts writer `index` (threads 2 × index and the next), which resumes from what the
        /// store holds: the restart after a kill is what makes the next round's kill land on
        /// a store another process's death left behind.
        func startWriter(_ index: Int) throws -> ChildProcess {
            let child = try ChildProcess(
                tool,
                [
                    "concurrent-writers", path, String(Self.threadsPerWriter), String(targets[index]),
                    "--first-thread", String(index * Self.threadsPerWriter),
                    "--busy-timeout-ms", String(Self.busyTimeout.components.seconds * 1000),
                ])
            started.append(child)
            return child
        }
        /// Waits for a writer that ended by itself: it may only have reached its target.
        func expectFinished(_ index: Int, _ writer: ChildProcess, context: String) throws {
            let status = try writer.wait(timeout: 600)
            #expect(status == 0, "\(context): writer \(index) failed: \(writer.errorOutput.suffix(600))")
            #expect(writer.output.last == "done", "\(context): writer \(index) ended at \(writer.output.suffix(2))")
        }
        var writers = try (0..<Self.writers).map { try startWriter($0) }
        var rng = SplitMix64(seed: 0xB7)
        var acknowledged = Array(repeating: -1, count: Self.threads)
        var killed = 0
        for round in 0..<(kills * 3) where killed < kills {
            let context = "round \(round)"
            for index in 0..<Self.writers where !writers[index].isRunning {
                try expectFinished(index, writers[index], context: context)
                targets[index] += step
                writers[index] = try startWriter(index)
            }
            let victim = rng.index(Self.writers)
            let child = writers[victim]
            // A random moment: after 0 to 39 more of its commits (0: at once, which for a
            // writer just restarted is in its open or its first turn's catch-up), and up to
            // 20 ms more.
            waitForAcknowledgements(of: child, more: rng.index(40), timeout: 60)
            Thread.sleep(forTimeInterval: Double(rng.index(20)) / 1000)
            child.kill()
            let status = try child.wait(timeout: 60)
            if status == -SIGKILL {
                killed += 1
            } else {
                #expect(status == 0, "\(context): writer \(victim) failed: \(child.errorOutput.suffix(600))")
            }
            // Acknowledgements first, then the store: it must hold at least these.
            for child in started where child !== follower { record(child.output, into: &acknowledged) }
            _ = try check(path, acknowledged: acknowledged, context: context)
            // Killed, it resumes from what the store holds; ended, the next round restarts it.
            if status == -SIGKILL { writers[victim] = try startWriter(victim) }
        }
        #expect(killed == kills)

        // The end: every writer finishes, those with a lower target then write on to the
        // highest, so that every thread ends with the same number of commits.
        for (index, writer) in writers.enumerated() { try expectFinished(index, writer, context: "the end") }
        let target = targets.max()!
        let lagging = (0..<Self.writers).filter { targets[$0] < target }
        for index in lagging {
            targets[index] = target
            writers[index] = try startWriter(index)
        }
        for index in lagging { try expectFinished(index, writers[index], context: "the end") }
        for child in started where child !== follower { record(child.output, into: &acknowledged) }
        let final = try check(path, acknowledged: acknowledged, context: "the end")
        #expect(final.counts == Array(repeating: target, count: Self.threads), "the end: \(final.counts)")

        let toldBeforeTheEnd = follower.output.filter { $0.hasPrefix("gen ") }.count
        follower.closeInput()
        let status = try follower.wait(timeout: 60)
        #expect(status == 0, "the follower failed: \(follower.errorOutput.suffix(600))")
        // It followed while the writers wrote, not only when asked at the end.
        #expect(toldBeforeTheEnd > 0, "the follower was told of no commit while the writers ran")
        let heard = checkFollowed(follower.output, finalGeneration: final.generation)
        print(
            "durability B7: \(String(format: "%.0f", Date().timeIntervalSince(start))) s, \(killed) kills of "
                + "\(Self.writers) writer processes (\(Self.threadsPerWriter) threads each, \(target) commits per "
                + "thread), generation \(final.generation); the follower was told of \(heard.generations) "
                + "generations, \(heard.unavailable) gaps announced as history unavailable")
    }

    /// Waits until `child` has printed `more` "ack" lines beyond those it printed so far (or
    /// ended), so that the kill lands while it is writing rather than while another
    /// process's turn keeps it waiting; a writer that waits longer than its busy timeout
    /// for its turn fails by itself, so the timeout here is not a verdict.
    private func waitForAcknowledgements(of child: ChildProcess, more: Int, timeout: Double) {
        func acknowledgements() -> Int { child.output.lazy.filter { $0.hasPrefix("ack ") }.count }
        let goal = acknowledgements() + more
        let deadline = Date().addingTimeInterval(timeout)
        while child.isRunning && Date() < deadline && acknowledgements() < goal {
            Thread.sleep(forTimeInterval: 0.002)
        }
    }

    /// Adds the "ack t i" lines of one writer process to the highest acknowledged commit of
    /// each thread.
    private func record(_ lines: [String], into acknowledged: inout [Int]) {
        for line in lines where line.hasPrefix("ack ") {
            let parts = line.split(separator: " ")
            if parts.count == 3, let thread = Int(parts[1]), let i = Int(parts[2]) {
                acknowledged[thread] = max(acknowledged[thread], i)
            }
        }
    }

    /// Opens the store for writing beside the running writers (recovery included, as the
    /// next writer would) and checks it; returns each thread's commit count and the
    /// generation it saw.
    private func check(
        _ path: String, acknowledged: [Int], context: String
    ) throws -> (counts: [Int], generation: UInt64) {
        var options = StoreOptions(log: { _ in })
        options.busyTimeout = Self.busyTimeout
        let store = try Store.open(at: path, options: options)
        defer { store.close() }
        let view = try store.read()
        let counts = try ConcurrentWritersModel.check(
            view, threads: 0..<Self.threads, acknowledged: acknowledged, context: context)
        let logged = Int(try view.count(in: "log"))
        // Every third commit of a thread (0, 3, 6, ...) logs itself in the same transaction.
        let shouldLog = counts.reduce(0) { $0 + ($1 + 2) / 3 }
        #expect(logged == shouldLog, "\(context): the log holds \(logged) commits, the trees \(shouldLog)")
        let report = store.verify()
        #expect(report.isClean, "\(context): \(report.problems.prefix(3))")
        return (counts, view.generation)
    }

    /// Checks the follower's lines: after "start G", each "gen" is the generation after the
    /// last one it was told of, or an "unavailable A B" line says it missed A + 1 ... B; the
    /// last reaches "end G", the store's final generation. Returns how many generations it
    /// was told of and how many gaps were announced.
    private func checkFollowed(
        _ lines: [String], finalGeneration: UInt64
    ) -> (generations: Int, unavailable: Int) {
        var last: UInt64?
        var generations = 0, unavailable = 0, ended = false
        for line in lines {
            let parts = line.split(separator: " ").map(String.init)
            let numbers = parts.dropFirst().compactMap { UInt64($0) }
            switch (parts.first, numbers.count) {
            case ("start", 1) where last == nil:
                last = numbers[0]
            case ("gen", 1) where last != nil && !ended:
                #expect(numbers[0] == last! + 1, "the follower went from generation \(last!) to \(numbers[0])")
                last = numbers[0]
                generations += 1
            case ("unavailable", 2) where last != nil && !ended:
                #expect(
                    numbers[0] == last! && numbers[1] > numbers[0],
                    "the follower, at generation \(last!), was told \(line)")
                last = numbers[1]
                unavailable += 1
            case ("end", 1) where last != nil && !ended:
                #expect(numbers[0] == last!, "the follower ended at \(numbers[0]) but was told of \(last!)")
                #expect(numbers[0] == finalGeneration, "the follower ended at \(numbers[0]), not \(finalGeneration)")
                ended = true
            default:
                Issue.record("unexpected line of the follower: \(line)")
            }
        }
        #expect(ended, "the follower printed no end: \(lines.suffix(3))")
        return (generations, unavailable)
    }
}
