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
    /// standard error if it fails. Suspends (no thread of the concurrency pool waits) until the
    /// child has exited and both its output pipes are drained.
    static func run(_ arguments: [String]) async throws -> ChildReport {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath)
        process.arguments = [command] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let (data, errorData, status) = try await ChildOutcome.collect(
            process, output: output.fileHandleForReading,
            errors: errors.fileHandleForReading)
        guard status == 0 else {
            let message = String(decoding: errorData, as: UTF8.self)
            throw BenchError.harness("child \(arguments.joined(separator: " ")) failed (status \(status)): \(message)")
        }
        guard let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last,
            let report = try? JSONDecoder().decode(ChildReport.self, from: Data(line.utf8))
        else {
            throw BenchError.harness("child \(arguments.joined(separator: " ")) printed no report")
        }
        return report
    }

    /// In the child: times `body`, then prints the report and returns.
    static func report(_ body: () async throws -> Int) async throws {
        let start = DispatchTime.now().uptimeNanoseconds
        let checksum = try await body()
        let end = DispatchTime.now().uptimeNanoseconds
        let report = ChildReport(
            seconds: Double(end - start) / 1e9, peakRSSBytes: PeakMemory.peakBytes(), checksum: checksum)
        let data = try JSONEncoder().encode(report)
        print(String(decoding: data, as: UTF8.self))
    }
}

/// A child's standard output and error, each read to end of file by a blocking read on a
/// Dispatch worker thread (never a thread of the Swift concurrency pool), and its exit
/// status from the termination handler: the awaiting task is suspended on a continuation
/// and resumes once the process has exited and both pipes are drained. (Not
/// `readabilityHandler`: on Linux the end-of-file event after the last chunk is sometimes
/// never delivered, which left the harness waiting forever.)
private final class ChildOutcome: Sendable {
    private struct State {
        var output: Data?
        var errors: Data?
        var status: Int32?
        var continuation: CheckedContinuation<(Data, Data, Int32), any Error>?
    }
    private let state = Mutex(State())

    static func collect(_ process: Process, output: FileHandle, errors: FileHandle) async throws -> (Data, Data, Int32)
    {
        let outcome = ChildOutcome()
        return try await withCheckedThrowingContinuation { continuation in
            outcome.state.withLock { $0.continuation = continuation }
            process.terminationHandler = { process in outcome.update { $0.status = process.terminationStatus } }
            do {
                try process.run()
            } catch {
                outcome.fail(error)
                return
            }
            // The parent's copies of the write ends are closed by `run()`: each read ends
            // when the child (and anything it started) has closed its end.
            DispatchQueue.global().async {
                let data = output.readDataToEndOfFile()
                outcome.update { $0.output = data }
            }
            DispatchQueue.global().async {
                let data = errors.readDataToEndOfFile()
                outcome.update { $0.errors = data }
            }
        }
    }

    private func update(_ change: (inout State) -> Void) {
        let ready = state.withLock {
            state -> (CheckedContinuation<(Data, Data, Int32), any Error>, (Data, Data, Int32))? in
            change(&state)
            guard let output = state.output, let errors = state.errors, let status = state.status,
                let continuation = state.continuation
            else { return nil }
            state.continuation = nil
            return (continuation, (output, errors, status))
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
}
