import Foundation
import Synchronization
import Testing
import Folio
import FolioTestSupport
import LibraryExample

/// `migrateAndReindex` across processes: it works in committed batches, so a migration
/// killed part-way (`kill -9` of `folio-torture migrate-books` after its first batch) is
/// finished by whichever process runs it next, from where it stopped; and a writer process
/// committing beside it (`folio-torture book-edits`) loses nothing to it. The store holds
/// release-1 books (`BookFormatRelease1`: an older version, and indexes today's `BookFormat`
/// changes or adds); at the end every book is stored in the current version, holds what
/// was written last, and every index agrees with a scan.
@Suite(.serialized) struct ResumableMigrationTests {
    /// Quiet, and waiting up to two minutes for another process's turn: a writer process in
    /// a tight loop of turns was seen to keep this one waiting past the default 5 s on a
    /// loaded machine (turns are not handed over in order, Docs/Durability.md §1.6).
    static let quiet = {
        var options = PersistenceOptions(log: { _ in })
        options.busyTimeout = .seconds(120)
        return options
    }()

    @Test func aMigrationKilledPartWayIsFinishedByTheNextProcess() async throws {
        let count = 4_000
        let path = FileManager.default.temporaryDirectory.path + "/folio-migration-kill-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var expected = try await storeRelease1Books(at: path, count: count)
        var started: [ChildProcess] = []
        defer { stop(started) }

        let (firstTotal, killed) = try await killMigrationAfterItsFirstBatch(path, started: &started)
        #expect(killed, "the first migration was not killed part-way")

        // This process runs it next, and finishes it.
        let persistence = try Persistence(at: path, options: Self.quiet)
        defer { persistence.close() }
        let books = persistence.datastore(for: LibraryExample.BookFormat.self)
        let reports = Mutex<[MigrationProgress]>([])
        try await books.migrateAndReindex { progress in reports.withLock { $0.append(progress) } }
        let steps = reports.withLock { $0 }
        #expect(steps.first == .evaluating && steps.last.map(isComplete) == true, "\(steps)")
        // Less than the whole work is left: what the killed process committed is kept.
        let processed =
            steps.compactMap { step -> Int? in
                if case .working(let current, _) = step { current } else { nil }
            }.last ?? 0
        #expect(processed < firstTotal, "the second run processed \(processed) of \(firstTotal): it did not resume")
        try await expectMigrated(persistence, books, expected: &expected)
        print("migration resumed: the killed run's work was \(firstTotal), the next run's \(steps.suffix(2))")
    }

    @Test func aMigrationBesideAWriterProcessKeepsItsWrites() async throws {
        let count = 3_000
        let path = FileManager.default.temporaryDirectory.path + "/folio-migration-writer-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var expected = try await storeRelease1Books(at: path, count: count)
        var started: [ChildProcess] = []
        defer { stop(started) }
        _ = try await killMigrationAfterItsFirstBatch(path, started: &started)

        // A writer edits release-1 books (migrated or not) and adds new ones, while this
        // process finishes the migration.
        let writer = try ChildProcess(
            try ProjectExecutable.path("folio-torture"), ["book-edits", path, String(count), "--seed", "7"])
        started.append(writer)
        try await writer.nextLine(timeout: 120) { $0.hasPrefix("edit ") }
        let persistence = try Persistence(at: path, options: Self.quiet)
        defer { persistence.close() }
        let books = persistence.datastore(for: LibraryExample.BookFormat.self)
        try await books.migrateAndReindex()
        writer.closeInput()
        let status = try await writer.waitUntilExit(timeout: 120)
        #expect(status == 0, "the writer failed: \(writer.errorOutput.suffix(600))")
        let edits = writer.output.filter { $0.hasPrefix("edit ") }
        #expect(writer.output.last == "done \(edits.count)", "\(writer.output.suffix(2))")
        for line in edits {
            let parts = line.split(separator: " ").compactMap { Int($0) }
            let (s, i) = (parts[0], parts[1])
            expected[SampleData.bookID(i)]!.title = "Edited \(s)"
            expected[SampleData.bookID(i)]!.year = 2000 + s
            expected[SampleData.bookID(count + s)] = LibraryExample.Book(
                id: SampleData.bookID(count + s), title: "New \(s)", authorIDs: [s % 7], isbn: "new-\(s)",
                year: 1900 + s % 100)
        }
        try await expectMigrated(persistence, books, expected: &expected)
        print("migration beside a writer: \(edits.count) transactions of the writer")
    }

