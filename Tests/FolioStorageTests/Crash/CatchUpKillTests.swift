import Foundation
import Testing
@_spi(Testing) @testable import FolioStorage
import FolioTestSupport

/// Writers in turn, with kills: this process keeps a store open for writing and, between its
/// own transactions, lets the lock go (`withWriterLockReleased`) while a
/// `folio-torture transfers` child writes and is killed (`kill -9` at a random instant, or
/// at a crash point of the commit or compaction paths). Taking the lock again, it catches
/// up: after each round the parent's own view holds at least every transaction anyone
/// acknowledged and at most what was attempted (the complete runs a killed child left past
/// its slot are adopted, as an open would), `verify` is clean, and the parent's next
/// transaction continues the sequence, which it can only do on the newest state.
///
/// Short by default; `FOLIO_CRASH_TESTS=1` runs more rounds.
@Suite(.serialized) struct CatchUpKillTests {
    static let seed: UInt64 = 91
    static let workload = TransferWorkload(seed: seed, blobEvery: 25, blobBytes: 1_200_000)
    static let arguments = [
        "--compact-every", "20", "--blob-every", "25", "--blob-bytes", "1200000", "--retention-ms", "0",
    ]
    static let points: [CrashPoint] = [
        .commitMidAppend, .commitAfterSnapshotSync, .commitAfterRootSlotWrite, .compactMidCopy,
        .compactBeforeRootSwitch, .compactAfterRootSwitch,
    ]

    @Test func aWriterCatchesUpAfterKilledWritersInAnotherProcess() throws {
        let rounds = CrashTestMode.pick(short: 8, long: 80)
        let tool = try ProjectExecutable.path("folio-torture")
        let directory = TemporaryDirectory("folio-catch-up-kill")
        defer { directory.remove() }
        var chain = KillChain(path: directory.child("store"), workload: Self.workload)
        var options = testOptions()
        options.retention = SnapshotRetention(gracePeriod: .zero)
        let parent = try Store.open(at: chain.path, options: options)
        defer { parent.close() }
        var rng = SplitMix64(seed: 0xCA7C)
        var kills = 0
        // Rounds where the parent's catch-up adopted complete runs a killed child left past
        // its last slot write (more than a read-only open of the slots shows).
        var runsAdopted = 0
        for round in 0..<rounds {
            // The parent's own two transactions, on whatever it caught up to.
            for _ in 0..<2 {
                let number = try TransferWorkload.count(in: parent.read()) + 1
                let transaction = try Self.workload.begin(number, in: parent)
                chain.bounds.attempted = max(chain.bounds.attempted, number)
                try transaction.commit()
                chain.bounds.acknowledged = number
                chain.bounds.generation = max(chain.bounds.generation, parent.generation)
            }
            let context = "round \(round)"
            try parent.withWriterLockReleased {
                var environment: [String: String] = [:]
                if round % 2 == 1 {
                    let point = Self.points[(round / 2) % Self.points.count]
                    environment = ["FOLIO_CRASH_POINT": point.name, "FOLIO_CRASH_POINT_SKIP": String(rng.index(3))]
                }
                let target = chain.bounds.acknowledged + 30
                let child = try ChildProcess(
                    tool, ["transfers", chain.path, String(Self.seed), String(target)] + Self.arguments,
                    environment: environment)
                if environment.isEmpty {
                    _ = try? child.waitForLine(timeout: 60) { $0.hasPrefix("open") }
                    Thread.sleep(forTimeInterval: Double(rng.index(40)) / 1000)
                    child.kill()
                }
                let status = try child.wait(timeout: 120)
                if status == -SIGKILL { kills += 1 } else { #expect(status == 0, "\(context): \(child.errorOutput)") }
                // D1-D4 on what the child left, read-only, before the parent repairs anything.
                chain.childEnded(TransferTranscript(child.output), context: context)
            }
            // The parent caught up: it holds what was acknowledged, and no more than attempted.
            let count = try Self.workload.check(parent.read())
            if count > chain.bounds.acknowledged { runsAdopted += 1 }
            #expect(count >= chain.bounds.acknowledged, "\(context): the parent holds \(count), \(chain.bounds)")
            #expect(count <= chain.bounds.attempted, "\(context): the parent holds \(count), \(chain.bounds)")
            #expect(parent.generation >= chain.seenGeneration, "\(context): generation \(parent.generation)")
            chain.bounds.acknowledged = max(chain.bounds.acknowledged, count)
            chain.seenGeneration = max(chain.seenGeneration, parent.generation)
            let report = parent.verify()
            #expect(report.isClean, "\(context): \(report.problems.prefix(3))")
        }
        #expect(kills > 0)
        print(
            "durability B6: \(kills) writer kills in \(rounds) turns; the parent caught up after each, "
                + "adopting runs past the slot in \(runsAdopted)")
    }
}
