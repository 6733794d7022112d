import Foundation
import Testing
@testable import FolioStorage
import FolioTestSupport

/// Concurrent writers killed with `kill -9` (`folio-torture concurrent-writers`: four
/// threads committing at once, disjoint trees and one shared counter). After each kill the
/// store, reopened, holds every acknowledged commit, each thread's commits form a prefix,
/// and the shared total equals its log (no lost update, no half transaction). Chained:
/// the next child continues on what the last one left.
///
/// Short by default (3 kills); `FOLIO_CRASH_TESTS=1` runs 40.
@Suite(.serialized) struct ConcurrentWriterKillTests {
    static let threads = 4

    @Test func acknowledgedConcurrentCommitsSurviveKills() throws {
        let kills = CrashTestMode.pick(short: 3, long: 40)
        let tool = try ProjectExecutable.path("folio-torture")
        let directory = TemporaryDirectory("folio-concurrent-kill")
        defer { directory.remove() }
        let path = directory.child("store")
        var rng = SplitMix64(seed: 0x3A11)
        var acknowledged = Array(repeating: -1, count: Self.threads)
        var killed = 0
        for round in 0..<(kills * 3) where killed < kills {
            let target = (acknowledged.max() ?? 0) + 400
            let child = try ChildProcess(tool, ["concurrent-writers", path, String(Self.threads), String(target)])
            _ = try? child.waitForLine(timeout: 60) { $0.hasPrefix("ack") }
            Thread.sleep(forTimeInterval: Double(rng.index(30)) / 1000)
            child.kill()
            let status = try child.wait(timeout: 120)
            if status == -SIGKILL {
                killed += 1
            } else {
                #expect(status == 0, "round \(round): \(child.errorOutput.suffix(400))")
            }
            for line in child.output where line.hasPrefix("ack ") {
                let parts = line.split(separator: " ")
                if parts.count == 3, let thread = Int(parts[1]), let i = Int(parts[2]) {
                    acknowledged[thread] = max(acknowledged[thread], i)
                }
            }
            try check(path, acknowledged: acknowledged, context: "round \(round)")
        }
        #expect(killed == kills)
    }

    /// Opens the store as the next writer would (recovery included) and checks it.
    private func check(_ path: String, acknowledged: [Int], context: String) throws {
        let store = try Store.open(at: path, options: StoreOptions(log: { _ in }))
        defer { store.close() }
        let view = try store.read()
        _ = try ConcurrentWritersModel.check(
            view, threads: 0..<Self.threads, acknowledged: acknowledged, context: context)
        #expect(store.verify().isClean, "\(context)")
    }
}
