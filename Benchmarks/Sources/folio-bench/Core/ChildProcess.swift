import Foundation
import Synchronization

/// What a child process (`folio-bench __child ...`) measured of itself, printed as one JSON
/// line on its standard output.
struct ChildReport: Codable, Sendable {
    /// From just before opening the store to just after the read returned.
    var seconds: Double
    /// The child's peak resident memory over its whole life (`VmHWM`).
    var peakRSSBytes: Int
    /// A checksum of what it read, proof the read happened.
    var checksum: Int
}

/// Runs workloads that must start in a fresh process ("cold" opens): spawns this same
/// executable with the hidden `__child` command and reads back its ``ChildReport``.
enum ChildProcess {
    /// The hidden command's name; never shown in `--help`.
    static let command = "__child"

    /// This executable's path.
    static var executablePath: String {
        #if os(Linux)
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        #endif
        return Bundle.main.executablePath ?? CommandLine.arguments[0]
    }

    /// Runs `folio-bench __child <arguments>` and returns its report; throws with its
    /// standard error if it fails. Suspends (no thread waits) until the child has exited and
    /// both its output pipes are drained.
    static func run(_ arguments: [String]) async throws -> ChildReport {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath)
        process.arguments = [command] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let (data, errorData, status) = try await ChildOutcome.collect(process, output: output.fileHandleForReading,
                                                                      errors: errors.fileHandleForReading)
        guard status == 0 else {
            let message = String(decoding: errorData, as: UTF8.self)
            throw BenchError.harness("child \(arguments.joined(separator: " ")) failed (status \(status)): \(message)")
        }
        guard let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last,
              let report = try? JSONDecoder().decode(ChildReport.self, from: Data(line.utf8)) else {
            throw BenchError.harness("child \(arguments.joined(separator: " ")) printed no report")
        }
        return report
    }

    /// In the child: times `body`, then prints the report and returns.
    static func report(_ body: () async throws -> Int) async throws {
        let start = DispatchTime.now().uptimeNanoseconds
        let checksum = try await body()
        let end = DispatchTime.now().uptimeNanoseconds
        let report = ChildReport(seconds: Double(end - start) / 1e9, peakRSSBytes: PeakMemory.peakBytes(), checksum: checksum)
        let data = try JSONEncoder().encode(report)
        print(String(decoding: data, as: UTF8.self))
    }
}

/// A child's standard output and error, read as they arrive (readability handlers, so a
/// chatty child never blocks on a full pipe), and its exit status: the awaiting task resumes
/// once the process has exited and both pipes reached end of file.
private final class ChildOutcome: Sendable {
    private struct State {
        var output = Data()
        var errors = Data()
        var openPipes = 2
        var status: Int32?
        var continuation: CheckedContinuation<(Data, Data, Int32), any Error>?
    }
    private let state = Mutex(State())

    static func collect(_ process: Process, output: FileHandle, errors: FileHandle) async throws -> (Data, Data, Int32) {
        let outcome = ChildOutcome()
        return try await withCheckedThrowingContinuation { continuation in
            outcome.state.withLock { $0.continuation = continuation }
            output.readabilityHandler = { handle in outcome.read(handle, isOutput: true) }
            errors.readabilityHandler = { handle in outcome.read(handle, isOutput: false) }
            process.terminationHandler = { process in outcome.finish(status: process.terminationStatus) }
            do {
                try process.run()
            } catch {
                output.readabilityHandler = nil
                errors.readabilityHandler = nil
                outcome.fail(error)
            }
        }
    }

    private func read(_ handle: FileHandle, isOutput: Bool) {
        let chunk = handle.availableData
        if chunk.isEmpty { handle.readabilityHandler = nil }
        let ready = state.withLock { state -> (CheckedContinuation<(Data, Data, Int32), any Error>, (Data, Data, Int32))? in
            if chunk.isEmpty { state.openPipes -= 1 } else if isOutput { state.output.append(chunk) } else { state.errors.append(chunk) }
            return Self.takeIfDone(&state)
        }
        if let (continuation, result) = ready { continuation.resume(returning: result) }
    }

    private func finish(status: Int32) {
        let ready = state.withLock { state -> (CheckedContinuation<(Data, Data, Int32), any Error>, (Data, Data, Int32))? in
            state.status = status
            return Self.takeIfDone(&state)
        }
        if let (continuation, result) = ready { continuation.resume(returning: result) }
    }

    private func fail(_ error: any Error) {
        let continuation = state.withLock { state in
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(throwing: error)
    }

    private static func takeIfDone(_ state: inout State) -> (CheckedContinuation<(Data, Data, Int32), any Error>, (Data, Data, Int32))? {
        guard state.openPipes == 0, let status = state.status, let continuation = state.continuation else { return nil }
        state.continuation = nil
        return (continuation, (state.output, state.errors, status))
    }
}
