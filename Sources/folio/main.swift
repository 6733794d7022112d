#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The `folio` command-line tool (Docs/CLI.md). Every error ends here as one line on
// standard error and an exit status (Support/ExitStatus.swift); nothing is left to crash.

/// Runs the command line `arguments` (without the program name); returns the exit status.
@MainActor func runFolio(_ arguments: [String]) async -> ExitStatus {
    do {
        return try await dispatch(arguments)
    } catch {
        let failure = CommandFailure(error)
        OutputStream.standardOutput.flush()
        OutputStream.standardError.line("folio: " + CommandFailure.oneLine(failure.message))
        return failure.status
    }
}

/// Finds the command, parses its arguments and runs it.
@MainActor func dispatch(_ arguments: [String]) async throws -> ExitStatus {
    guard let first = arguments.first else {
        throw UsageError(
            "missing command; the commands are "
                + Commands.all.map { $0.name }.joined(separator: ", "))
    }
    if first == "--help" || first == "-h" {
        OutputStream.standardOutput.line(HelpCommand.overview)
        return .success
    }
    guard let command = Commands.named(first) else {
        if first.hasPrefix("-") { throw UsageError("unknown option \(first) (options follow the command)") }
        throw UsageError("unknown command '\(first)'")
    }
    let rest = Array(arguments.dropFirst())
    if ArgumentParser.asksForHelp(rest) {
        OutputStream.standardOutput.line(command.help)
        return .success
    }
    let parsed = try ArgumentParser.parse(
        rest, command: command.name, options: command.allOptions,
        positionals: command.positionals)
    return try await command.run(parsed)
}

let status = await runFolio(Array(CommandLine.arguments.dropFirst()))
OutputStream.standardOutput.flush()
exit(status.rawValue)
