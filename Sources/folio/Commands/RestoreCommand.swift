import Foundation
import Folio
import FolioStorage

/// `folio restore BACKUP DEST`: a backup (or any store) into a new store.
enum RestoreCommand: Command {
    static let name = "restore"
    static let summary = "restore a backup or replica into a new store, checking every page and run on the way"
    static let positionals = [
        PositionalSpec("BACKUP", help: "a store written by 'folio backup' (or any store)"),
        PositionalSpec("DEST", help: "where the store goes: a path that does not exist, or an empty directory"),
    ]
    static let options = [
        OptionSpec("at", value: "GENERATION", help: "restore that generation (as 'folio log' lists them)"),
        OptionSpec("checkpoint", value: "NAME", help: "restore the generation checkpoint NAME keeps"),
        OptionSpec(
            "time", value: "ISO8601",
            help: "restore the newest generation committed at or before that time (2026-11-28T06:55:21Z)"),
    ]
    static let showsProgress = true
    static let details = [
        """
        Copies the newest intact generation of BACKUP into a new store at DEST. The snapshot \
        file is read once to check every commit run's checksum up to that generation against the \
        pages the run holds, and every page copied is checked against its own checksum: damage \
        is never restored. If the \
        newest generation is damaged (a page or commit page that fails its checksum, a run that \
        does not match, a file cut short), the restore steps back to the newest generation that \
        lies wholly before the damage, and says which and why. Refuses to overwrite: DEST must not exist or be an empty directory (restore \
        next to the damaged store, then swap the directories). Progress goes to standard error.
        """,
        """
        Point-in-time restore: with --at, --checkpoint or --time (one of them), the store as it \
        was at that generation instead, which BACKUP must still hold (its declared history, \
        'folio log'); the restored store starts at that generation, with no history before \
        it. A generation BACKUP no longer holds is an error naming the oldest it holds; a \
        generation that is damaged is an error naming the file and offset (nothing is left at \
        DEST).
        """,
    ]
    static let examples = [
        "folio restore /backups/Library-2026-11-21.folio ~/Library-restored.folio",
        "folio restore ~/Library.folio ~/Library-before-import.folio --checkpoint \"before import\"",
        "folio restore ~/Library.folio ~/Library-at-noon.folio --time 2026-11-28T12:00:00Z",
    ]

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let (backup, destination) = (arguments.positionals[0], arguments.positionals[1])
        let chosen = ["at", "checkpoint", "time"].filter { arguments.value($0) != nil }
        guard chosen.count <= 1 else {
            throw UsageError("give at most one of --at, --checkpoint and --time", command: name)
        }
        let options = StoreOptions(createIfMissing: false, autoCompaction: nil)
        var generation: UInt64?
        if chosen.isEmpty || chosen == ["at"] {
            // Not opened here: a damaged store may not open, and the restore then still finds
            // its newest intact generation.
            generation = try PointInTime.generation(arguments)
        } else {
            let source = try Store.openReadOnly(at: backup, options: options)
            defer { source.close() }
            generation = try PointInTime.generation(in: source, arguments)
        }
        let restored = try Copying.run(quiet: arguments.flag("quiet")) { progress throws(StorageError) in
            try Store.restore(from: backup, to: destination, at: generation, options: options, progress: progress)
        }
        let report = restored.report
        let output = OutputStream.standardOutput
        output.line(
            "restored generation \(report.generation) from \(backup) to \(destination) in "
                + "\(Format.duration(restored.elapsed)): \(Format.bytes(report.bytes)), "
                + "\(Format.count(report.pagesCopied, "page")); checked \(Format.count(report.runsChecked, "run")) "
                + "in \(Format.bytes(report.bytesChecked))")
        if report.fellBack {
            output.line(
                "the newest generation, \(report.newest), is damaged: restored \(report.generation), the newest "
                    + "generation wholly before the damage")
            for damage in report.damage { output.line("  \(damage)") }
        }
        return .success
    }
}

/// Which generation `folio restore --at/--checkpoint/--time` names in a store.
enum PointInTime {
    /// The generation `--at` names, or nil if it is not given.
    static func generation(_ arguments: ParsedArguments) throws -> UInt64? {
        guard let text = arguments.value("at") else { return nil }
        guard let generation = UInt64(text), generation > 0 else {
            throw UsageError("--at needs a generation number, not '\(text)'", command: "restore")
        }
        return generation
    }

    /// The generation the arguments name in `store`, or nil for the newest.
    static func generation(in store: Store, _ arguments: ParsedArguments) throws -> UInt64? {
        let command = "restore"
        if let generation = try generation(arguments) { return generation }
        if let name = arguments.value("checkpoint") {
            let declared = try RetentionLayout.read(in: try store.read())
            guard let checkpoint = declared.checkpoints.first(where: { $0.name == name }) else {
                let names = declared.checkpoints.map { "\"\($0.name)\"" }.joined(separator: ", ")
                throw UsageError(
                    "no checkpoint named \"\(name)\" (the store has \(names.isEmpty ? "none" : names))",
                    command: command)
            }
            return checkpoint.generation
        }
        guard let text = arguments.value("time") else { return nil }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions.insert(.withFractionalSeconds)
        guard let date = ISO8601DateFormatter().date(from: text) ?? fractional.date(from: text) else {
            throw UsageError(
                "--time needs an ISO 8601 time such as 2026-11-28T12:00:00Z, not '\(text)'", command: command)
        }
        let limit = UInt64(max(0, date.timeIntervalSince1970 * 1_000_000))
        // Newest first, to the first commit at or before the time: commit times never
        // decrease along the chain.
        var found: UInt64?
        var oldest: (generation: UInt64, timestamp: UInt64)?
        try store.forEachCommit { commit in
            oldest = (commit.generation, commit.timestamp)
            if commit.timestamp <= limit { found = commit.generation }
            return found == nil
        }
        guard let found else {
            let held = oldest.map {
                " (the oldest it holds is \($0.generation), of \(Format.timestamp(microseconds: $0.timestamp)))"
            }
            throw UsageError("the store holds no commit at or before \(text)\(held ?? "")", command: command)
        }
        return found
    }
}
