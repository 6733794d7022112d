import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage
import FolioTestSupport
import LibraryExample

/// `folio log STORE [--limit N]` and `folio diff STORE FROM [TO] [--datastore KEY] [--json]`.
@Suite struct HistoryCommandTests {
    /// A store with a short history: authors created, one renamed, one deleted, in three
    /// transactions after the store's creation and preparation.
    static func makeStore(at path: String) async throws -> (before: UInt64, after: UInt64) {
        let persistence = try Persistence(at: path)
        defer { persistence.close() }
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await persistence.perform {
            for id in 1...3 { try await authors.persist(Author(id: id, name: "Author \(id)", born: 1900 + id)) }
        }
        let before = persistence.currentToken.generation
        try await authors.persist(Author(id: 2, name: "Renamed", born: 1902))
        try await authors.delete(3)
        try await authors.persist(Author(id: 4, name: "New", born: 2000))
        return (before, persistence.currentToken.generation)
    }

    @Test func logListsEachCommitWithWhatItChanged() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let (before, after) = try await Self.makeStore(at: path)
        let run = try folio("log", path, "--limit", "4")
        #expect(run.status == 0, "\(run)")
        let headers = run.lines.filter { $0.hasPrefix("generation ") }
        #expect(headers.count == 4)
        #expect(
            headers.first?.hasPrefix("generation \(after)  ") == true
                && headers.first?.hasSuffix("  transaction") == true)
        #expect(run.lines.prefix(2).last == "  authors: 1 created")
        #expect(run.lines.contains("  authors: 1 deleted"))
        #expect(run.lines.contains("  authors: 1 updated"))
        #expect(headers.last?.hasPrefix("generation \(before)  ") == true)
        #expect(run.lines.last == "  authors: 3 created")
        // The whole history ends at the store's first commit.
        let all = try folio("log", path, "--limit", "1000").lines.filter { $0.hasPrefix("generation ") }
        #expect(all.last?.hasPrefix("generation 1  ") == true && all.last?.hasSuffix("creation") == true)
        #expect(all.count == Int(after))
    }

    /// A checkpoint shows on its commit's line, or after the list when it is older than
    /// the commits listed; declaring a retention shows as a change of "history retention".
    @Test func logShowsCheckpointsAndTheRetention() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let (_, after) = try await Self.makeStore(at: path)
        do {
            let persistence = try Persistence(at: path)
            defer { persistence.close() }
            try await persistence.checkpoint("before more")
            try await persistence.setHistoryRetention(.generations(100))
            try await persistence.datastore(for: AuthorFormat.self).persist(Author(id: 5, name: "Fifth", born: 1))
        }
        let run = try folio("log", path, "--limit", "3")
        #expect(run.status == 0, "\(run)")
        #expect(run.lines.contains("  history retention: 1 created"))
        #expect(run.lines.last?.hasPrefix("checkpoint \"before more\"  generation \(after)  ") == true)
        let all = try folio("log", path, "--limit", "100").lines
        #expect(
            all.contains { $0.hasPrefix("generation \(after)  ") && $0.hasSuffix("  checkpoint \"before more\"") })
    }

    /// `folio replicate`: `--once` makes a replica that is a store (info, verify, restore at
    /// a past generation); following, it ships each later commit and exits 0 on SIGINT; a
    /// replica of another store is refused (exit 3) and left as it was.
    @Test func replicateMakesAReplicaThatRestoresThePast() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let replica = directory.child("replica")
        let (before, after) = try await Self.makeStore(at: path)
        let once = try folio("replicate", path, replica, "--once")
        #expect(once.status == 0, "\(once)")
        #expect(once.lines.first?.hasPrefix("replicated generation \(after) of ") == true, "\(once)")
        #expect(try folio("verify", replica, "--quiet").status == 0)
        let restored = try folio("restore", replica, directory.child("restored"), "--at", "\(before)")
        #expect(restored.status == 0, "\(restored)")
        let atBefore = try Persistence(readingFrom: directory.child("restored"))
        #expect(try await atBefore.datastore(for: AuthorFormat.self).load(...).collect().map(\.id) == [1, 2, 3])
        atBefore.close()

        // Following: a later commit reaches the replica; SIGINT ends it cleanly.
        let follower = Process()
        follower.executableURL = URL(fileURLWithPath: try ProjectExecutable.path("folio"))
        follower.arguments = ["replicate", path, replica]
        follower.standardOutput = FileHandle.nullDevice
        try follower.run()
        let latest: UInt64
        do {
            let persistence = try Persistence(at: path)
            defer { persistence.close() }
            try await persistence.datastore(for: AuthorFormat.self).persist(Author(id: 7, name: "Later", born: 2))
            latest = persistence.currentToken.generation
        }
        var reached = false
        for _ in 0..<2_000 where !reached {
            let reader = try Persistence(readingFrom: replica)
            reached = reader.currentToken.generation == latest
            reader.close()
            if !reached { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(reached)
        follower.interrupt()
        follower.waitUntilExit()
        #expect(follower.terminationReason == .exit && follower.terminationStatus == 0)

        // Another store's replica is refused.
        let other = directory.child("other")
        _ = try await Self.makeStore(at: other)
        let refused = try folio("replicate", other, replica, "--once")
        #expect(refused.status == 3, "\(refused)")
        #expect(refused.errors.contains("holds another history than its source"), "\(refused)")
        #expect(try folio("verify", replica, "--quiet").status == 0)
    }

    /// `folio restore --at/--checkpoint/--time`: the store as it was, or a clear error.
    @Test func restoreAtAPointInTime() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let (before, after) = try await Self.makeStore(at: path)
        do {
            let persistence = try Persistence(at: path)
            defer { persistence.close() }
            try await persistence.checkpoint("renamed and more")
            try await persistence.datastore(for: AuthorFormat.self).persist(Author(id: 9, name: "Late", born: 1))
        }
        func authors(_ store: String) async throws -> [Int] {
            let persistence = try Persistence(at: store)
            defer { persistence.close() }
            return try await persistence.datastore(for: AuthorFormat.self).load(...).collect().map(\.id)
        }
        let atBefore = try folio("restore", path, directory.child("at"), "--at", "\(before)")
        #expect(atBefore.status == 0, "\(atBefore)")
        #expect(atBefore.lines.first?.hasPrefix("restored generation \(before) ") == true)
        #expect(try await authors(directory.child("at")) == [1, 2, 3])
        let atCheckpoint = try folio("restore", path, directory.child("checkpoint"), "--checkpoint", "renamed and more")
        #expect(atCheckpoint.status == 0, "\(atCheckpoint)")
        #expect(atCheckpoint.lines.first?.hasPrefix("restored generation \(after) ") == true)
        #expect(try await authors(directory.child("checkpoint")) == [1, 2, 4])
        let now = ISO8601DateFormatter().string(from: Date().addingTimeInterval(60))
        let atTime = try folio("restore", path, directory.child("time"), "--time", now)
        #expect(atTime.status == 0, "\(atTime)")
        #expect(try await authors(directory.child("time")) == [1, 2, 4, 9])
        // Errors name what is wrong, and write nothing.
        let unknown = try folio("restore", path, directory.child("x1"), "--checkpoint", "nope")
        #expect(unknown.status != 0 && unknown.errors.contains("no checkpoint named \"nope\""))
        let early = try folio("restore", path, directory.child("x2"), "--time", "2001-01-01T00:00:00Z")
        #expect(early.status != 0 && early.errors.contains("no commit at or before 2001-01-01T00:00:00Z"))
        let both = try folio("restore", path, directory.child("x3"), "--at", "2", "--checkpoint", "nope")
        #expect(both.status != 0 && both.errors.contains("at most one of --at, --checkpoint and --time"))
        let gone = try folio("restore", path, directory.child("x4"), "--at", "\(after + 100)")
        #expect(gone.status != 0 && gone.errors.contains("is not in the store's history"))
        for name in ["x1", "x2", "x3", "x4"] { #expect(!FileManager.default.fileExists(atPath: directory.child(name))) }
    }

    /// `folio restore` of a store whose newest run is damaged restores the generation before
    /// it and says why; asked for the damaged generation, it fails naming the file and offset.
    @Test func restoreOfADamagedStoreSaysWhichGenerationItRestoredAndWhy() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let (_, after) = try await Self.makeStore(at: path)
        var commits: [LoggedCommit] = []
        do {
            let store = try Store.openReadOnly(at: path)
            defer { store.close() }
            try store.forEachCommit {
                commits.append($0); return commits.count < 2
            }
        }
        // A byte of the newest run's first page, just after the commit before it.
        let runStart = commits[1].location.address.end
        let file = try #require(
            FileHandle(
                forUpdatingAtPath: "\(path)/snapshots/"
                    + String(format: "%016llx.folio", commits[0].location.fileNumber)))
        try file.seek(toOffset: runStart + 40)
        let byte = try #require(try file.read(upToCount: 1))
        try file.seek(toOffset: runStart + 40)
        try file.write(contentsOf: Data([byte[0] ^ 0x5A]))
        try file.close()

        let run = try folio("restore", path, directory.child("newest"))
        #expect(run.status == 0, "\(run)")
        #expect(run.lines.first?.hasPrefix("restored generation \(after - 1) ") == true, "\(run)")
        #expect(
            run.lines.contains { $0.hasPrefix("the newest generation, \(after), is damaged: restored \(after - 1)") })
        #expect(run.lines.contains { $0.contains("corruption in ") && $0.contains("at offset \(runStart)") })
        let explicit = try folio("restore", path, directory.child("explicit"), "--at", "\(after)")
        #expect(explicit.status != 0 && explicit.errors.contains("at offset \(runStart)"), "\(explicit)")
        #expect(!FileManager.default.fileExists(atPath: directory.child("explicit")))
    }

    @Test func diffPrintsTheRecordsThatDifferBetweenTwoGenerations() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let (before, after) = try await Self.makeStore(at: path)
        let run = try folio("diff", path, "\(before)", "\(after)", "--json")
        #expect(run.status == 0, "\(run)")
        let documents = try run.lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(documents.map { $0["id"] as? Int } == [2, 3, 4])
        #expect(documents.map { $0["change"] as? String } == ["updated", "deleted", "created"])
        #expect(documents.allSatisfy { $0["datastore"] as? String == "authors" })
        let renamed = try #require((documents[0]["after"] as? [String: Any])?["record"] as? [String: Any])
        #expect(renamed["name"] as? String == "Renamed")
        #expect(documents[1]["after"] is NSNull && documents[2]["before"] is NSNull)
        // The other way round: the changes lead back; TO defaults to the newest.
        let back = try folio("diff", path, "\(after)", "\(before)", "--json").lines
        #expect(back.count == 3 && back[2].contains(#""change":"deleted""#))
        #expect(try folio("diff", path, "\(before)", "--json").lines.count == 3)
        #expect(try folio("diff", path, "\(before)", "--datastore", "books").status == 5)
    }

    @Test func aGenerationTheStoreDoesNotHoldFailsNamingWhatItHolds() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let (_, after) = try await Self.makeStore(at: path)
        let run = try folio("diff", path, "\(after + 10)")
        #expect(run.status == 3)
        #expect(
            run.errors.contains(
                "generation \(after + 10) is not in the store's history, which holds generations 1 through \(after)"))
        #expect(try folio("diff", path, "x").status == 2)
    }

    @Test func logShowsNamesUndosAndRedos() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let named: UInt64
        do {
            let persistence = try Persistence(at: path)
            defer { persistence.close() }
            let authors = persistence.datastore(for: AuthorFormat.self)
            _ = try await authors.count()
            try await persistence.perform(named: "Add Ann") {
                try await authors.persist(Author(id: 1, name: "Ann", born: 1990))
            }
            named = persistence.currentToken.generation
            try await persistence.undo()
            try await persistence.redo()
        }
        let run = try folio("log", path, "--limit", "3")
        #expect(run.status == 0, "\(run)")
        let headers = run.lines.filter { $0.hasPrefix("generation ") }
        #expect(headers.count == 3)
        #expect(headers[2].hasPrefix("generation \(named) ") && headers[2].hasSuffix("transaction  \"Add Ann\""))
        #expect(headers[1].hasSuffix("transaction  undo of \(named)  \"Add Ann\""))
        #expect(headers[0].hasSuffix("transaction  redo (reverts \(named + 1))  \"Add Ann\""))
        #expect(run.lines.filter { $0 == "  authors: 1 created" }.count == 2)
        #expect(run.lines.contains("  authors: 1 deleted"))
        #expect(try folio("verify", path).status == 0)
    }
}
