import Folio
import FolioStorage

/// `folio compact STORE`: rewrites the live pages into a new snapshot file.
enum CompactCommand: Command {
    static let name = "compact"
    static let summary = "reclaim dead space: copy the live pages of a store into a new snapshot file"
    static let positionals = [PositionalSpec("STORE", help: "the store's directory")]
    static let options: [OptionSpec] = [
        OptionSpec("wait", value: "SECONDS", help: "wait up to this long for another process's write lock (default 0)")
    ]
    static let showsProgress = true
    static let details = [
        """
        Takes the store's write lock (fails, with exit status 4, if another process holds \
        it: at once, or after waiting up to --wait SECONDS for that process to close it), copies the live pages of the newest generation into a new snapshot file, \
        and switches the root to it: a new generation with the same contents. Readers in \
        other processes are not disturbed; the replaced file is kept for them for the \
        retention period (30 s) and removed by a later writer. Progress goes to standard error.
        """
    ]
    static let examples = ["folio compact ~/Library.folio", "folio compact ~/Library.folio --wait 10"]

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let path = arguments.positionals[0]
        let seconds = try arguments.count("wait") ?? 0
        let store = try StoreAccess.openForWriting(path, purpose: "compact", waiting: seconds)
        defer { store.close() }
        let before = try store.statistics()
        let reporter = ProgressReporter(mode: ProgressReporter.mode(quiet: arguments.flag("quiet")), verb: "copied")
        defer { reporter.abandon() }
        let clock = ContinuousClock()
        let start = clock.now
        // The compaction takes the lock again for its turn: another writer may have begun a
        // write since the open let it go.
        let report = try StoreAccess.whileUnlocked(path, purpose: "compact", waiting: seconds) {
            () throws(StorageError) in
            try store.compact { progress in
                if case .copying(let done, let total) = progress { reporter.update(done, of: total) }
            }
        }
        let elapsed = clock.now - start
        reporter.finish(before.liveBytes, of: before.liveBytes)
        let after = try store.statistics()
        let out = OutputStream.standardOutput
        out.line(
            "compacted \(path) in \(Format.duration(elapsed)): snapshot file \(Format.bytes(report.bytesBefore)) → "
                + "\(Format.bytes(report.bytesAfter)), \(Format.count(report.pagesCopied, "page")) copied, "
                + "dead \(Format.bytes(before.deadBytes)) → \(Format.bytes(after.deadBytes)), generation \(report.generation)"
        )
        return .success
    }
}
