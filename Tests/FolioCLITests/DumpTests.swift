import Testing
import Foundation
@_spi(Engine) import Folio
import FolioStorage
import LibraryExample

/// `folio dump STORE DATASTORE [--index NAME] [--from V] [--to V] [--limit N] [--reverse] [--json]`.
@Suite struct DumpTests {
    /// One dumped document, decoded.
    struct Document {
        let id: Any
        let version: String
        let record: Data
    }

    /// `--json`: one document per line.
    static func documents(json run: FolioRun) throws -> [Document] {
        try run.lines.map { try document(Data($0.utf8)) }
    }

    /// Pretty: documents one after another, each ending with "}" alone on a line.
    static func documents(pretty run: FolioRun) throws -> [Document] {
        var result: [Document] = []
        var current: [String] = []
        for line in run.lines {
            current.append(line)
            if line == "}" {
                result.append(try document(Data(current.joined(separator: "\n").utf8)))
                current = []
            }
        }
        #expect(current.isEmpty, "trailing text after the last document")
        return result
    }

    static func document(_ data: Data) throws -> Document {
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == ["id", "version", "record"])
        let record = try JSONSerialization.data(withJSONObject: try #require(object["record"]))
        return Document(
            id: try #require(object["id"]), version: try #require(object["version"] as? String), record: record)
    }

    /// Books as dumped: old records decoded as release 1 wrote them, converted for comparison.
    static func books(_ documents: [Document]) throws -> [Book] {
        try documents.map { document in
            switch document.version {
            case "2024-03": Book(try JSONDecoder().decode(BookV1.self, from: document.record))
            case "2025-01": try JSONDecoder().decode(Book.self, from: document.record)
            default: throw CocoaError(.coderInvalidValue)
            }
        }
    }

    @Test func dumpPrintsExactlyTheRecordsWritten() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let fixture = try await LibraryFixture.make(at: directory.child("library"))

        for mode in ["--json", nil] {
            let run = try runFolio(["dump", fixture.path, "authors"] + (mode.map { [$0] } ?? []))
            #expect(run.status == 0 && run.errors.isEmpty, "\(run)")
            let documents = mode == nil ? try Self.documents(pretty: run) : try Self.documents(json: run)
            #expect(documents.map { $0.id as? Int } == fixture.authors.map(\.id))
            #expect(documents.allSatisfy { $0.version == "2025-01" })
            #expect(try documents.map { try JSONDecoder().decode(Author.self, from: $0.record) } == fixture.authors)
        }

        let run = try folio("dump", fixture.path, "books", "--json")
        #expect(run.status == 0, "\(run)")
        let documents = try Self.documents(json: run)
        let expected = fixture.allBooks.sorted { $0.id.uuidString < $1.id.uuidString }
        #expect(documents.map { $0.id as? String } == expected.map(\.id.uuidString))
        #expect(try Self.books(documents) == expected)
        let oldIDs = Set(fixture.oldBooks.map(\.id.uuidString))
        #expect(documents.allSatisfy { $0.version == (oldIDs.contains($0.id as! String) ? "2024-03" : "2025-01") })
        // The old records are dumped as stored: release 1's shape.
        let old = try #require(documents.first { $0.version == "2024-03" })
        #expect(
            try JSONDecoder().decode(BookV1.self, from: old.record)
                == fixture.oldBooks.first { $0.id.uuidString == old.id as? String })
    }

    /// The exact text of both formats, for one record.
    @Test func outputFormatsAreExactlyAsDocumented() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("library")
        let library = try Library(at: path, options: quietOptions)
        try await library.add(Author(id: 7, name: "Ada \"Lovelace\" Okafor/Ø", born: 1815))
        library.persistence.close()

        let pretty = try folio("dump", path, "authors")
        #expect(pretty.status == 0)
        #expect(
            pretty.output == """
                {
                  "id": 7,
                  "record": {
                    "born": 1815,
                    "id": 7,
                    "name": "Ada \\"Lovelace\\" Okafor/Ø"
                  },
                  "version": "2025-01"
                }

                """)
        let compact = try folio("dump", "--json", path, "authors")
        #expect(
            compact.output
                == #"{"id":7,"record":{"born":1815,"id":7,"name":"Ada \"Lovelace\" Okafor/Ø"},"version":"2025-01"}"#
                + "\n")
    }

    @Test func dumpInIndexOrderWithRangesLimitAndReverse() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let fixture = try await LibraryFixture.make(at: directory.child("library"))
        let all = fixture.allBooks
        func byYear(_ a: Book, _ b: Book) -> Bool { (a.year, a.id.uuidString) < (b.year, b.id.uuidString) }

        let nineties = all.filter { (1990...1999).contains($0.year) }.sorted(by: byYear)
        #expect(nineties.count > 10)
        var run = try folio(
            "dump", fixture.path, "books", "--index", "year", "--from", "1990", "--to", "1999", "--json")
        #expect(run.status == 0, "\(run)")
        #expect(try Self.books(Self.documents(json: run)) == nineties)

        run = try folio(
            "dump", fixture.path, "books", "--index=year", "--from=1990", "--to=1999", "--limit=7", "--json")
        #expect(try Self.books(Self.documents(json: run)) == Array(nineties.prefix(7)))

        run = try folio(
            "dump", fixture.path, "books", "--index", "year", "--from", "1990", "--to", "1999", "--reverse", "--json")
        #expect(try Self.books(Self.documents(json: run)) == nineties.reversed())

        // Many-to-many: every book of author 3.
        run = try folio("dump", fixture.path, "books", "--index", "authors", "--from", "3", "--to", "3", "--json")
        let byAuthor = all.filter { $0.authorIDs.contains(3) }.sorted { $0.id.uuidString < $1.id.uuidString }
        #expect(try Self.books(Self.documents(json: run)) == byAuthor)

        // A unique index, one value.
        let wanted = fixture.books[42]
        run = try folio(
            "dump", fixture.path, "books", "--index", "isbn", "--from", wanted.isbn, "--to", wanted.isbn, "--json")
        #expect(try Self.books(Self.documents(json: run)) == [wanted])

        // An identifier range (UUIDs), inclusive at both ends.
        run = try folio(
            "dump", fixture.path, "books", "--from", SampleData.bookID(5).uuidString,
            "--to", SampleData.bookID(9).uuidString, "--json")
        #expect(try Self.books(Self.documents(json: run)) == Array(fixture.books[5...9]))

        run = try folio("dump", fixture.path, "books", "--limit", "0")
        #expect(run.status == 0 && run.output.isEmpty)
    }
}
