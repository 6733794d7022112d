import Foundation
import Synchronization

/// The project's own executables (`folio`, `folio-torture`), as tests launch them.
public enum ProjectExecutable {
    private static let built = Mutex<[String: String]>([:])

    /// The path of the executable product `name`, building it first if the test run did
    /// not (`swift test` builds test targets and what they link, not executable products).
    public static func path(_ name: String, filePath: String = #filePath) throws -> String {
        if let known = built.withLock({ $0[name] }) { return known }
        return try built.withLock { known -> String in
            if let path = known[name] { return path }
            let binaryDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            var candidates = [binaryDirectory.appendingPathComponent(name).path]
            let root = packageRoot(from: filePath)
            candidates.append("\(root)/.build/debug/\(name)")
            if let existing = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }),
                isFresh(existing, name: name, root: root)
            {
                known[name] = existing
                return existing
            }
            let build = Process()
            build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            build.arguments = ["swift", "build", "--package-path", root, "--product", name]
            build.standardOutput = FileHandle.nullDevice
            let errors = Pipe()
            build.standardError = errors
            let messages = BuildMessages()
            let reader = Thread {
                while true {
                    let data = errors.fileHandleForReading.availableData
                    if data.isEmpty { break }
                    messages.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
                }
            }
            try build.run()
            reader.start()
            while build.isRunning {
                // Under `swift test`, SwiftPM holds the build directory's lock for the whole
                // run, so a nested build would wait forever: fail at once and say why.
                if messages.text.withLock({ $0.contains("Another instance of SwiftPM") }) {
                    build.terminate()
                    build.waitUntilExit()
                    throw ChildProcessError.buildFailed(
                        "\(name) (it is older than its sources, and the build directory is "
                            + "locked by the running `swift test`: run `swift build` first)")
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            build.waitUntilExit()
            guard build.terminationStatus == 0 else {
                throw ChildProcessError.buildFailed(name)
            }
            let path = "\(root)/.build/debug/\(name)"
            known[name] = path
            return path
        }
    }

    /// The package root: the nearest directory above `filePath` holding Package.swift.
    public static func packageRoot(from filePath: String = #filePath) -> String {
        var url = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url.path
            }
            url.deleteLastPathComponent()
        }
        return FileManager.default.currentDirectoryPath
    }

    /// Source directories no executable product depends on besides its own: the other
    /// executables and the test support. (Every executable of the package depends on all
    /// the library targets; SwiftPM does not relink an executable whose inputs did not
    /// change, so comparing it with unrelated sources would call it stale for ever.)
    private static let notLinkedByOtherExecutables: Set<String> = ["folio", "folio-torture", "FolioTestSupport"]

    /// True if `binary` is newer than every source file it is built from (so a stale
    /// build is rebuilt).
    private static func isFresh(_ binary: String, name: String, root: String) -> Bool {
        guard let built = (try? FileManager.default.attributesOfItem(atPath: binary))?[.modificationDate] as? Date,
            let enumerator = FileManager.default.enumerator(atPath: "\(root)/Sources")
        else { return false }
        while let file = enumerator.nextObject() as? String {
            guard file.hasSuffix(".swift") else { continue }
            let target = String(file.prefix { $0 != "/" })
            if target != name && notLinkedByOtherExecutables.contains(target) { continue }
            if let date = (try? FileManager.default.attributesOfItem(atPath: "\(root)/Sources/\(file)"))?[
                .modificationDate] as? Date,
                date > built
            {
                return false
            }
        }
        return true
    }
}

/// What a nested `swift build` writes to standard error.
private final class BuildMessages: Sendable {
    let text = Mutex("")
}

/// Why a child process could not be used.
public enum ChildProcessError: Error, CustomStringConvertible {
    case buildFailed(String)
    case timedOut(waitingFor: String, output: [String], errorOutput: String)

    public var description: String {
        switch self {
        case .buildFailed(let name): return "could not build \(name)"
        case .timedOut(let what, let output, let errors):
            return "timed out waiting for \(what); output so far: \(output.suffix(5)); stderr: \(errors.suffix(500))"
        }
    }
}

