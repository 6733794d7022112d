/// `folio help [COMMAND]`, `folio --help`: the overview, or a command's help.
enum HelpCommand: Command {
    static let name = "help"
    static let summary = "describe folio, or one command"
    static let positionals = [PositionalSpec("COMMAND", optional: true, help: "the command to describe")]
    static let options: [OptionSpec] = []
    static let showsProgress = false
    static let details: [String] = []
    static let examples = ["folio help dump"]

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        guard let name = arguments.positionals.first else {
            OutputStream.standardOutput.line(overview)
            return .success
        }
        guard let command = Commands.named(name) else {
            throw UsageError("unknown command '\(name)'")
        }
        OutputStream.standardOutput.line(command.help)
        return .success
    }

    /// `folio --help`.
    @MainActor static var overview: String {
        var lines = [
            "folio: look after Folio stores, and see what Folio does",
            "",
            "usage: folio COMMAND [ARGUMENTS] [OPTIONS]",
            "       folio COMMAND --help",
            "",
            "commands:",
        ]
        lines += Format.table(Commands.all.map { ["\($0.name)", $0.summary] }, indent: "  ", width: 88)
        lines += ["", "synopsis:"]
        lines += Commands.all.map { "  " + $0.synopsis }
        lines += ["", "options:"]
        lines += Format.table(
            [CommonOptions.help, CommonOptions.quiet].map {
                [$0.usage, $0.help + ($0.name == "quiet" ? " (demo, verify, compact, backup, restore)" : "")]
            },
            indent: "  ")
        lines += [
            "",
            "Options may come before, between or after the arguments; '--' ends them. A value",
            "follows its option ('--limit 10') or is joined to it ('--limit=10').",
            "Results go to standard output. Errors are one line on standard error, 'folio: ...'.",
            "Progress goes to standard error: a bar if it is a terminal, plain lines otherwise.",
            "",
            "exit status:",
        ]
        lines += Format.table(ExitStatus.allCases.map { ["\($0.rawValue)", $0.meaning] }, indent: "  ", width: 88)
        lines += ["", "Docs/CLI.md describes every command, option and output format."]
        return lines.joined(separator: "\n")
    }
}

/// Every command, in the order `--help` lists them.
enum Commands {
    @MainActor static let all: [any Command.Type] = [
        DemoCommand.self, InfoCommand.self, VerifyCommand.self, DumpCommand.self, LogCommand.self,
        DiffCommand.self, CompactCommand.self, BackupCommand.self, RestoreCommand.self,
        ReplicateCommand.self, HelpCommand.self,
    ]

    @MainActor static func named(_ name: String) -> (any Command.Type)? {
        all.first { $0.name == name }
    }
}
