import Folio
import FolioStorage

/// `folio backup STORE DEST`: a consistent copy of the newest generation, online.
enum BackupCommand: Command {
    static let name = "backup"
    static let summary = "copy the newest generation of a store into a new store, online"
    static let positionals = [
        PositionalSpec("STORE", help: "the store's directory"),
        PositionalSpec("DEST", help: "where the copy goes: a path that does not exist, or an empty directory"),
    ]
    static let options: [OptionSpec] = []
    static let showsProgress = true
    static let details = [
        """
        Opens the store read-only (no lock), pins the newest committed generation and copies \
        its live pages into a new store at DEST, whatever other processes commit or compact \
        meanwhile. The copy has the same generation and contents, holds only live pages, and \
        is complete only when the command succeeds (its root file is written last). Never \
        overwrites anything: DEST must not exist or be an empty directory. Progress goes to \
        standard error.
        """
    ]
    static let examples = ["folio backup ~/Library.folio /backups/Library-2026-11-21.folio"]

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let (path, destination) = (arguments.positionals[0], arguments.positionals[1])
        let store = try StoreAccess.openForReading(path)
        defer { store.close() }
        let report = try Copying.run(quiet: arguments.flag("quiet")) { progress throws(StorageError) in
            try store.backup(to: destination, progress: progress)
        }
        OutputStream.standardOutput.line(
            "backed up generation \(report.report.generation) of \(path) to \(destination) in "
                + "\(Format.duration(report.elapsed)): \(Format.bytes(report.report.bytes)), "
                + "\(Format.count(report.report.pagesCopied, "page"))")
        return .success
    }
}

/// The progress and timing shared by backup and restore.
enum Copying {
    @MainActor static func run(
        quiet: Bool, _ body: (((CompactionProgress) -> Void)?) throws(StorageError) -> BackupReport
    )
        throws(StorageError) -> (report: BackupReport, elapsed: Duration)
    {
        let reporter = ProgressReporter(mode: ProgressReporter.mode(quiet: quiet), verb: "copied")
        defer { reporter.abandon() }
        let clock = ContinuousClock()
        let start = clock.now
        let report = try body { progress in
            if case .copying(let done, let total) = progress { reporter.update(done, of: total) }
        }
        let elapsed = clock.now - start
        reporter.finish(report.bytes, of: report.bytes)
        return (report, elapsed)
    }
}
