import Testing
import Foundation
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport
import LibraryExample

/// `kill -9` of a writer of the key-value store (`folio-torture values-kill`), chained on one
/// store, in full and grouped durability: after each death the store opens unaided, every
/// value whose `flush()` returned is there ("counter" is at least the last "flushed n"), no
/// transaction is half kept ("pair/a" == "pair/b", and author n exists for the pair's n),
/// and the store verifies clean. The next child continues from what it finds.
///
/// Short by default (8 kills); `FOLIO_CRASH_TESTS=1` runs 120.
@Suite(.serialized) struct KeyValueKillTests {
    static var kills: Int { ProcessInfo.processInfo.environment["FOLIO_CRASH_TESTS"] == "1" ? 120 : 8 }

    @Test func flushedValuesSurviveKillNine() async throws {
        let tool = try ProjectExecutable.path("folio-torture")
        let path = KV.temporaryPath("kill")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var rng = SplitMix64(seed: 0x6B76)
        var acknowledged = 0
        var killed = 0
        var round = 0
        while killed < Self.kills && round < Self.kills * 3 {
            round += 1
            let grouped = round % 3 == 0
            var arguments = ["values-kill", path, String(acknowledged + 400)]
            if grouped { arguments.append("--grouped") }
            let child = try ChildProcess(tool, arguments)
            _ = try? await child.nextLine(timeout: 60) { $0.hasPrefix("flushed") }
            try await Task.sleep(for: .milliseconds(rng.index(30)))
            child.kill()
            let status = try await child.waitUntilExit(timeout: 120)
            if status == -SIGKILL {
                killed += 1
            } else {
                #expect(status == 0, "round \(round): the child failed: \(child.errorOutput.suffix(400))")
            }
            let flushed = child.output.compactMap { $0.hasPrefix("flushed ") ? Int($0.dropFirst(8)) : nil }.max() ?? 0
            acknowledged = max(acknowledged, flushed)
            try await check(path, acknowledged: acknowledged, context: "round \(round)\(grouped ? " (grouped)" : "")")
        }
        #expect(killed >= Self.kills / 2, "only \(killed) kills in \(round) rounds")
        #expect(acknowledged > 0)
        print("key-value kills: \(killed) kills in \(round) rounds, \(acknowledged) steps flushed at the end")
    }

    /// Opens the store as the next launch would and checks what the child left.
    private func check(_ path: String, acknowledged: Int, context: String) async throws {
        let persistence = try Persistence(at: path, options: PersistenceOptions(log: { _ in }))
        defer { persistence.close() }
        let values = persistence.values
        let counter = try values.value(for: ValueKey<Int>("counter", default: 0))
        #expect(counter >= acknowledged, "\(context): counter \(counter), but \(acknowledged) was flushed")
        let a = try values.value(for: ValueKey<Int>("pair/a", default: 0))
        let b = try values.value(for: ValueKey<Int>("pair/b", default: 0))
        #expect(a == b, "\(context): a transaction was half kept: pair/a \(a), pair/b \(b)")
        if a > 0 {
            let author = try await persistence.datastore(for: LibraryExample.AuthorFormat.self).load(a)
            #expect(author?.born == a, "\(context): pair \(a) was kept without its author")
        }
        #expect(counter - a < 3, "\(context): counter \(counter) is past the last pair \(a) by a whole cycle")
        let report = persistence.verify()
        #expect(report.isClean, "\(context): \(report.lines)")
    }
}
