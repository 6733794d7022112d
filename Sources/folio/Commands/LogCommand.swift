@_spi(Engine) import Folio
import FolioStorage

/// `folio log STORE`: the commits the store still holds, newest first.
enum LogCommand: Command {
    static let name = "log"
    static let summary = "list the commits a store holds, newest first, with what each changed"
    static let positionals = [PositionalSpec("STORE", help: "the store's directory")]
    static let options = [
        OptionSpec("limit", value: "N", help: "list at most N commits (default 20)")
    ]
    static let showsProgress = false
    static let details = [
        """
        Opens the store read-only and follows its chain of commits back from the newest: one \
        line per commit with its generation, its time (UTC, ISO 8601), and its kind \
        (transaction, creation or compaction), for an undo or redo the commit it reverted, \
        and the name it was performed with, in quotes; then one indented line per datastore it \
        changed: created, updated and deleted records, "changed wholesale" for a commit that \
        changed more records than it lists (their count is not recorded), or "dropped". \
        Index entries change with their records and are not listed; the key-value store is \
        "values". The list ends at the oldest commit the store still holds (a compaction \
        keeps the commits before it only while the file it replaced is kept): that \
        generation and every one listed can be read with 'folio diff' and read(at:). A \
        generation a checkpoint keeps shows its name ("checkpoint NAME"); checkpoints older \
        than the commits listed follow them, one line each, readable whether or not the chain \
        still reaches them.
        """
    ]
    static let examples = ["folio log ~/Library.folio", "folio log ~/Library.folio --limit 100"]

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let limit = try arguments.count("limit") ?? 20
        let store = try StoreAccess.openForReading(arguments.positionals[0])
        defer { store.close() }
        let out = OutputStream.standardOutput
        let inspector = StoreInspector(store: store)
        let commits = try inspector.log(limit: limit)
        for commit in commits {
            var line =
                "generation \(commit.generation)  \(Format.timestamp(microseconds: commit.timestamp))  \(commit.kind)"
            if let undone = commit.undoes { line += "  undo of \(undone)" }
            if let redone = commit.redoes { line += "  redo (reverts \(redone))" }
            if let name = commit.name { line += "  \"\(name)\"" }
            for checkpoint in commit.checkpoints { line += "  checkpoint \"\(checkpoint)\"" }
            out.line(line)
            for change in commit.changes {
                var parts: [String] = []
                if change.dropped { parts.append("dropped") }
                if change.wholesale { parts.append("changed wholesale") }
                if change.created > 0 { parts.append("\(Format.count(change.created)) created") }
                if change.updated > 0 { parts.append("\(Format.count(change.updated)) updated") }
                if change.deleted > 0 { parts.append("\(Format.count(change.deleted)) deleted") }
                out.line("  \(change.name): \(parts.joined(separator: ", "))")
            }
        }
        let oldestListed = commits.last?.generation ?? .max
        for checkpoint in try inspector.checkpoints() where checkpoint.generation < oldestListed {
            out.line(
                "checkpoint \"\(checkpoint.name)\"  generation \(checkpoint.generation)  "
                    + Format.timestamp(microseconds: checkpoint.timestamp))
        }
        out.flush()
        return .success
    }
}
