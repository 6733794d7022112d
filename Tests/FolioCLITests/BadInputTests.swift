import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage

/// Every bad input gets one line on standard error and its exit status; never a crash.
/// Statuses: 2 usage, 3 store error, 4 locked (MaintenanceTests), 5 no such datastore or index.
@Suite struct BadInputTests {
    /// Commands that read STORE, with the arguments that follow it.
    static let storeCommands: [(String, [String])] = [
        ("info", []), ("verify", []), ("dump", ["books"]), ("compact", []), ("backup", ["/nonexistent/folio-dest"]),
    ]

    func eachCommand(on store: String, _ check: (FolioRun) -> Void) throws {
        for (command, rest) in Self.storeCommands {
            check(try runFolio([command, store] + rest))
        }
        // restore reads its BACKUP argument as a store.
        check(try runFolio(["restore", store, "/nonexistent/folio-dest"]))
    }

    @Test func missingStore() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let missing = directory.child("nothing-here")
        try eachCommand(on: missing) { expectOneLineError($0, status: 3, containing: "no Folio store at \(missing)") }
        // An empty directory holds no store either; nothing is created in it.
        try eachCommand(on: directory.path) {
            expectOneLineError($0, status: 3, containing: "no Folio store at \(directory.path)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func notAFolioStore() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        _ = FileManager.default.createFile(atPath: directory.child("holiday.jpg"), contents: Data([1, 2, 3]))
        try eachCommand(on: directory.path) { expectOneLineError($0, status: 3, containing: "is not a Folio store") }
        let file = directory.child("holiday.jpg")
        try eachCommand(on: file) {
            expectOneLineError($0, status: 3, containing: "\(file) is not a Folio store: it is a file")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["holiday.jpg"])
    }

    @Test func newerFormatVersion() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let fixture = try await LibraryFixture.make(at: directory.child("library"), books: 10)
        let info = "\(fixture.path)/info"
        let text = try String(contentsOfFile: info, encoding: .utf8)
        try text.replacingOccurrences(of: "\"formatVersion\":2", with: "\"formatVersion\":4").write(
            toFile: info, atomically: true, encoding: .utf8)
        try eachCommand(on: fixture.path) {
            expectOneLineError($0, status: 3, containing: "has format version 4; this version of Folio reads up to 3")
        }
    }

    /// A file of the store cannot be read: permission denied (or, for a user that ignores
    /// permissions, the root file replaced by a directory).
    @Test func unreadableFiles() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let fixture = try await LibraryFixture.make(at: directory.child("library"), books: 10)
        let root = "\(fixture.path)/root"
        let expected: String
        if geteuid() == 0 {
            try FileManager.default.removeItem(atPath: root)
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
            expected = "Is a directory"
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: root)
            expected = "Permission denied"
        }
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: root) }
        try eachCommand(on: fixture.path) { run in
            expectOneLineError(run, status: 3, containing: root)
            #expect(run.errors.contains(expected), "\(run)")
        }
    }

    @Test func unknownDatastoreOrIndexAndBadValues() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let fixture = try await LibraryFixture.make(at: directory.child("library"), books: 10)
        expectOneLineError(
            try folio("dump", fixture.path, "magazines"), status: 5, containing: "no datastore named magazines")
        expectOneLineError(
            try folio("dump", fixture.path, "books", "--index", "colour"), status: 5,
            containing: "books has no index named colour")
        expectOneLineError(
            try folio("dump", fixture.path, "books", "--index", "year", "--from", "soon"), status: 2,
            containing: "\"soon\" is not a value of type Swift.Int")
        expectOneLineError(
            try folio("dump", fixture.path, "books", "--to", "not-a-uuid"), status: 2,
            containing: "\"not-a-uuid\" is not a value of type Foundation.UUID")
        expectOneLineError(
            try folio("dump", fixture.path, "books", "--limit", "-1"), status: 2,
            containing: "option --limit needs a whole number from 0, not '-1'")
    }

    @Test func usageErrors() throws {
        let cases: [([String], String)] = [
            (
                [],
                "missing command; the commands are demo, info, verify, dump, log, diff, compact, backup, restore, replicate, help"
            ),
            (["frobnicate"], "unknown command 'frobnicate'"),
            (["--frobnicate"], "unknown option --frobnicate"),
            (["info"], "info: missing STORE (see 'folio info --help')"),
            (["info", "a", "b"], "info: unexpected argument 'b'"),
            (["dump", "store"], "dump: missing DATASTORE"),
            (["dump", "store", "books", "--limit"], "dump: option --limit needs a value (N)"),
            (
                ["dump", "store", "books", "--limit", "ten"],
                "dump: option --limit needs a whole number from 0, not 'ten'"
            ),
            (["dump", "store", "books", "--colour", "red"], "dump: unknown option --colour"),
            (["dump", "store", "books", "-x"], "dump: unknown option -x"),
            (["dump", "store", "books", "--json=yes"], "dump: option --json takes no value"),
            (["dump", "store", "books", "--limit", "1", "--limit", "2"], "dump: option --limit is given twice"),
            (["verify", "--index", "year", "store"], "verify: unknown option --index"),
            (["info", "--quiet", "store"], "info: unknown option --quiet"),
            (["backup", "store"], "backup: missing DEST"),
            (["restore", "backup", "dest", "extra"], "restore: unexpected argument 'extra'"),
            (["compact"], "compact: missing STORE"),
            (["demo", "a", "b"], "demo: unexpected argument 'b'"),
            (["help", "frobnicate"], "unknown command 'frobnicate'"),
        ]
        for (arguments, message) in cases {
            let run = try runFolio(arguments)
            expectOneLineError(run, status: 2, containing: message)
        }
        // '--' ends the options: a store named like an option.
        let run = try folio("info", "--", "--quiet")
        expectOneLineError(run, status: 3, containing: "no Folio store at --quiet")
    }
}
