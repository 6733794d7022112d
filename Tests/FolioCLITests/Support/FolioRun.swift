import Foundation
import FolioTestSupport

/// One finished run of the built `folio` executable: exit status and everything it wrote.
struct FolioRun: CustomStringConvertible {
    let arguments: [String]
    let status: Int32
    let output: String
    let errors: String

    /// Standard output, line by line (no trailing empty line).
    var lines: [String] {
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    /// Standard error, line by line.
    var errorLines: [String] {
        errors.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    var description: String {
        "folio \(arguments.joined(separator: " ")) → \(status)\nstdout: \(output.suffix(2_000))\nstderr: \(errors.suffix(2_000))"
    }
}

/// Runs `folio` with `arguments` to completion. Output goes to files, read after exit, so
/// nothing is lost to timing.
func folio(_ arguments: String..., timeout: Double = 120) throws -> FolioRun {
    try runFolio(arguments, timeout: timeout)
}

func runFolio(_ arguments: [String], timeout: Double = 120) throws -> FolioRun {
    let scratch = TemporaryDirectory("folio-run")
    defer { scratch.remove() }
    let outPath = scratch.child("out"), errPath = scratch.child("err")
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try ProjectExecutable.path("folio"))
    process.arguments = arguments
    let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning {
        if Date() > deadline {
            process.terminate()
            throw ChildProcessError.timedOut(
                waitingFor: "folio \(arguments.joined(separator: " "))", output: [], errorOutput: "")
        }
        Thread.sleep(forTimeInterval: 0.005)
    }
    process.waitUntilExit()
    try out.close()
    try err.close()
    let status = process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus
    return FolioRun(
        arguments: arguments, status: status,
        output: try String(contentsOfFile: outPath, encoding: .utf8),
        errors: try String(contentsOfFile: errPath, encoding: .utf8))
}

/// A fresh directory under the system's temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init(_ label: String = "folio-cli") {
        path = "\(FileManager.default.temporaryDirectory.path)/\(label)-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    func child(_ name: String) -> String { "\(path)/\(name)" }
}
