import Testing
import Foundation
import Folio
import FolioTestSupport

/// The examples in Folio's doc comments cannot rot: every paragraph of every ```` ```swift ````
/// block in a `///` comment of Sources/Folio appears, line for line, in
/// DocCommentExamples.swift, which this target compiles; the examples that end are run.
@Suite struct DocCommentExampleTests {
    static let root = ProjectExecutable.packageRoot()

    @Test func everyDocCommentExampleIsCompiledCode() throws {
        let examples = DocumentedCode.normalized(
            try String(contentsOfFile: "\(Self.root)/Tests/FolioTests/DocCommentExamples.swift", encoding: .utf8))
        let directory = "\(Self.root)/Sources/Folio"
        let files = try #require(FileManager.default.subpaths(atPath: directory)).filter { $0.hasSuffix(".swift") }
        var checked = 0
        var swiftUIOnly = 0
        for file in files.sorted() {
            let text = try String(contentsOfFile: "\(directory)/\(file)", encoding: .utf8)
            for paragraph in DocumentedCode.docCommentParagraphs(inSource: text) {
                let lines = DocumentedCode.normalized(paragraph.joined(separator: "\n"))
                // SwiftUI is not in the Linux toolchain: a SwiftUI-only file's examples, and
                // the view code in other files' examples, cannot be compiled here.
                if Self.usesSwiftUI(file: text, example: lines) {
                    swiftUIOnly += 1
                    continue
                }
                let found = DocumentedCode.source(examples, contains: lines)
                #expect(
                    found,
                    "an example in Sources/Folio/\(file) is not in DocCommentExamples.swift:\n\(lines.joined(separator: "\n"))"
                )
                checked += 1
            }
        }
        #expect(checked >= 30, "\(checked) example paragraphs found")
        #expect(swiftUIOnly <= 20, "\(swiftUIOnly) SwiftUI example paragraphs skipped")
    }

    /// Whether an example is SwiftUI code: it is in a file compiled only where SwiftUI is, or
    /// it uses a SwiftUI view or modifier.
    static func usesSwiftUI(file: String, example: [String]) -> Bool {
        if file.hasPrefix("#if canImport(SwiftUI)") { return true }
        let swiftUINames = [
            "List(", "Text(", "ProgressView(", "Button(", ".onChange(", ".onDisappear", ": View", ".environment(",
        ]
        return example.contains { line in swiftUINames.contains { line.contains($0) } }
    }

    @Test func theExamplesThatEndRun() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let authors = persistence.datastore(for: AuthorFormat.self)
        let books = persistence.datastore(for: BookFormat.self)
        try await persistence.perform {
            for id in 1...50 { try await authors.persist(Author(id: id, name: "Author \(id)", born: 1850 + id)) }
            for n in 0..<200 { try await books.persist(makeBook(n)) }
        }
        typealias Examples = DocCommentExamples

        let identified = try await Examples.loadingByIdentifier(authors: authors)
        #expect(identified.map(\.id) == Array(1...10) + [50, 49, 48, 47, 46])
        let indexed = try await Examples.loadingFromIndexes(books: books, authorID: 3)
        #expect(!indexed.isEmpty && indexed.allSatisfy { (1990..<2000).contains($0.year) })
        #expect(try await Examples.streaming(books: books).count == 10)
        let (recent, eldest) = try await Examples.querying(books: books, authors: authors)
        #expect(recent.count == 20 && recent.allSatisfy { $0.year >= 1990 })
        #expect(eldest?.id == 1)

        let book = makeBook(500)
        let (replaced, deleted) = try await Examples.writing(books: books, book: book)
        #expect(replaced == nil && deleted == book)
        try await Examples.transaction(
            persistence: persistence, authors: authors, books: books,
            author: Author(id: 60, name: "Ann", born: 1990), book: book)
        #expect(try await books.load(book.id) == book)
        try await Examples.deletingWithoutDecoding(books: books, id: book.id)
        #expect(try await books.load(book.id) == book, "a record that decodes is not deleted")
        try await Examples.migrating(books: books)
        let original = try #require(try await books.load(makeBook(7).id))
        var revised = original
        revised.title += ", revised"
        #expect(try await Examples.readingThePast(persistence: persistence, books: books, revised: revised) == original)
        #expect(try await books.load(original.id) == revised)
        var again = revised
        again.title += " again"
        let changes = try await Examples.changesSince(persistence: persistence, books: books, revised: again)
        #expect(
            changes.map(\.kind) == [.updated] && changes.first?.oldValue == revised && changes.first?.newValue == again)
        let imported = (900..<920).map { makeBook($0) }
        let countBefore = try await books.count()
        let undone = try await Examples.namedActions(persistence: persistence, books: books, imported: imported)
        #expect(undone?.name == "Import 20 books")
        #expect(try await books.count() == countBefore)
        let beforeImport = try await Examples.keepingHistory(persistence: persistence, books: books) {
            try await books.persist(makeBook(9_000))
        }
        #expect(beforeImport == countBefore)
        #expect(try await books.count() == countBefore + 1)
        #expect(try persistence.checkpoints().isEmpty)

        let messages = persistence.datastore(for: Examples.Declaring.MessageFormat.self)
        for id in 0..<4 { try await messages.persist(.init(id: id, threadID: id % 2, read: false)) }
        try await Examples.updating(messages: messages, thread: 1)
        #expect(try await messages.fetch().collect().map(\.read) == [false, true, false, true])

        let (launches, lastSync) = try await Examples.values(persistence: persistence)
        #expect(launches == 0 && lastSync != nil && persistence.values[.launches] == 1)
        try await Examples.makingDurable(persistence: persistence)
        #expect(persistence.values[.onboardingDone])
        let compacted = try await Examples.compacting(persistence: persistence)
        #expect(compacted.bytesAfter <= compacted.bytesBefore)
        #expect(Examples.verifying(persistence: persistence))
    }
}
