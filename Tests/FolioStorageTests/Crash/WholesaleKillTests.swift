import Foundation
import Testing
@_spi(Testing) import FolioStorage
import FolioTestSupport

/// B1 across format version 3: `kill -9` of `folio-torture transfers` on stores that
/// become version 3 during the run. The children run with a change-record key limit of 150
/// and every fifth transaction rewrites 200 keys of tree `stamps`, so its commit records
/// that tree wholesale; the first such commit upgrades the store (Docs/Format.md §18.2).
/// After each death the parent checks D1-D4 as ``KillTests`` does, and that the store is
/// version 3 exactly when it holds a stamps transaction (``KillChain``).
///
/// Short by default (7 kills of the upgrading commit, 10 chained kills); `FOLIO_CRASH_TESTS=1`:
/// 21 and 300.
@Suite(.serialized) struct WholesaleKillTests {
    static let seed: UInt64 = 303
    static let wholesaleEvery = 5
    static let workload = TransferWorkload(
        seed: seed, blobEvery: 25, blobBytes: 1_200_000, wholesaleEvery: wholesaleEvery, wholesaleKeys: 200)
    /// The limit is above the 100 accounts transaction 1 opens, so only stamps transactions
    /// are recorded wholesale.
    static let wholesale = [
        "--key-limit", "150", "--wholesale-every", String(wholesaleEvery), "--wholesale-keys", "200",
    ]
    static let arguments = KillTests.arguments + wholesale

    /// The commit that upgrades the store, killed at each crash point of a commit: children
    /// bring a fresh store to the transaction before the first stamps transaction (version
    /// 2), then a child is killed at its first pass of the point, which the upgrading commit
    /// (or, grouped, the flush that covers it) reaches. The store must be left at version 2
    /// without the stamps, or at version 3 with them; the next child opens it unaided and
    /// goes on, and the store ends at version 3.
    @Test func upgradingCommitKilledAtEachPoint() throws {
        let rounds = CrashTestMode.pick(short: 1, long: 3)
        let tool = try ProjectExecutable.path("folio-torture")
        // Each point, and whether the upgrading commit's version 3 slot is on disk when it is
        // reached. (Grouped mode acknowledges in its flush, which has no separate point.)
        let points: [(CrashPoint, upgraded: Bool)] = [
            (.commitBeforeSnapshotSync, false), (.commitAfterSnapshotSync, false), (.commitAfterRootSlotWrite, true),
            (.commitBeforeAcknowledge, true),
        ]
        var kills = 0, upgraded = 0
        for round in 0..<rounds {
            for (point, upgrades) in points {
                for grouped in [false, true] where !(grouped && point == .commitBeforeAcknowledge) {
                    let directory = TemporaryDirectory("folio-upgrade-kill")
                    defer { directory.remove() }
                    var chain = KillChain(path: directory.child("store"), workload: Self.workload)
                    let mode = grouped ? ["--grouped"] : []
                    let context = "round \(round), \(point.name)\(grouped ? ", grouped" : "")"
                    let before = try ChildProcess(
                        tool,
                        ["transfers", chain.path, String(Self.seed), String(Self.wholesaleEvery - 1)] + Self.arguments
                            + mode)
                    #expect(try before.wait() == 0, "\(context): \(before.errorOutput.suffix(400))")
                    chain.childEnded(TransferTranscript(before.output), context: "\(context), before")
                    #expect(chain.formatVersion == 2, "\(context): version \(chain.formatVersion) before the stamps")

                    let killed = try ChildProcess(
                        tool,
                        ["transfers", chain.path, String(Self.seed), String(Self.wholesaleEvery + 3)] + Self.arguments
                            + mode,
                        environment: ["FOLIO_CRASH_POINT": point.name])
                    #expect(try killed.wait() == -SIGKILL, "\(context): not reached: \(killed.output.suffix(5))")
                    kills += 1
                    chain.childEnded(TransferTranscript(killed.output), context: "\(context), killed")
                    #expect(chain.formatVersion == (upgrades ? 3 : 2), "\(context): version \(chain.formatVersion)")
                    if chain.formatVersion == 3 { upgraded += 1 }

                    let after = try ChildProcess(
                        tool,
                        ["transfers", chain.path, String(Self.seed), String(3 * Self.wholesaleEvery)] + Self.arguments
                            + mode)
                    #expect(try after.wait() == 0, "\(context): \(after.errorOutput.suffix(400))")
                    let transcript = TransferTranscript(after.output)
                    #expect(transcript.done?.count == 3 * Self.wholesaleEvery, "\(context): \(after.output.suffix(3))")
                    chain.childEnded(transcript, context: "\(context), after")
                    #expect(chain.formatVersion == 3, "\(context): version \(chain.formatVersion) at the end")
                }
            }
        }
        print("durability B1 (version 3): \(kills) kills of the upgrading commit, \(upgraded) left it upgraded")
    }

    /// Kills chained on one store that crosses into version 3 and keeps committing trees
    /// wholesale, at every crash point and at random times, with a read-only process
    /// (`folio-torture transfer-reader`) following the store from the first child to the
    /// last: every view it takes must equal the model after some count, at the right format
    /// version, and it must have moved across stamps transactions.
    @Test func chainedKillsAcrossWholesaleCommits() throws {
        let kills = CrashTestMode.pick(short: 10, long: 300)
        let tool = try ProjectExecutable.path("folio-torture")
        let directory = TemporaryDirectory("folio-wholesale-kill")
        defer { directory.remove() }
        var chain = KillChain(path: directory.child("store"), workload: Self.workload)
        // A store at version 2 first, so that the reader sees the upgrade too.
        let setup = try ChildProcess(
            tool, ["transfers", chain.path, String(Self.seed), String(Self.wholesaleEvery - 1)] + Self.arguments)
        #expect(try setup.wait() == 0, "\(setup.errorOutput.suffix(400))")
        chain.childEnded(TransferTranscript(setup.output), context: "setup")
        let reader = try ChildProcess(
            tool,
            // The writer's options: the reader needs the workload's, and ignores the rest.
            ["transfer-reader", chain.path, String(Self.seed), "86400", "--until-eof"] + Self.arguments)
        var rng = SplitMix64(seed: 0x3_C4A5)
        let byPoint = try chain.killRepeatedly(
            tool: tool, seed: Self.seed, arguments: Self.arguments, kills: kills, points: KillTests.points, rng: &rng)
        let last = try ChildProcess(
            tool,
            ["transfers", chain.path, String(Self.seed), String(chain.bounds.acknowledged + 2 * Self.wholesaleEvery)]
                + Self.arguments)
        #expect(try last.wait() == 0, "\(last.errorOutput.suffix(400))")
        chain.childEnded(TransferTranscript(last.output), context: "the last child")
        #expect(chain.formatVersion == 3)

        reader.closeInput()
        #expect(try reader.wait(timeout: 120) == 0, "the reader failed: \(reader.errorOutput.suffix(500))")
        let summary = reader.output.last { $0.hasPrefix("views") } ?? "no summary"
        let parts = summary.split(separator: " ")
        #expect(parts.count == 8 && (Int(parts[7]) ?? 0) > 0, "the reader crossed no stamps transaction: \(summary)")
        let stamps = chain.bounds.acknowledged / Self.wholesaleEvery
        print(
            "durability B1 (version 3): \(chain.kills) kills survived on one store (\(chain.cleanExits) clean exits), "
                + "\(chain.bounds.acknowledged) transactions at the end, \(stamps) of them recorded wholesale, "
                + "\(chain.upgradesSeen) upgrade seen; by point: "
                + byPoint.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                + "; reader: \(summary)")
    }
}
