import Testing
import Foundation
import FolioTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `--help` for the tool and every command; progress output on and off.
@Suite struct HelpAndProgressTests {
    /// Every command and the options each must describe.
    static let commands: [String: [String]] = [
        "demo": ["[DIR]", "--quiet"],
        "info": ["STORE"],
        "verify": ["STORE", "--quiet"],
        "dump": [
            "STORE", "[DATASTORE]", "--values", "--index NAME", "--from V", "--to V", "--limit N", "--reverse",
            "--json",
        ],
        "compact": ["STORE", "--quiet"],
        "backup": ["STORE", "DEST", "--quiet"],
        "restore": ["BACKUP", "DEST", "--quiet"],
        "help": ["[COMMAND]"],
    ]

    @Test func toolHelpListsEveryCommandSynopsisAndExitStatus() throws {
        for arguments in [["--help"], ["-h"], ["help"]] {
            let run = try runFolio(arguments)
            #expect(run.status == 0 && run.errors.isEmpty, "\(run)")
            for (command, words) in Self.commands {
                let synopsis = try #require(
                    run.lines.first { $0.hasPrefix("  folio \(command) ") || $0 == "  folio \(command)" },
                    "no synopsis of \(command)")
                for word in words {
                    #expect(synopsis.contains(word.hasPrefix("--") ? "[\(word)]" : word), "\(synopsis) lacks \(word)")
                }
            }
            for status in ["0", "1", "2", "3", "4", "5"] {
                #expect(run.lines.contains { $0.hasPrefix("  \(status)  ") }, "exit status \(status)")
            }
            #expect(run.output.contains("-q, --quiet") && run.output.contains("-h, --help"))
        }
    }

    @Test func everyCommandDescribesEveryOption() throws {
        for (command, words) in Self.commands {
            let run = try folio(command, "--help")
            #expect(run.status == 0 && run.errors.isEmpty, "\(run)")
            #expect(run.lines.first?.hasPrefix("usage: folio \(command)") == true, "\(run)")
            for word in words.map({ $0 == "--quiet" ? "-q, --quiet" : $0 }) + ["-h, --help"] {
                let bare = word.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                // Each argument and option has its own line, with its description after it.
                #expect(
                    run.lines.contains { line in
                        let text = line.trimmingCharacters(in: .whitespaces)
                        return line.hasPrefix("  ") && text.hasPrefix(bare + "  ") && text.count > bare.count + 10
                    }, "\(command) --help does not describe \(word):\n\(run.output)")
            }
            #expect(run.output.contains("exit status: 0 success"))
            #expect(run.lines.allSatisfy { $0.count <= 120 }, "help lines are wrapped")
            // Help wins over other errors, wherever it appears; `folio help X` is the same text.
            #expect(try folio(command, "--bogus", "-h").output == run.output)
            #expect(try folio("help", command).output == run.output)
        }
    }

    /// Not on a terminal: plain progress lines on standard error; results alone on
    /// standard output. `--quiet`: no progress at all.
    @Test func progressLinesWhenNotATerminalAndNoneWhenQuiet() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("blobs")
        try await makeBlobStore(at: path, count: 3_000)

        let run = try folio("verify", path)
        #expect(run.status == 0, "\(run)")
        let progress = run.errorLines
        #expect(progress.count >= 2, "\(run)")
        #expect(
            progress.allSatisfy {
                $0.range(of: #"^verified [0-9.]+ (bytes|KiB|MiB) of [0-9.]+ MiB$"#, options: .regularExpression) != nil
            },
            "\(progress)")
        let last = try #require(progress.last)
        let parts = last.split(separator: " ")
        #expect(parts[1] == parts[4] && parts[2] == parts[5], "the last line reports all of it: \(last)")
        #expect(!run.errors.contains("\r") && !run.output.contains("verified "))

        for arguments in [
            ["verify", "--quiet", path], ["verify", "-q", path], ["compact", "--quiet", path],
            ["backup", "-q", path, directory.child("copy")],
            ["restore", "--quiet", directory.child("copy"), directory.child("again")],
        ] {
            let quiet = try runFolio(arguments)
            #expect(quiet.status == 0 && quiet.errors.isEmpty, "\(quiet)")
        }
        let copy = try folio("backup", path, directory.child("copy2"))
        #expect(copy.errorLines.last?.hasPrefix("copied ") == true, "\(copy)")
    }

    /// On a terminal (a pseudo-terminal here): a bar redrawn in place with a percentage.
    @Test func progressBarOnATerminal() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("blobs")
        try await makeBlobStore(at: path, count: 1_500)
        let (status, terminal) = try runWithTerminalStandardError(["verify", path])
        #expect(status == 0, "\(terminal)")
        #expect(
            terminal.contains("\r[") && terminal.contains("100%") && terminal.contains("verified "),
            "\(terminal.debugDescription)")
        #expect(terminal.contains("[##############################] 100%"), "\(terminal.debugDescription)")
    }

    /// Runs folio with standard error on a new pseudo-terminal; returns what it wrote there.
    func runWithTerminalStandardError(_ arguments: [String]) throws -> (Int32, String) {
        let master = try PseudoTerminal.openMaster()
        defer { close(master) }
        let name = try PseudoTerminal.slaveName(of: master)
        let slave = open(name, O_RDWR | O_NOCTTY)
        try #require(slave >= 0)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ProjectExecutable.path("folio"))
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        let collected = Collected()
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(master, &buffer, buffer.count)
                if count <= 0 { break }
                collected.append(Array(buffer[0..<count]))
            }
            collected.finish()
        }
        try process.run()
        close(slave)
        reader.start()
        process.waitUntilExit()
        collected.waitForEnd(timeout: 10)
        return (process.terminationStatus, String(decoding: collected.bytes, as: UTF8.self))
    }
}

/// Bytes a reader thread collects, and when it is done.
final class Collected: @unchecked Sendable {
    // @unchecked: every field is behind `lock`.
    private let lock = NSCondition()
    private var data: [UInt8] = []
    private var done = false

    func append(_ bytes: [UInt8]) { lock.lock(); data += bytes; lock.unlock() }
    func finish() { lock.lock(); done = true; lock.broadcast(); lock.unlock() }
    func waitForEnd(timeout: Double) {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        while !done && lock.wait(until: deadline) {}
        lock.unlock()
    }
    var bytes: [UInt8] { lock.lock(); defer { lock.unlock() }; return data }
}

/// The pseudo-terminal calls, looked up at run time: the Glibc module does not export them
/// (they need _XOPEN_SOURCE).
enum PseudoTerminal {
    private typealias OpenMaster = @convention(c) (Int32) -> Int32
    private typealias Prepare = @convention(c) (Int32) -> Int32
    private typealias Name = @convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32

    private static func function<T>(_ name: String, as type: T.Type) throws -> T {
        let symbol = try #require(dlsym(nil, name), "\(name) not found")
        return unsafeBitCast(symbol, to: type)
    }

    /// A new master, granted and unlocked.
    static func openMaster() throws -> Int32 {
        let master = try function("posix_openpt", as: OpenMaster.self)(O_RDWR | O_NOCTTY)
        try #require(master >= 0)
        try #require(try function("grantpt", as: Prepare.self)(master) == 0)
        try #require(try function("unlockpt", as: Prepare.self)(master) == 0)
        return master
    }

    static func slaveName(of master: Int32) throws -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        try #require(try function("ptsname_r", as: Name.self)(master, &buffer, buffer.count) == 0)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
