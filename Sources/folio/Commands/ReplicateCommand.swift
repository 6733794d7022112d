import Dispatch
import Foundation
import Folio
import FolioStorage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `folio replicate STORE DEST [--once]`: ships a store's runs to a replica directory as
/// they commit.
enum ReplicateCommand: Command {
    static let name = "replicate"
    static let summary = "ship a store to a replica directory as it commits, until stopped"
    static let positionals = [
        PositionalSpec("STORE", help: "the store's directory"),
        PositionalSpec(
            "DEST", help: "the replica: a path that does not exist, an empty directory, or a replica of STORE"),
    ]
    static let options = [
        OptionSpec("once", help: "ship what is durable now, then exit"),
        OptionSpec(
            "interval", value: "SECONDS",
            help: "wait at least this long between shipments, shipping the commits meanwhile together (default 0)"),
    ]
    static let showsProgress = false
    static let details = [
        """
        Ships STORE's snapshot files to DEST, then every committed run as it becomes \
        durable, and prints one line per shipment. DEST is a store at every moment: open it \
        read-only and it follows; 'folio restore DEST NEW --at G' restores any generation it \
        holds. It keeps the history STORE keeps (its declared retention, 'folio log'), and \
        drops a snapshot file once STORE has. Takes no lock on STORE and runs beside its \
        writers, in any process.
        """,
        """
        Runs until interrupted (Ctrl-C, SIGTERM), then makes DEST's newest root durable and \
        exits 0; with --once, ships what is durable and exits. Killed at any moment, DEST \
        still opens at the last root it published, and the next run resumes from there. A \
        DEST that holds another store, or another history of this one (STORE was replaced \
        by an older copy), is refused and left alone. A failed shipment (DEST full or \
        unreachable) is reported on standard error and retried.
        """,
        """
        --interval SECONDS waits at least that long after each shipment and ships the \
        commits made meanwhile together, with one sync of DEST: less work beside a writer \
        that commits often, for that much more lag (0, the default, ships each commit once \
        durable).
        """,
    ]
    static let examples = [
        "folio replicate ~/Library.folio /Volumes/Backup/Library.folio",
        "folio replicate ~/Library.folio /mnt/nas/Library.folio --once",
    ]

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let (path, destination) = (arguments.positionals[0], arguments.positionals[1])
        // Opening the source first gives its usual errors (no store, not a store, a newer
        // format) before anything is created at DEST.
        try StoreAccess.openForReading(path).close()
        // Failures are reported once, with their retry delay, by `report`.
        let options = StoreOptions(createIfMissing: false, autoCompaction: nil, log: { _ in })
        let replicator = Replicator(source: path, to: DirectoryReplica(path: destination), options: options)
        if arguments.flag("once") {
            let clock = ContinuousClock()
            let start = clock.now
            let report = try replicator.ship()
            try replicator.close()
            OutputStream.standardOutput.line(
                "replicated generation \(report.generation) of \(path) to \(destination) in "
                    + "\(Format.duration(clock.now - start)): \(Format.bytes(report.bytesShipped)) shipped")
            return .success
        }
        var minimumInterval = Duration.zero
        if let text = arguments.value("interval") {
            guard let seconds = Double(text), seconds >= 0, seconds <= 3_600 else {
                throw UsageError("--interval needs a number of seconds from 0 to 3600, not '\(text)'", command: name)
            }
            minimumInterval = .milliseconds(Int((seconds * 1_000).rounded()))
        }
        let interval = minimumInterval
        let signals = StopSignals { replicator.stop() }
        defer { signals.cancel() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                do {
                    try replicator.follow(minimumInterval: interval) { event in Self.report(event) }
                    try replicator.close()
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.start()
        }
        return .success
    }

    private nonisolated static func report(_ event: ReplicationEvent) {
        switch event {
        case .shipped(let report):
            let removed =
                report.filesRemoved.isEmpty ? "" : ", \(Format.count(report.filesRemoved.count, "file")) removed"
            let line =
                "generation \(report.generation): \(Format.bytes(report.bytesShipped)) shipped\(removed)"
            DispatchQueue.main.async { OutputStream.standardOutput.line(line) }
        case .failed(let error, let delay):
            let line = "folio: replicating failed, retrying in \(Format.duration(delay)): \(error)"
            DispatchQueue.main.async { OutputStream.standardError.line(line) }
        }
    }
}

/// SIGINT and SIGTERM, caught while a command runs until stopped: the first ends it
/// cleanly through `stop`; the default action comes back with ``cancel()``.
final class StopSignals {
    private let sources: [any DispatchSourceSignal]

    init(_ stop: @escaping @Sendable () -> Void) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: stop)
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources {
            source.cancel()
            signal(Int32(source.handle), SIG_DFL)
        }
    }
}
