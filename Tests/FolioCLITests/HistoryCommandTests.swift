import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage
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
