import Foundation
import Testing
import FolioStorage
import FolioTestSupport

/// B2: one writer process and two read-only processes on one store. The writer runs the
/// transfer workload with a compaction every 15 transactions and is killed (`kill -9`) at
/// random times and restarted; the readers refresh and read continuously, checking every
/// view against the workload's model (`folio-torture transfer-reader`): a view mixing two
/// generations, or any read error, fails the reader. Pass: both readers exit cleanly,
/// having followed many generations, and the store passes D1-D4 at the end.
///
/// Short by default (5 seconds, 2 kills); `FOLIO_CRASH_TESTS=1`: 60 seconds, 10 kills.
@Suite(.serialized) struct ReadersDuringKillsTests {
    static let seed: UInt64 = 123
    static let workload = TransferWorkload(seed: seed, blobEvery: 25, blobBytes: 200_000)
    static let blob = ["--blob-every", "25", "--blob-bytes", "200000"]

    @Test func readersNeverFailWhileTheWriterIsKilled() throws {
        let seconds = CrashTestMode.pick(short: 5.0, long: 60.0)
        let kills = CrashTestMode.pick(short: 2, long: 10)
        let tool = try ProjectExecutable.path("folio-torture")
        let directory = TemporaryDirectory("folio-readers")
        defer { directory.remove() }
        let path = directory.child("store")
        var chain = KillChain(path: path, workload: Self.workload)
        // The readers need a store to open.
        let setup = try ChildProcess(tool, ["transfers", path, String(Self.seed), "20"] + Self.blob)
        #expect(try setup.wait() == 0)
        chain.childEnded(TransferTranscript(setup.output), context: "setup")

        let readers = try (0..<2).map { _ in
            try ChildProcess(tool, ["transfer-reader", path, String(Self.seed), String(seconds + 2)] + Self.blob)
        }
        var rng = SplitMix64(seed: 0xB2)
        let start = Date()
        var killed = 0
        var compactions = 0
        while killed < kills {
            // Spread the kills over the run: each writer lives about seconds / kills.
            let life = seconds / Double(kills) * (0.5 + Double(rng.index(100)) / 100)
            let writer = try ChildProcess(
                tool,
                [
                    "transfers", path, String(Self.seed), "100000000", "--compact-every", "15",
                    "--retention-ms", "1000",
                ] + Self.blob)
            Thread.sleep(forTimeInterval: life)
            writer.kill()
            let status = try writer.wait()
            #expect(status == -SIGKILL, "the writer ended by itself: \(writer.errorOutput.suffix(300))")
            killed += 1
            let transcript = TransferTranscript(writer.output)
            compactions += transcript.compactions
            chain.childEnded(transcript, context: "writer kill \(killed)")
        }
        var summaries: [String] = []
        for (index, reader) in readers.enumerated() {
            let status = try reader.wait(timeout: seconds + 60)
            #expect(status == 0, "reader \(index) failed: \(reader.errorOutput.suffix(500))")
            let summary = reader.output.last { $0.hasPrefix("views") } ?? "no summary"
            let parts = summary.split(separator: " ")
            #expect(parts.count == 8 && Int(parts[1])! > 5 && Int(parts[3])! > 1, "reader \(index): \(summary)")
            summaries.append(summary)
        }
        #expect(compactions > 0)
        print(
            "durability B2: \(String(format: "%.0f", Date().timeIntervalSince(start))) s, \(killed) writer kills, "
                + "\(compactions) compactions, \(chain.bounds.acknowledged) transactions; readers: \(summaries.joined(separator: "; "))"
        )
    }
}
