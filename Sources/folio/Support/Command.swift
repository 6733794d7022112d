/// A `folio` command: what it accepts (for parsing and `--help`) and what it does.
@MainActor protocol Command {
    /// The word that selects it: `verify`.
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    static var positionals: [PositionalSpec] { get }
    /// The command's own options (`--help` is added to every command, and `--quiet` to
    /// those that show progress).
    static var options: [OptionSpec] { get }
    /// True if the command shows progress (and so accepts `--quiet`).
    static var showsProgress: Bool { get }
    /// Paragraphs of `--help` after the synopsis: what it does and prints.
    static var details: [String] { get }
    static var examples: [String] { get }
    /// Does the work; throws to fail with a one-line message (see ``CommandFailure``).
    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus
}

extension Command {
    static var allOptions: [OptionSpec] {
        options + [CommonOptions.help] + (showsProgress ? [CommonOptions.quiet] : [])
    }

    /// `folio dump STORE DATASTORE [--index NAME] ... [--quiet]`.
    static var synopsis: String {
        var words = ["folio", name]
        words += positionals.map { $0.optional ? "[\($0.name)]" : $0.name }
        words += options.map { "[--\($0.name)\($0.value.map { " \($0)" } ?? "")]" }
        if showsProgress { words.append("[--quiet]") }
        return words.joined(separator: " ")
    }

    /// The whole `folio COMMAND --help` text.
    static var help: String {
        var lines = ["usage: \(synopsis)", "", summary.prefix(1).uppercased() + summary.dropFirst() + "."]
        for paragraph in details {
            lines += [""] + Format.wrap(paragraph, width: 88)
        }
        if !positionals.isEmpty {
            lines += ["", "arguments:"]
            lines += Format.table(positionals.map { [$0.name, $0.help] }, indent: "  ", width: 88)
        }
        lines += ["", "options:"]
        lines += Format.table(allOptions.map { [$0.usage, $0.help] }, indent: "  ", width: 88)
        if !examples.isEmpty {
            lines += ["", "examples:"]
            lines += examples.map { "  " + $0 }
        }
        lines += [""] + Format.wrap("exit status: " + exitSummary + " ('folio --help' explains each).", width: 88)
        lines += ["Docs/CLI.md describes every command, option and output format."]
        return lines.joined(separator: "\n")
    }

    /// `0 success, 1 ..., 2 usage error, ...` on one line.
    static var exitSummary: String {
        "0 success, 1 problems found (verify), 2 usage error, 3 store error, 4 locked by another writer, 5 no such datastore or index"
    }
}