    /// Stores `count` release-1 books, in transactions of 1,000; returns them as today's
    /// release reads them.
    private func storeRelease1Books(at path: String, count: Int) async throws -> [UUID: LibraryExample.Book] {
        let persistence = try Persistence(at: path, options: Self.quiet)
        defer { persistence.close() }
        let books = persistence.datastore(for: LibraryExample.BookFormatRelease1.self)
        var expected: [UUID: LibraryExample.Book] = [:]
        for start in stride(from: 0, to: count, by: 1_000) {
            try await persistence.perform {
                for i in start..<min(start + 1_000, count) {
                    // Some titles with an article, which today's title index leaves out.
                    let book = LibraryExample.BookV1(
                        id: SampleData.bookID(i), title: i % 3 == 0 ? "The Book \(i)" : "Book \(i)", authorID: i % 40,
                        isbn: "isbn-\(i)")
                    try await books.persist(book)
                    expected[book.id] = LibraryExample.Book(book)
                }
            }
        }
        return expected
    }

    /// Starts `migrate-books`, which stops after its first committed batch, and kills it
    /// there; returns the total work it reported and whether it was killed (rather than
    /// done already).
    private func killMigrationAfterItsFirstBatch(
        _ path: String, started: inout [ChildProcess]
    ) async throws -> (total: Int, killed: Bool) {
        let child = try ChildProcess(
            try ProjectExecutable.path("folio-torture"), ["migrate-books", path, "--stop-after-first-batch"])
        started.append(child)
        let line = try await child.nextLine(timeout: 120) { $0.hasPrefix("working ") || $0 == "done" }
        child.kill()
        let status = try await child.waitUntilExit(timeout: 60)
        #expect(status == -SIGKILL || status == 0, "the migration failed: \(child.errorOutput.suffix(600))")
        let total = Int(line.split(separator: " ").last ?? "") ?? 0
        return (total, status == -SIGKILL)
    }

    /// Every book is stored in the current version and is `expected`'s, and each of
    /// `BookFormat`'s indexes agrees with a scan; `verify` is clean.
    private func expectMigrated(
        _ persistence: Persistence<ReadWrite>, _ books: Datastore<LibraryExample.BookFormat, ReadWrite>,
        expected: inout [UUID: LibraryExample.Book]
    ) async throws {
        #expect(
            try storedVersions(persistence, LibraryExample.BookFormat.key) == [
                LibraryExample.BookFormat.currentVersion.rawValue: expected.count
            ])
        let all = try await books.load(...).collect()
        #expect(all.count == expected.count)
        for book in all where book != expected[book.id] {
            Issue.record("book \(book.id) is \(book), not \(String(describing: expected[book.id]))")
        }
        for author in Set(all.flatMap(\.authorIDs)) {
            let found = try await books.load(author, from: \.authors).collect()
            #expect(found == all.filter { $0.authorIDs.contains(author) }, "index authors = \(author)")
        }
        for year in Set(all.map(\.year)).sorted().prefix(20) {
            let found = try await books.load(year, from: \.year).collect()
            #expect(found == all.filter { $0.year == year }, "index year = \(year)")
        }
        let byTitle = try await books.load(..., from: \.title).collect()
        #expect(byTitle.map(\.sortTitle) == all.map(\.sortTitle).sorted(), "index title")
        for book in all.prefix(50) {
            #expect(try await books.load(book.isbn, from: \.isbn)?.id == book.id, "index isbn = \(book.isbn)")
        }
        let report = persistence.verify()
        #expect(report.isClean, "\(report.lines.prefix(3))")
    }

    private func isComplete(_ progress: MigrationProgress) -> Bool {
        if case .complete = progress { true } else { false }
    }

    private func stop(_ children: [ChildProcess]) {
        for child in children where child.isRunning {
            child.kill()
            _ = try? child.wait(timeout: 10)
        }
    }
}
