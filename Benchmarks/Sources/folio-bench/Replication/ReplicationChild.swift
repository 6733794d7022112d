import Foundation
import FolioStorage

/// The `replication` suite's replicator process:
/// `folio-bench __child replicate-follow --source S --dest D --durability full|grouped`
/// follows store S to the replica directory D with the calls `folio replicate S D` makes
/// (a `Replicator` of S to a `DirectoryReplica` of D, default options, `follow()` on a
/// thread of its own), and prints `shipped G T` for each shipment: the generation the
/// replica published and the `CLOCK_MONOTONIC` instant it was reported, in nanoseconds.
/// It stops at the end of its standard input (``LineChild/finish()``), makes the replica's
/// root durable (`close()`) and exits.
enum ReplicationChild {
    static let command = "replicate-follow"

    /// In the child.
    static func run(source: String, destination: String) async throws {
        let replicator = Replicator(source: source, to: DirectoryReplica(path: destination))
        Thread {
            while readLine() != nil {}
            replicator.stop()
        }.start()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                do {
                    try replicator.follow { event in
                        switch event {
                        case .shipped(let report):
                            let now = MonotonicClock.nanoseconds()
                            ParentLines.send("shipped \(report.generation) \(now)")
                        case .failed(let error, _):
                            FileHandle.standardError.write(Data("replicating failed: \(error)\n".utf8))
                        }
                    }
                    try replicator.close()
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.name = "folio replication"
            thread.start()
        }
    }

    /// The parent's side: reads the child's `shipped` lines into a ``ShipmentLog`` when
    /// asked (never during the timed part: each line carries its own instant).
    final class LineReader {
        let child: LineChild
        let log: ShipmentLog

        init(child: LineChild, log: ShipmentLog) {
            self.child = child
            self.log = log
        }

        /// Reads lines until the replica has published `generation` or later; after
        /// `seconds` the child is killed and the wait fails.
        func waitUntil(_ generation: UInt64, seconds: Double) async throws {
            let child = child
            let watchdog = Watchdog(seconds: seconds) { child.kill() }
            defer { watchdog.cancel() }
            while (log.latest ?? 0) < generation {
                guard let line = await child.nextLine() else {
                    let (status, errors, _) = await child.finish()
                    throw BenchError.harness(
                        "the replicator process ended (status \(status)) before generation \(generation)"
                            + (watchdog.fired ? " (killed after \(seconds) s)" : "") + ": \(errors)")
                }
                try take(line)
            }
        }

        /// Stops the child and reads what it printed last.
        func finish() async throws {
            let (status, errors, lines) = await child.finish()
            for line in lines { try take(line) }
            guard status == 0 else {
                throw BenchError.harness("the replicator process failed (status \(status)): \(errors)")
            }
        }

        private func take(_ line: String) throws {
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[0] == "shipped", let generation = UInt64(fields[1]),
                let nanoseconds = UInt64(fields[2])
            else { throw BenchError.harness("the replicator process printed '\(line)'") }
            log.add(generation, at: nanoseconds)
        }
    }
}
