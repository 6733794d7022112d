import Foundation
@_spi(Engine) import Folio
import FolioStorage
import LibraryExample

/// `folio demo [DIR]`: the worked example of Docs/Guide.md, run against a real store, with
/// timings: declare, write, query, transact, migrate, compact, verify.
enum DemoCommand: Command {
    static let name = "demo"
    static let summary = "build a sample library store and show what Folio does, with timings"
    static let positionals = [
        PositionalSpec(
            "DIR", optional: true,
            help:
                "where to build the store: a path that does not exist, or an empty directory (default: a new temporary directory)"
        )
    ]
    static let options: [OptionSpec] = []
    static let showsProgress = true
    static let details = [
        """
        Runs the worked example of Docs/Guide.md: release 1 of an app stores books in an old \
        shape; today's app opens the store with today's formats (books and authors), upgrades \
        it (indexes rebuilt, old records migrated, with progress), writes a few thousand \
        records, queries by identifier range, unique index, many-to-many index and index \
        ranges, runs a #Predicate query and shows its plan, changes books by predicate in a \
        transaction, runs a transaction across both datastores (and one that is refused and \
        leaves nothing behind), deletes a range, compacts and verifies. Each step is printed with \
        its time, then the store's statistics and the commands to look at the store it \
        leaves behind. Takes a few seconds.
        """
    ]
    static let examples = ["folio demo", "folio demo /tmp/library.folio && folio info /tmp/library.folio"]

    static let oldBooks = 600
    static let newBooks = 2_400
    static let authorCount = 40
    static let revisions = 20

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let path = try arguments.positionals.first.map(checkedDirectory) ?? temporaryDirectory()
        let quiet = arguments.flag("quiet")
        let out = OutputStream.standardOutput
        let clock = ContinuousClock()
        let begin = clock.now
        func step(_ elapsed: Duration, _ text: String) {
            let time = Format.duration(elapsed)
            out.line(String(repeating: " ", count: max(0, 10 - time.count)) + time + "  " + text)
            out.flush()
        }
        func timed<T>(_ body: () async throws -> T) async throws -> (T, Duration) {
            let start = clock.now
            let result = try await body()
            return (result, clock.now - start)
        }
        let options = PersistenceOptions()
        out.line("Folio demo: the library of Docs/Guide.md (books and authors), in \(path)")
        out.line()

        // 1. Release 1 of the app, with its older book format.
        let old = SampleData.oldBooks(oldBooks, offset: 10_000, authors: authorCount)
        var (_, elapsed) = try await timed { try await Release1.store(old, at: path, options: options) }
        step(
            elapsed,
            "release 1 stored \(Format.count(oldBooks)) books in its format (version 2024-03: one author, no year)")

        // 2. Today's app: today's formats, an upgrade with progress.
        let library: Library
        (library, elapsed) = try await timed { try Library(at: path, options: options) }
        defer { library.persistence.close() }
        step(elapsed, "today's app opened the store, declaring books (2 versions, 4 indexes) and authors (2 indexes)")
        (_, elapsed) = try await timed {
            try await library.persistence.perform {
                for author in SampleData.authors(authorCount) { try await library.add(author) }
            }
        }
        step(elapsed, "\(Format.count(authorCount)) authors added in one transaction")
        let upgrade = ProgressReporter(
            mode: ProgressReporter.mode(quiet: quiet), verb: "upgraded", unit: .items("records"))
        var migrated = 0
        (_, elapsed) = try await timed {
            // What `Library.upgrade` does, called here so that the progress closure stays on
            // this actor (the migrateAndReindex calls run on the caller's actor).
            try await library.authors.migrateAndReindex()
            try await library.books.migrateAndReindex { progress in
                switch progress {
                case .evaluating: break
                case .working(let current, let total): upgrade.update(UInt64(current), of: UInt64(total))
                case .complete(let total): migrated = total
                }
            }
        }
        upgrade.finish(UInt64(migrated), of: UInt64(migrated))
        let oldLeft = try StoreInspector(store: library.persistence.store).versionsPresent(in: "books")["2024-03"] ?? 0
        step(
            elapsed,
            "upgrade: books' indexes rebuilt for today's declaration and \(Format.count(oldBooks)) release-1 books "
                + "rewritten as 2025-01 (\(Format.count(migrated)) records of work; \(oldLeft) left in the old version)"
        )