/// A running child process whose standard output is read line by line as it arrives.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: `process` and `input` are only read after init; the rest is behind Mutexes.
    private let process: Process
    private let input: Pipe
    private let buffers = Buffers()

    /// What the reader threads collect; a class so the threads can share it.
    private final class Buffers: Sendable {
        let lines = Mutex<[String]>([])
        let errors = Mutex<String>("")
        /// How many of the two pipes have reached end of file.
        let pipesEnded = Mutex(0)
    }

    /// Starts `executable` with `arguments`; `environment` adds to the inherited one.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        let output = Pipe(), errorPipe = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardError = errorPipe
        process.standardInput = input
        self.process = process
        self.input = input
        let buffers = self.buffers
        let outputHandle = output.fileHandleForReading, errorHandle = errorPipe.fileHandleForReading
        let reader = Thread {
            var pending = ""
            while true {
                let data = outputHandle.availableData
                if data.isEmpty { break }
                pending += String(decoding: data, as: UTF8.self)
                while let newline = pending.firstIndex(of: "\n") {
                    let line = String(pending[..<newline])
                    pending = String(pending[pending.index(after: newline)...])
                    buffers.lines.withLock { $0.append(line) }
                }
            }
            buffers.pipesEnded.withLock { $0 += 1 }
        }
        let errorReader = Thread {
            while true {
                let data = errorHandle.availableData
                if data.isEmpty { break }
                buffers.errors.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
            buffers.pipesEnded.withLock { $0 += 1 }
        }
        try process.run()
        reader.start()
        errorReader.start()
    }

    /// Every complete line printed so far.
    public var output: [String] { buffers.lines.withLock { $0 } }

    /// What the child wrote to standard error so far.
    public var errorOutput: String { buffers.errors.withLock { $0 } }

    /// The process id.
    public var pid: Int32 { process.processIdentifier }

    /// True while the child runs.
    public var isRunning: Bool { process.isRunning }

    /// Waits until a line satisfies `predicate`; returns it.
    @discardableResult
    public func waitForLine(timeout: Double = 60, where predicate: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let line = buffers.lines.withLock({ $0.first(where: predicate) }) { return line }
            if !process.isRunning {
                Thread.sleep(forTimeInterval: 0.05)
                if let line = buffers.lines.withLock({ $0.first(where: predicate) }) { return line }
                break
            }
            Thread.sleep(forTimeInterval: 0.002)
        }
        throw ChildProcessError.timedOut(waitingFor: "a matching line", output: output, errorOutput: errorOutput)
    }

    /// Writes `line` and a newline to the child's standard input.
    public func send(_ line: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Closes the child's standard input.
    public func closeInput() { try? input.fileHandleForWriting.close() }

    /// Sends SIGKILL: no cleanup, no flushing, exactly a crash.
    public func kill() { Foundation.kill(process.processIdentifier, SIGKILL) }

    /// Waits for the child to exit; returns its status (negative: killed by that signal).
    @discardableResult
    public func wait(timeout: Double = 120) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline {
                kill()
                throw ChildProcessError.timedOut(waitingFor: "exit", output: output, errorOutput: errorOutput)
            }
            Thread.sleep(forTimeInterval: 0.002)
        }
        // Let the reader threads drain the pipes to their end (a fixed pause lost the last
        // lines of a child on a loaded machine), within a bound in case a grandchild
        // inherited them.
        let drained = Date().addingTimeInterval(10)
        while buffers.pipesEnded.withLock({ $0 }) < 2 && Date() < drained {
            Thread.sleep(forTimeInterval: 0.002)
        }
        return process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus
    }

    /// ``wait(timeout:)`` for async tests: it waits on a thread of its own rather than
    /// blocking one of the cooperative pool's (two on a 2-core machine: two tests blocking
    /// both stall every other test of the process).
    @discardableResult
    public func waitUntilExit(timeout: Double = 120) async throws -> Int32 {
        try await Self.offPool { try self.wait(timeout: timeout) }
    }

    /// ``waitForLine(timeout:where:)`` for async tests, off the cooperative pool.
    @discardableResult
    public func nextLine(
        timeout: Double = 60, where predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        try await Self.offPool { try self.waitForLine(timeout: timeout, where: predicate) }
    }

    private static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }
}
