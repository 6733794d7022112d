import Foundation
import GRDB

// folio-bench: Folio's benchmark harness. See `Arguments.usage` (or --help) and
// Benchmarks/README.md.
//
// Async end to end: the top-level code awaits `runHarness`, which runs on the global
// executor (`@concurrent`), not the main actor; everything it calls inherits that
// (the package builds with NonisolatedNonsendingByDefault). No thread is blocked waiting
// for async work.

/// Prints to standard error (progress and errors; standard output is left to child reports).
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

let commandLine = Array(CommandLine.arguments.dropFirst())

/// The hidden child command (see ``ChildProcess``); returns the exit status.
@concurrent func runChild(_ arguments: [String]) async -> Int32 {
    do {
        try await ChildCommand.run(arguments)
        return 0
    } catch {
        printError("folio-bench \(ChildProcess.command): \(error)")
        return 1
    }
}

if commandLine.first == ChildProcess.command {
    exit(await runChild(Array(commandLine.dropFirst())))
}

let arguments: Arguments
do {
    arguments = try Arguments.parse(commandLine)
} catch {
    printError("folio-bench: \(error)\nRun 'folio-bench --help' for the options.")
    exit(2)
}
if arguments.help {
    print(Arguments.usage)
    exit(0)
}

/// The version of the SQLite GRDB links (GRDB's synchronous API: in an async function
/// Swift would pick its async overload).
func sqliteVersion() throws -> String {
    try DatabaseQueue().read { try String.fetchOne($0, sql: "SELECT sqlite_version()") } ?? "?"
}

/// Runs the suites the arguments name and writes the reports.
func main(_ arguments: Arguments) async throws {
    let started = DispatchTime.now().uptimeNanoseconds
    let loadAtStart = MachineInfo.loadAverage()
    PeakMemory.probe()
    #if DEBUG
    printError("folio-bench: warning: a debug build; its figures are not comparable (use -c release)")
    #endif
    if PeakMemory.scope != .workload { printError("folio-bench: note: \(PeakMemory.methodDescription)") }

    let scratch = try Scratch(workDirectory: arguments.workDirectory)
    defer { scratch.removeAll() }
    let context = BenchContext(
        sizes: arguments.sizes, durability: arguments.durability,
        runner: Runner(runs: arguments.runs, log: printError), scratch: scratch)
    context.onlyWorkloads = arguments.workloads
    context.onlySystems = arguments.systems
    context.busyTimeout = arguments.busyTimeout
    let replicaScratch = try arguments.replicaDirectory.map { try Scratch(workDirectory: $0) }
    defer { replicaScratch?.removeAll() }
    context.replicaScratch = replicaScratch
    for suite in arguments.suites {
        switch suite {
        case CrudSuite.name: try await CrudSuite.run(context)
        case EngineSuite.name: try await EngineSuite.run(context)
        case ScaleSuite.name: try await ScaleSuite.run(context)
        case ObserveSuite.name: try await ObserveSuite.run(context)
        case LocksSuite.name: try await LocksSuite.run(context)
        case KeyValueSuite.name: try await KeyValueSuite.run(context)
        case MultiProcessSuite.name: try await MultiProcessSuite.run(context)
        case HistorySuite.name: try await HistorySuite.run(context)
        case RestoreSuite.name: try await RestoreSuite.run(context)
        case ReplicationSuite.name: try await ReplicationSuite.run(context)
        default: throw BenchError.harness("unknown suite \(suite)")
        }
    }

    let sqlite = try sqliteVersion()
    let report = JSONReport(
        machine: MachineInfo.collect(
            workDirectory: arguments.workDirectory, sqliteVersion: sqlite,
            loadAtStart: loadAtStart),
        results: context.results)

    var jsonPath = arguments.jsonPath, markdownPath = arguments.markdownPath, svgDirectory = arguments.svgDirectory
    if arguments.smoke {
        // The smoke check reads back every output; unnamed ones go to scratch space.
        let outputs = try scratch.makeDirectory("smoke-output")
        jsonPath = jsonPath ?? outputs + "/results.json"
        markdownPath = markdownPath ?? outputs + "/results.md"
        svgDirectory = svgDirectory ?? outputs + "/svg"
    }
    if let jsonPath { try report.write(to: jsonPath) }
    if let markdownPath { try MarkdownReport.write(report, to: markdownPath) }
    var svgFiles: [String] = []
    if let svgDirectory {
        svgFiles = try SVGReport.write(report.results, to: svgDirectory, logarithmic: arguments.svgLogarithmic)
    }

    if arguments.smoke, let jsonPath, let markdownPath {
        printError(
            try Smoke.verify(
                suites: arguments.suites, sizes: arguments.sizes, runs: arguments.runs,
                jsonPath: jsonPath, markdownPath: markdownPath, svgFiles: svgFiles))
    }
    if arguments.jsonPath == nil, arguments.markdownPath == nil, !arguments.smoke {
        print(MarkdownReport.render(report))
    }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    printError(
        String(format: "folio-bench: %d rows in %.1f s (checksum %llx)", report.results.count, elapsed, Sink.value))
}

/// Runs ``main(_:)`` off the main actor; returns the exit status.
@concurrent func runHarness(_ arguments: Arguments) async -> Int32 {
    do {
        try await main(arguments)
        return 0
    } catch {
        printError("folio-bench: \(error)")
        return 1
    }
}

exit(await runHarness(arguments))