        // 3. Writes.
        let books = SampleData.books(newBooks, authors: authorCount)
        (_, elapsed) = try await timed {
            try await library.persistence.perform {
                for book in books { try await library.books.persist(book) }
            }
        }
        step(elapsed, "\(Format.count(newBooks)) books written in one transaction (each updates 4 indexes)")
        (_, elapsed) = try await timed {
            for var book in books.prefix(revisions) {
                book.title += " (Revised)"
                try await library.books.persist(book)
            }
        }
        step(
            elapsed,
            "\(revisions) books revised, each in its own durable transaction "
                + "(\(Format.duration(elapsed / revisions)) each)")

        // 4. Reads.
        let wanted = books[1_234 % newBooks]
        let byISBN: Book?
        (byISBN, elapsed) = try await timed { try await library.book(isbn: wanted.isbn) }
        step(elapsed, "by ISBN \(wanted.isbn) (unique, covering index): \"\(byISBN?.title ?? "not found")\"")
        let byAuthor: [Book]
        (byAuthor, elapsed) = try await timed { try await library.books(by: 3) }
        step(elapsed, "by author 3 (many-to-many index): \(Format.count(byAuthor.count, "book"))")
        var shelf: [String] = []
        (_, elapsed) = try await timed {
            for try await book in library.shelf(from: "glass", to: "glasz") { shelf.append(book.title) }
        }
        step(
            elapsed,
            "titles \"glass\" ..< \"glasz\" (range over a computed index): \(Format.count(shelf.count, "book")), "
                + "from \"\(shelf.first ?? "")\" to \"\(shelf.last ?? "")\"")
        var newest: [Int] = []
        (_, elapsed) = try await timed {
            for try await book in library.newest(5) { newest.append(book.year) }
        }
        step(
            elapsed,
            "newest 5 (year index, descending, limit 5): years \(newest.map(String.init).joined(separator: ", "))")
        let nineties: Int
        (nineties, elapsed) = try await timed { try await library.books.count(1990...1999, from: \.year) }
        step(elapsed, "counted books of 1990 ... 1999 (year index, no record decoded): \(Format.count(nineties))")
        let firstThousand: Int
        (firstThousand, elapsed) = try await timed {
            try await library.books.count(SampleData.bookID(0)..<SampleData.bookID(1_000))
        }
        step(elapsed, "counted an identifier range of UUIDs: \(Format.count(firstThousand, "book"))")
        let recent: [Book]
        (recent, elapsed) = try await timed { try await library.books(by: 3, since: 1990, limit: 10).collect() }
        step(
            elapsed,
            "query #Predicate { $0.authorIDs.contains(3) && $0.year >= 1990 }, by title, limit 10: "
                + "\(Format.count(recent.count, "book")), from \"\(recent.first?.title ?? "")\"")
        let plan: QueryPlan
        (plan, elapsed) = try await timed { try await library.explainBooks(by: 3, since: 1990) }
        step(elapsed, "explain that query: \(plan)")

        // 5. Transactions across both datastores.
        let merged: Int
        (merged, elapsed) = try await timed { try await library.merge(author: authorCount - 1, into: authorCount - 2) }
        step(
            elapsed,
            "merged author \(authorCount - 1) into \(authorCount - 2): update(where: #Predicate { "
                + "$0.authorIDs.contains(\(authorCount - 1)) }) changed \(Format.count(merged, "book")), then the author "
                + "was deleted, in one transaction")
        let newcomer = Author(id: authorCount, name: "Lena Okafor", born: 1990)
        var book = Book(
            id: SampleData.bookID(50_000), title: "The Orchard Engine", authorIDs: [3, newcomer.id],
            isbn: "978-1-0050000-0", year: 2025)
        (_, elapsed) = try await timed { try await library.publish(book, withNewAuthors: [newcomer]) }
        step(elapsed, "published a book with a new co-author: one transaction across books and authors")
        book.id = SampleData.bookID(50_001)
        book.isbn = "978-1-0050001-1"
        book.authorIDs = [999]
        var refusal = "was not refused"
        (_, elapsed) = try await timed {
            do {
                try await library.publish(
                    book, withNewAuthors: [Author(id: authorCount + 1, name: "Ghost", born: 2000)])
            } catch LibraryError.unknownAuthor(let id) {
                refusal = "was refused: author \(id) is unknown"
            }
        }
        let (authorsNow, booksNow) = (try await library.authors.count(), try await library.books.count())
        step(
            elapsed,
            "a book by an unknown author, with a new co-author, \(refusal); nothing of it kept: "
                + "still \(Format.count(authorsNow, "author")) and \(Format.count(booksNow, "book"))")
        // 6. Values by key, beside the books: the publish count moved with the one book kept.
        (_, elapsed) = try await timed {
            try library.remember(shelf: "glass")
            try library.updateDisplay { $0.pageSize = 50 }
            try await library.persistence.values.flush()
        }
        let values = library.persistence.values
        step(
            elapsed,
            "values by key: \(ValueKeys.publishedCount.name) = \(values[.publishedCount]) (counted in publish's "
                + "transaction, the refused book not counted), \(ValueKeys.lastShelf.name) = \"\(values[.lastShelf] ?? "")\", "
                + "page size \(values[.display].pageSize); set, then flushed")
        let deleted: Int
        (deleted, elapsed) = try await timed {
            try await library.books.delete(SampleData.bookID(newBooks - 400)..<SampleData.bookID(newBooks))
        }
        step(elapsed, "withdrew \(Format.count(deleted, "book")) (an identifier range, one transaction)")

