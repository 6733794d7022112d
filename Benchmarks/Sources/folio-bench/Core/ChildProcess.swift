import Foundation

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
    /// standard error if it fails.
    static func run(_ arguments: [String]) throws -> ChildReport {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath)
        process.arguments = [command] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = String(decoding: errorData, as: UTF8.self)
            throw BenchError.harness("child \(arguments.joined(separator: " ")) failed (status \(process.terminationStatus)): \(message)")
        }
        guard let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last,
              let report = try? JSONDecoder().decode(ChildReport.self, from: Data(line.utf8)) else {
            throw BenchError.harness("child \(arguments.joined(separator: " ")) printed no report")
        }
        return report
    }

    /// In the child: times `body`, then prints the report and returns.
    static func report(_ body: () throws -> Int) throws {
        let start = DispatchTime.now().uptimeNanoseconds
        let checksum = try body()
        let end = DispatchTime.now().uptimeNanoseconds
        let report = ChildReport(seconds: Double(end - start) / 1e9, peakRSSBytes: PeakMemory.peakBytes(), checksum: checksum)
        let data = try JSONEncoder().encode(report)
        print(String(decoding: data, as: UTF8.self))
    }
}
