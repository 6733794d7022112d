import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage
import FolioTestSupport
import LibraryExample

/// `folio compact`, `folio backup`, `folio restore`.
@Suite struct MaintenanceTests {
    /// A library fixture in `directory` whose write lock a `folio-torture hold-writer` child
    /// holds until its input is closed (or it is killed).
    static func lockedFixture(in directory: TemporaryDirectory) async throws -> (LibraryFixture, ChildProcess) {
        let fixture = try await LibraryFixture.make(at: directory.child("library"))
        let holder = try ChildProcess(try ProjectExecutable.path("folio-torture"), ["hold-writer", fixture.path])
        try holder.waitForLine { $0 == "ready" }
        return (fixture, holder)
    }

    @Test func compactReclaimsDeadBytesAndKeepsTheRecords() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let fixture = try await LibraryFixture.make(at: directory.child("library"))
        let before = try folio("dump", fixture.path, "books", "--json")
        let reader = try Store.openReadOnly(at: fixture.path)
        let dead = try reader.statistics().deadBytes
        let generation = reader.generation
        reader.close()
        #expect(dead > 0)

        let run = try folio("compact", fixture.path)
        #expect(run.status == 0, "\(run)")
        #expect(run.lines.count == 1)
        #expect(run.output.hasPrefix("compacted \(fixture.path) in "))
        #expect(run.output.contains("generation \(generation + 1)"))
        let after = try Store.openReadOnly(at: fixture.path)
        #expect(try after.statistics().deadBytes == 0)
        #expect(after.generation == generation + 1)
        after.close()
        #expect(try folio("dump", fixture.path, "books", "--json").output == before.output)
        #expect(try folio("verify", fixture.path).status == 0)
    }

    /// Compaction needs the write lock: held by another process, compact fails at once with
    /// one line mentioning the lock, exit 4; read-only commands still work.
    @Test func compactOfALockedStoreFailsAtOnce() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (fixture, holder) = try await Self.lockedFixture(in: directory)
        defer { holder.kill() }

        // The holder keeps the lock until this test ends: a compact that waited for it would
        // not return (the run's own timeout fails it), so returning is "at once".
        let run = try folio("compact", fixture.path)
        expectOneLineError(run, status: 4, containing: "locked by another writer")
        #expect(run.errors.contains("\(fixture.path)/lock"))
        for command in [
            ["info", fixture.path], ["verify", fixture.path], ["dump", fixture.path, "authors"],
            ["backup", fixture.path, directory.child("copy")],
        ] {
            let reading = try runFolio(command)
            #expect(reading.status == 0, "\(reading)")
        }
        holder.closeInput()
        #expect(try holder.wait() == 0)
        #expect(try folio("compact", fixture.path).status == 0)
    }

    /// `--wait SECONDS`: while the lock stays held, compact gives up after waiting and says
    /// so; with a long wait it compacts once the holder closes.
    @Test func compactWithWaitWaitsForTheHolderToClose() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (fixture, holder) = try await Self.lockedFixture(in: directory)
        defer { holder.kill() }

        let gaveUp = try folio("compact", fixture.path, "--wait", "1")
        expectOneLineError(gaveUp, status: 4, containing: "after waiting 1 s")

        let waiting = try ChildProcess(try ProjectExecutable.path("folio"), ["compact", fixture.path, "--wait", "600"])
        defer { waiting.kill() }
        holder.closeInput()
        #expect(try holder.wait() == 0)
        #expect(try waiting.wait() == 0, "\(waiting.errorOutput)")
        #expect(waiting.output.contains { $0.hasPrefix("compacted ") })
    }

    /// Timeline: a Folio writer in another process commits one book per transaction (and
    /// compacts every 50); meanwhile `folio backup` copies the newest generation. The backup
    /// restores to a store that verify passes, holding exactly one committed generation: the
    /// writer's books 0 ..< N of that generation, no more, no less.
    @Test func backupWhileAnotherProcessWritesRestoresACommittedGeneration() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("library")
        let writer = try ChildProcess(try ProjectExecutable.path("folio-torture"), ["library-writer", path, "100000"])
        defer { writer.kill() }
        try writer.waitForLine { $0.hasPrefix("commit ") && Int($0.split(separator: " ")[2])! >= 10 }

        let backup = try folio("backup", path, directory.child("backup"))
        #expect(backup.status == 0, "\(backup)")
        let words = backup.output.split(separator: " ")
        let generation = try #require(UInt64(words[3]), "\(backup)")
        // Let the writer go on past the backup, then stop it.
        let later = try writer.waitForLine { line in
            line.hasPrefix("commit ") && UInt64(line.split(separator: " ")[1])! > generation + 2
        }
        _ = later
        writer.closeInput()
        #expect(try writer.wait() == 0, "\(writer.errorOutput)")

        let restored = directory.child("restored")
        let restore = try folio("restore", directory.child("backup"), restored)
        #expect(restore.status == 0, "\(restore)")
        #expect(restore.output.hasPrefix("restored generation \(generation) from "))
        let verify = try folio("verify", restored)
        #expect(verify.status == 0, "\(verify)")
        #expect(verify.lines.first == "verifying \(restored) at generation \(generation)")

        // The generation the writer committed: its line says how many books it held.
        let committed = writer.output.compactMap { line -> (UInt64, Int)? in
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[0] == "commit" || parts[0] == "compact" else { return nil }
            return (UInt64(parts[1])!, Int(parts[2])!)
        }
        let books = try #require(
            committed.first { $0.0 == generation }?.1, "generation \(generation) was never committed")
        let dump = try folio("dump", restored, "books", "--json")
        let ids = try dump.lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])["id"] as? String
        }
        #expect(ids == SampleData.books(books, authors: 10).map(\.id.uuidString).sorted())
        #expect(ids.count == books && books >= 10)
    }

    /// Neither backup nor restore overwrites: a non-empty destination is refused, untouched.
    @Test func backupAndRestoreRefuseANonEmptyDestination() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let fixture = try await LibraryFixture.make(at: directory.child("library"), books: 20)
        let occupied = directory.child("occupied")
        try FileManager.default.createDirectory(atPath: occupied, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: "\(occupied)/keep.txt", contents: Data("keep".utf8))

        expectOneLineError(try folio("backup", fixture.path, occupied), status: 3, containing: "refusing to overwrite")
        expectOneLineError(try folio("restore", fixture.path, occupied), status: 3, containing: "refusing to overwrite")
        // A store is not empty either.
        expectOneLineError(
            try folio("restore", fixture.path, fixture.path), status: 3, containing: "refusing to overwrite")
        #expect(try FileManager.default.contentsOfDirectory(atPath: occupied) == ["keep.txt"])

        // An empty directory is fine, and so is a new path.
        let empty = directory.child("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        #expect(try folio("backup", fixture.path, empty).status == 0)
        #expect(try folio("restore", empty, directory.child("new/nested")).status == 0)
        #expect(
            try folio("dump", directory.child("new/nested"), "books", "--json").output
                == folio("dump", fixture.path, "books", "--json").output)
    }
}
