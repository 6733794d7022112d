import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage
import FolioTestSupport
import LibraryExample

/// A store with history under Fixtures/v2/history: named actions, an undo, a declared
/// retention (the tree `folio/retention`, Docs/Format.md §17.1) and a checkpoint whose
/// generation only the checkpoint still reaches (the file between it and the newest was let
/// go). Later builds must keep reading every part of it, and `verify` must pass it.
/// `FOLIO_WRITE_FIXTURES=1 swift test --filter HistoryFixtureTests` writes it again.
@Suite(.serialized) struct HistoryFixtureTests {
    static let fixture = ProjectExecutable.packageRoot() + "/Fixtures/v2/history"
    static let authors = SampleData.authors(5)

    @Test func writesFixtureWhenAsked() async throws {
        guard ProcessInfo.processInfo.environment["FOLIO_WRITE_FIXTURES"] == "1" else { return }
        try? FileManager.default.removeItem(atPath: Self.fixture)
        let persistence = try Persistence(
            at: Self.fixture,
            options: PersistenceOptions(
                autoCompaction: nil, retention: SnapshotRetention(gracePeriod: .zero, maximumRetainedFiles: 1),
                log: { _ in }))
        let authors = persistence.datastore(for: LibraryExample.AuthorFormat.self)
        try await persistence.perform {
            for author in Self.authors.prefix(3) { try await authors.persist(author) }
        }
        try await persistence.checkpoint("first")
        var renamed = Self.authors[0]
        renamed.name = "Renamed"
        try await persistence.perform(named: "Rename") { try await authors.persist(renamed) }
        try await persistence.compact()  // file 2; file 1 stays for the checkpoint
        try await authors.persist(Self.authors[3])
        try await persistence.compact()  // file 3; file 2 goes
        try await persistence.setHistoryRetention(.generations(1_000))
        try await persistence.perform(named: "Add") { try await authors.persist(Self.authors[4]) }
        try await persistence.undo()
        try await persistence.compact()  // file 4; file 3 stays for the retention
        persistence.close()
        try? FileManager.default.removeItem(atPath: Self.fixture + "/lock")
    }

    @Test func theHistoryReadsAsWritten() async throws {
        let copy = FileManager.default.temporaryDirectory.path + "/history-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: copy)
        let snapshots = try FileManager.default.contentsOfDirectory(atPath: copy + "/snapshots").sorted()
        #expect(snapshots == ["0000000000000001.folio", "0000000000000003.folio", "0000000000000004.folio"])
        // Read-write: a writer's open decides which replaced files the declaration keeps.
        let persistence = try Persistence(at: copy, options: PersistenceOptions(log: { _ in }))
        defer { persistence.close() }
        let authors = persistence.datastore(for: LibraryExample.AuthorFormat.self)
        #expect(try persistence.historyRetention() == .generations(1_000))
        var renamed = Self.authors[0]
        renamed.name = "Renamed"
        #expect(try await authors.load(...).collect() == [renamed] + Self.authors[1...3])
        // The checkpoint: file 2 is gone, so the chain no longer reaches it.
        let checkpoint = try #require(try persistence.checkpoints().first)
        #expect(try persistence.checkpoints().map(\.name) == ["first"])
        #expect(try persistence.oldestReadableToken() > checkpoint.token)
        let first = try await persistence.read(at: checkpoint.token) { try await authors.load(...).collect() }
        #expect(first == Array(Self.authors.prefix(3)))
        // Every generation the chain reaches reads, across the file the retention keeps.
        let oldest = try persistence.oldestReadableToken()
        for generation in oldest.generation...persistence.currentToken.generation {
            let count = try await persistence.read(at: ObservationToken(generation: generation)) {
                try await authors.count()
            }
            #expect((4...5).contains(count), "generation \(generation)")
        }
        #expect(try persistence.redoableAction()?.name == "Add")
        #expect(persistence.verify().isClean, "\(persistence.verify().lines)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: copy + "/snapshots").sorted() == snapshots)
    }
}
