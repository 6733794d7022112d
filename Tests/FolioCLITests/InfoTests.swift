import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage
import LibraryExample
import FolioTestSupport

/// `folio info STORE`.
@Suite struct InfoTests {
    @Test func infoDescribesFormatGenerationDatastoresVersionsIndexesSpaceAndFiles() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let fixture = try await LibraryFixture.make(at: directory.child("library"))
        let store = try Store.openReadOnly(at: fixture.path)
        let statistics = try store.statistics()
        store.close()

        let run = try folio("info", fixture.path)
        #expect(run.status == 0, "\(run)")
        #expect(run.errors.isEmpty)
        let text = run.output
        #expect(run.lines.first == "store \(fixture.path)")
        #expect(text.contains("format version  2 (this folio reads versions up to 3)"))
        #expect(text.range(of: #"created +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#, options: .regularExpression) != nil)
        #expect(text.contains("generation      \(statistics.generation), committed "))
        #expect(text.contains("(\(grouped(statistics.liveBytes)) bytes)"))
        #expect(statistics.deadBytes > 0)
        #expect(text.contains("dead            "))
        for file in ["info", "lock", "root", "snapshots/0000000000000001.folio"] {
            #expect(run.lines.contains { $0.hasPrefix("    \(file) ") }, "file \(file)")
        }
        #expect(run.lines.contains { $0.hasPrefix("    snapshots/0000000000000001.folio") && $0.hasSuffix("current") })

        let authors = try section("authors", of: run)
        #expect(authors.contains("  instance type    LibraryExample.Author"))
        #expect(authors.contains("  identifier type  Swift.Int"))
        #expect(authors.contains("  records          10"))
        #expect(authors.contains("  versions         2025-01 (current): 10 records"))
        #expect(
            authors.contains {
                $0.range(
                    of: #"^    born +one-to-many +reference +Swift.Int +\\Author.born +built +10 entries$"#,
                    options: .regularExpression) != nil
            })

        let books = try section("books", of: run)
        #expect(books.contains("  records          \(fixture.allBooks.count)"))
        #expect(books.contains("  versions         2024-03: \(fixture.oldBooks.count) records"))
        #expect(books.contains("                   2025-01 (current): \(fixture.books.count) records"))
        #expect(books.contains("  indexes          4"))
        let isbn = try #require(books.first { $0.hasPrefix("    isbn ") })
        #expect(
            isbn.range(
                of: #"one-to-one +covering +Swift.String +\\Book.isbn +built +\#(fixture.allBooks.count) entries"#,
                options: .regularExpression) != nil, "\(isbn)")
        let title = try #require(books.first { $0.hasPrefix("    title ") })
        #expect(title.contains("computed") && title.contains("built"))
    }

    /// A store that became format version 3 (a commit recorded a tree wholesale) says so,
    /// and the version its info file records (the one it was created as).
    @Test func infoOnAVersionThreeStore() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("engine-basic")
        try FileManager.default.copyItem(
            atPath: ProjectExecutable.packageRoot() + "/Fixtures/v3/engine-basic", toPath: path)
        let run = try folio("info", path)
        #expect(run.status == 0, "\(run)")
        #expect(run.output.contains("format version  3, created as 2 (this folio reads versions up to 3)"), "\(run)")
    }

    /// A store only release 1 wrote: one version, release 1's indexes.
    @Test func infoOnAReleaseOneStore() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("library")
        try await Release1.store(SampleData.oldBooks(5, offset: 0, authors: 3), at: path, options: quietOptions)
        let run = try folio("info", path)
        #expect(run.status == 0, "\(run)")
        #expect(run.output.contains("versions         2024-03 (current): 5 records"))
        let indexes = try section("books", of: run).filter { $0.hasPrefix("    ") }
        #expect(indexes.map { $0.split(separator: " ").first.map(String.init) } == ["isbn", "title"])
        #expect(indexes.allSatisfy { $0.contains(" built ") })
    }

    /// `1,234,567`.
    func grouped(_ number: UInt64) -> String {
        let digits = Array(String(number))
        return String(
            digits.enumerated().flatMap { index, digit in
                index > 0 && (digits.count - index) % 3 == 0 ? [",", digit] : [digit]
            })
    }

    /// Lines of the `datastore NAME` section.
    func section(_ name: String, of run: FolioRun) throws -> [String] {
        let start = try #require(run.lines.firstIndex(of: "datastore \(name)"))
        return Array(run.lines[(start + 1)...].prefix { !$0.isEmpty })
    }
}
