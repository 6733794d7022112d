import Foundation
import Testing
@_spi(Testing) import FolioStorage
import FolioTestSupport

/// B1: real `kill -9` of `folio-torture transfers`, chained on one store: every crash
/// point of the commit, flush, compaction and open paths (selected with
/// FOLIO_CRASH_POINT / FOLIO_CRASH_POINT_SKIP), and kills at random times, in full and
/// grouped durability. After each death the parent checks D1-D4 on what the child left
/// (``KillChain``), and the next child must open it unaided and find exactly that.
///
/// Short by default (22 kills: each crash point once); `FOLIO_CRASH_TESTS=1` runs 760 chained kills plus 40
/// kills during store creation (Docs/Durability.md §8). The same chain again under a declared
/// history retention: 20 kills, 200 in the long mode.
@Suite(.serialized) struct KillTests {
    static let seed: UInt64 = 77
    /// Blobs of 1.2 MB every 25 transactions: commits and compactions of more than one
    /// append chunk, so the mid-append and mid-copy crash points are reached.
    static let workload = TransferWorkload(seed: seed, blobEvery: 25, blobBytes: 1_200_000)
    static let arguments = [
        "--compact-every", "20", "--blob-every", "25", "--blob-bytes", "1200000", "--retention-ms", "0",
        // A transaction after each background pass of every compaction: kills land while
        // commits go into the old file beside the compaction's copy, and in its catch-up.
        "--commit-during-compaction",
    ]

    /// Crash points after creation, with how many times each can be skipped within one
    /// child's run of at most 60 transactions (3 compactions, 2 blob commits).
    static let points: [(CrashPoint, skips: Int)] = [
        (.openAfterLock, 1), (.commitMidAppend, 2), (.commitBeforeSnapshotSync, 40), (.commitAfterSnapshotSync, 40),
        (.commitAfterRootSlotWrite, 40), (.commitBeforeAcknowledge, 40),
        (.compactMidCopy, 3), (.compactBeforeCatchUp, 3), (.compactBeforeRootSwitch, 3), (.compactAfterRootSwitch, 3),
        (.compactMidRemove, 3),
    ]

    @Test func chainedKillsOnOneStore() throws {
        let kills = CrashTestMode.pick(short: 22, long: 760)
        let tool = try ProjectExecutable.path("folio-torture")
        let directory = TemporaryDirectory("folio-kill")
        defer { directory.remove() }
        var chain = KillChain(path: directory.child("store"), workload: Self.workload)
        var rng = SplitMix64(seed: 0xC4A5)
        let byPoint = try chain.killRepeatedly(
            tool: tool, seed: Self.seed, arguments: Self.arguments, kills: kills, points: Self.points, rng: &rng)
        // A last child finishes the job: the store opens unaided and everything is there.
        let last = try ChildProcess(
            tool, ["transfers", chain.path, String(Self.seed), String(chain.bounds.acknowledged + 5)] + Self.arguments)
        #expect(try last.wait() == 0, "\(last.errorOutput.suffix(400))")
        chain.childEnded(TransferTranscript(last.output), context: "the last child")
        #expect(chain.bounds.acknowledged > 0)
        print(
            "durability B1: \(chain.kills) kills survived on one store (\(chain.cleanExits) clean exits), "
                + "\(chain.bounds.acknowledged) transactions at the end, \(chain.pastGenerationsChecked) past generations read "
                + "back; by point: "
                + byPoint.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
    }

    /// The chain of ``chainedKillsOnOneStore()`` under a declared retention of 150
    /// generations, compacting every 10 transactions: the retained generations live in a
    /// dozen replaced files, which removal keeps, and lets go once they fall out of the
    /// newest 150. After each death every retained generation must be there and read right,
    /// and no more files than the retention needs be on disk (``KillChain``'s
    /// `checkRetainedHistory`). Crash point `compact.midRemove` is left out: files are let
    /// go at writer open or a second after they were kept, so a child seldom reaches it.
    ///
    /// Short by default (20 kills: each crash point once, and past the first 150
    /// generations); `FOLIO_CRASH_TESTS=1` runs 200.
    @Test func chainedKillsUnderDeclaredRetention() throws {
        let kills = CrashTestMode.pick(short: 20, long: 200)
        let tool = try ProjectExecutable.path("folio-torture")
        let directory = TemporaryDirectory("folio-kill-retained")
        defer { directory.remove() }
        let retention = DeclaredRetention(generations: 150, compactEvery: 10)
        var arguments = Self.arguments
        arguments[arguments.firstIndex(of: "--compact-every")! + 1] = String(retention.compactEvery)
        arguments += retention.arguments
        var chain = KillChain(path: directory.child("store"), workload: Self.workload, retention: retention)
        var rng = SplitMix64(seed: 0x7E7A)
        let byPoint = try chain.killRepeatedly(
            tool: tool, seed: Self.seed, arguments: arguments, kills: kills,
            points: Self.points.filter { $0.0 != .compactMidRemove }, rng: &rng)
        let last = try ChildProcess(
            tool, ["transfers", chain.path, String(Self.seed), String(chain.bounds.acknowledged + 5)] + arguments)
        #expect(try last.wait() == 0, "\(last.errorOutput.suffix(400))")
        chain.childEnded(TransferTranscript(last.output), context: "the last child")
        #expect(chain.declaredAt != nil, "the store never held the declaration")
        #expect(chain.retained.fullRanges > 0, "no death found a full retained range: the chain is too short")
        print(
            "durability B1 (declared retention of \(retention.generations) generations): \(chain.kills) kills "
                + "(\(chain.cleanExits) clean exits), \(chain.bounds.acknowledged) transactions at the end, declared "
                + "at generation \(chain.declaredAt ?? 0); \(chain.retained); by point: "
                + byPoint.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
    }

    /// Kills at each crash point of store creation, on fresh directories: the directory
    /// is left either without a store (the next writer creates it) or with an empty one at
    /// generation 1, and the next child opens it unaided and runs to the end.
    @Test func killsDuringCreation() throws {
        let rounds = CrashTestMode.pick(short: 1, long: 8)
        let tool = try ProjectExecutable.path("folio-torture")
        let creation: [CrashPoint] = [
            .createAfterLock, .createAfterSnapshot, .createAfterInfo, .createBeforeRootRename, .createAfterRootRename,
        ]
        var kills = 0
        for round in 0..<rounds {
            for point in creation {
                let directory = TemporaryDirectory("folio-create")
                defer { directory.remove() }
                var chain = KillChain(path: directory.child("store"), workload: Self.workload)
                let grouped = round % 2 == 1
                let arguments =
                    ["transfers", chain.path, String(Self.seed), "3"] + Self.arguments + (grouped ? ["--grouped"] : [])
                let child = try ChildProcess(tool, arguments, environment: ["FOLIO_CRASH_POINT": point.name])
                #expect(try child.wait() == -SIGKILL, "\(point) was not reached: \(child.output)")
                kills += 1
                chain.childEnded(TransferTranscript(child.output), context: "killed at \(point)")
                let next = try ChildProcess(tool, arguments)
                #expect(try next.wait() == 0, "after \(point): \(next.errorOutput.suffix(400))")
                let transcript = TransferTranscript(next.output)
                #expect(transcript.done?.count == 3, "after \(point): \(next.output)")
                chain.childEnded(transcript, context: "after a kill at \(point)")
            }
        }
        print("durability B1: \(kills) kills during store creation survived")
    }
}
