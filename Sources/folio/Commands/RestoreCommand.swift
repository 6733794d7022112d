import Folio
import FolioStorage

/// `folio restore BACKUP DEST`: a backup (or any store) into a new store.
enum RestoreCommand: Command {
    static let name = "restore"
    static let summary = "restore a backup into a new store, checking every page on the way"
    static let positionals = [
        PositionalSpec("BACKUP", help: "a store written by 'folio backup' (or any store)"),
        PositionalSpec("DEST", help: "where the store goes: a path that does not exist, or an empty directory"),
    ]
    static let options: [OptionSpec] = []
    static let showsProgress = true
    static let details = [
        """
        Copies the newest generation of BACKUP into a new store at DEST. Every page is read \
        and its checksum checked on the way, so a damaged backup fails instead of restoring \
        damage. Refuses to overwrite: DEST must not exist or be an empty directory (restore \
        next to the damaged store, then swap the directories). Progress goes to standard error.
        """
    ]
    static let examples = ["folio restore /backups/Library-2026-11-21.folio ~/Library-restored.folio"]

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let (backup, destination) = (arguments.positionals[0], arguments.positionals[1])
        let report = try Copying.run(quiet: arguments.flag("quiet")) { progress throws(StorageError) in
            try Store.restore(
                from: backup, to: destination,
                options: StoreOptions(createIfMissing: false, autoCompaction: nil), progress: progress)
        }
        OutputStream.standardOutput.line(
            "restored generation \(report.report.generation) from \(backup) to \(destination) in "
                + "\(Format.duration(report.elapsed)): \(Format.bytes(report.report.bytes)), "
                + "\(Format.count(report.report.pagesCopied, "page"))")
        return .success
    }
}