        // 7. Compaction and verification.
        let store = library.persistence.store
        let before = try store.statistics()
        let copying = ProgressReporter(mode: ProgressReporter.mode(quiet: quiet), verb: "copied")
        let compaction: CompactionReport
        (compaction, elapsed) = try await timed {
            try store.compact { progress in
                if case .copying(let done, let total) = progress { copying.update(done, of: total) }
            }
        }
        copying.finish(before.liveBytes, of: before.liveBytes)
        step(
            elapsed,
            "compacted: snapshot file \(Format.bytes(compaction.bytesBefore)) → \(Format.bytes(compaction.bytesAfter)) "
                + "(\(Format.bytes(before.deadBytes)) dead reclaimed)")
        let verification: PersistenceVerificationReport
        (verification, elapsed) = try await timed { library.persistence.verify() }
        step(
            elapsed,
            "verified \(Format.count(verification.storage.pagesChecked, "page")), "
                + "\(Format.count(verification.recordsChecked, "record")), "
                + "\(Format.count(verification.entriesChecked, "index entry", plural: "index entries")): "
                + (verification.isClean ? "no problems" : "\(Format.count(verification.lines.count, "problem"))"))
        for line in verification.lines { out.line("    problem: \(CommandFailure.oneLine(line))") }

        // 8. Statistics, and where to look.
        let statistics = try store.statistics()
        // Retention may already have removed the replaced file (over its byte limit): say it
        // is kept only when it is there.
        let retained =
            statistics.fileCount > 1 ? " (the replaced one is kept for readers for the retention period)" : ""
        out.line()
        out.line("store statistics (\(Format.duration(clock.now - begin)) in all)")
        let rows: [[String]] = [
            ["generation", "\(statistics.generation)"],
            [
                "datastores",
                "authors \(Format.count(authorsNow, "record")), books \(Format.count(booksNow - deleted, "record"))",
            ],
            ["live", "\(Format.bytes(statistics.liveBytes)) in \(Format.count(statistics.treeCount, "tree"))"],
            ["dead", Format.bytes(statistics.deadBytes)],
            [
                "files",
                "\(Format.count(statistics.fileCount, "snapshot file")), \(Format.bytes(statistics.totalFileBytes))"
                    + retained,
            ],
        ]
        for line in Format.table(rows, indent: "  ") { out.line(line) }
        out.line()
        out.line("Look at the store it left:")
        let word = Format.shellWord(path)
        out.line("  folio info \(word)")
        out.line("  folio verify \(word)")
        out.line("  folio dump \(word) authors --limit 3")
        out.line("  folio dump \(word) books --index year --from 1990 --to 1991 --limit 5")
        out.line("  folio dump \(word) --values")
        out.flush()
        return verification.isClean ? .success : .problemsFound
    }

    /// A new directory under the system's temporary directory.
    static func temporaryDirectory() throws -> String {
        var template = Array((NSTemporaryDirectory().trimmingTrailingSlashes + "/folio-demo-XXXXXX").utf8CString)
        let created = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
        guard created != nil else {
            throw CommandFailure(
                "cannot create a temporary directory for the demo: \(String(cString: strerror(errno)))",
                status: .storeError)
        }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `path`, if it does not exist or is an empty directory: the demo builds a new store.
    static func checkedDirectory(_ path: String) throws -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return path }
        guard isDirectory.boolValue, (try? FileManager.default.contentsOfDirectory(atPath: path))?.isEmpty == true
        else {
            throw CommandFailure(
                "demo: \(path) exists and is not an empty directory; the demo builds a new store there "
                    + "(give a new path, or none for a temporary directory)", status: .storeError)
        }
        return path
    }
}

extension String {
    var trimmingTrailingSlashes: String {
        var text = self
        while text.count > 1 && text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
