import Foundation
import Folio

/// The steps of Docs/Guide.md, in order, as one function that tests run: every code block
/// of the guide is part of this target, so the guide cannot drift from code that works.
public enum GuideTour {
    /// What the tour observed, for its test to check.
    public struct Report: Sendable {
        public var booksAfterUpgrade = 0
        public var oldRecordsMigrated = 0
        public var progress: [MigrationProgress] = []
        public var byISBN: Book?
        public var byAuthor = 0
        public var shelf: [String] = []
        public var newestYears: [Int] = []
        public var recentByAuthor: [Book] = []
        public var plan: QueryPlan?
        public var mergedBooks = 0
        public var afterMerge: (duplicateBooks: Int, keptBooks: Int, authors: Int) = (0, 0, 0)
        public var authorsBeforeMerge: (then: [Int], now: [Int])?
        public var changedByMerge: [Change<Book, UUID>] = []
        public var undoneAction: String?
        public var afterUndo: (before: Int, during: Int, after: Int) = (0, 0, 0)
        public var retention: HistoryRetention?
        public var undoneImport: String?
        public var booksAtCheckpoint: (then: Int, now: Int, afterCompaction: Int) = (0, 0, 0)
        public var replicaCaughtUp = false
        public var restoredFromReplica: (generation: UInt64, books: Int, booksNow: Int) = (0, 0, 0)
        public var rejectedPublish: LibraryError?
        public var refusedImports: [FolioError] = []
        public var helperCount = 0
        public var memoryCount = 0
        public var liveCounts: [Int] = []
        public var helperSaw: Change<Book, UUID>.Kind?
        public var publishedCount = 0
        public var valueKeys: [String] = []
        public var helperShelf: String?
        public var observedCounts: [Int] = []
        public var observableCounts: [Int?] = []
    }

    /// Runs the tour in a store at `path`, which must not exist yet.
    public static func run(at path: String) async throws -> Report {
        var report = Report()

        // Release 1 of the app stored 300 books in the old shape.
        try await Release1.store(SampleData.oldBooks(300, offset: 10_000, authors: 40), at: path)

        // Today's app opens the same store with today's declarations.
        let library = try Library(at: path)
        defer { library.persistence.close() }
        for author in SampleData.authors(40) {
            try await library.add(author)
        }

        // Writing: a book and its new co-author, in one transaction.
        let newcomer = Author(id: 40, name: "Lena Okafor", born: 1990)
        var book = SampleData.books(1, authors: 40)[0]
        book.authorIDs = [3, newcomer.id]
        try await library.publish(book, withNewAuthors: [newcomer])

        // A book by an unknown author is refused, and nothing of it is stored.
        do {
            var orphan = SampleData.books(2, authors: 40)[1]
            orphan.authorIDs = [999]
            try await library.publish(orphan, withNewAuthors: [Author(id: 41, name: "Ghost", born: 2000)])
        } catch let error as LibraryError {
            report.rejectedPublish = error
        }

        // Many more books, in one transaction.
        try await library.persistence.perform {
            for book in SampleData.books(2_000, authors: 40).dropFirst() {
                try await library.books.persist(book)
            }
        }

        // Importing: a book whose ISBN another book has is refused alone; the rest is kept.
        let existing = SampleData.books(3, authors: 40)[2]
        var clash = SampleData.books(2, authors: 40)[1]
        clash.isbn = existing.isbn
        report.refusedImports = try await library.importBooks([existing, clash]).map(\.error)

        // Reading: by a unique index, a many-to-many index, ranges.
        report.byISBN = try await library.book(isbn: book.isbn)
        report.byAuthor = try await library.books(by: 3).count
        for try await found in library.shelf(from: "glass", to: "glasz") {
            report.shelf.append(found.title)
        }
        for try await found in library.newest(5) {
            report.newestYears.append(found.year)
        }

        // Querying: a predicate and a sort, planned over the indexes; explain says how.
        report.recentByAuthor = try await library.books(by: 3, since: 1990, limit: 10).collect()
        report.plan = try await library.explainBooks(by: 3, since: 1990)

        // Upgrading: old records are readable as they are; migrateAndReindex rewrites them once.
        try await library.upgrade { progress in
            report.progress.append(progress)
        }
        report.booksAfterUpgrade = try await library.books.count()
        report.oldRecordsMigrated =
            report.progress.last.map { if case .complete(let total) = $0 { total } else { 0 } } ?? 0

        // Changing by predicate: author 39 turns out to be author 38 (after the upgrade, whose
        // count of release-1 records the test checks).
        let beforeMerge = library.persistence.currentToken
        let moved = try await library.books(by: 39).first
        report.mergedBooks = try await library.merge(author: 39, into: 38)
        // The past stays readable: the book as it was before the merge.
        if let moved, let then = try await library.book(moved.id, asOf: beforeMerge),
            let now = try await library.books.load(moved.id)
        {
            report.authorsBeforeMerge = (then.authorIDs, now.authorIDs)
        }
        report.changedByMerge = try await library.bookChanges(since: beforeMerge)

        // Undo: a named action reverted as a new transaction.
        let countBefore = try await library.books.count()
        var extra = SampleData.books(2_002, authors: 40)[2_001]
        extra.title = "Undoable"
        try await library.add(extra)
        let countDuring = try await library.books.count()
        report.undoneAction = try await library.undo()
        report.afterUndo = (countBefore, countDuring, try await library.books.count())
        report.afterMerge = (
            try await library.books(by: 39).count, try await library.books(by: 38).count,
            try await library.authors.count()
        )

        // Keeping history: a declared retention, and a checkpoint before an import that
        // stays readable after compaction replaced its file.
        try await library.keepAMonthOfHistory()
        report.retention = try library.persistence.historyRetention()
        let imported = SampleData.books(2_010, authors: 40).suffix(5).map { book in
            var book = book
            book.title += " (imported)"
            return book
        }
        let checkpoint = try await library.importBooksAfterCheckpoint(imported)
        try await library.persistence.compact()
        let atCheckpoint = try await library.persistence.read(at: checkpoint.token) { try await library.books.count() }
        report.booksAtCheckpoint = (atCheckpoint, try await library.books.count(), 0)
        try await library.persistence.compact()
        report.booksAtCheckpoint.afterCompaction = try await library.persistence.read(at: checkpoint.token) {
            try await library.books.count()
        }
        // Undo reaches back past the compactions: the retention keeps the commit before the import.
        report.undoneImport = try await library.undo()
        try await library.persistence.releaseCheckpoint("before import")

        // Backups and replicas: a replica follows the library's commits, and a
        // point-in-time restore from it brings back the library as it was before a book.
        let replicaPath = path + "-replica"
        let restoredPath = path + "-restored"
        defer {
            try? FileManager.default.removeItem(atPath: replicaPath)
            try? FileManager.default.removeItem(atPath: restoredPath)
        }
        let replication = Task { try await library.replicate(to: replicaPath) }
        let beforeLateBook = library.persistence.currentToken
        var late = SampleData.books(2_020, authors: 40).last!
        late.title += " (late)"
        try await library.add(late)
        report.replicaCaughtUp = try await waitForReplica(at: replicaPath, toReach: library.persistence.currentToken)
        replication.cancel()
        try await replication.value
        let restored = try Library.restore(from: replicaPath, at: beforeLateBook, into: restoredPath)
        let restoredStore = try Persistence(readingFrom: restoredPath)
        report.restoredFromReplica = (
            restored.generation, try await restoredStore.datastore(for: BookFormat.self).count(),
            try await library.books.count()
        )
        restoredStore.close()
        _ = try await library.withdraw(late.id)

        // Values by key: counted with the books, set at once, durable after flush.
        report.publishedCount = library.persistence.values[.publishedCount]
        try library.remember(shelf: "glass")
        try library.updateDisplay { $0.pageSize = 50 }
        try await library.persistence.values.flush()
        report.valueKeys = try library.persistence.values.keys(withPrefix: "library/")

        // A helper process opens the store read-only, beside the writer.
        let helper = try Persistence(readingFrom: path)
        defer { helper.close() }
        let helperBooks = helper.datastore(for: BookFormat.self)
        report.helperCount = try await helperBooks.count()

        // Observing: a live query yields its results now, then after each change.
        let live = try await library.watchBooks(by: 3)
        var updates = live.makeAsyncIterator()
        let before = try await updates.next() ?? []
        // The helper observes the writer's commits too, from its own (read-only) store.
        let changes = try await helperBooks.observe()
        // It reads the writer's values, and observes one.
        report.helperShelf = helper.values[.lastShelf]
        var counts = helper.values.observe(.publishedCount).makeAsyncIterator()
        report.observedCounts.append(try await counts.next() ?? -1)
        // The same books as an Observable object, for a SwiftUI view: loading, then loaded.
        let shelf = library.observedBooks(by: 3)
        let shown = await ObservedResults.results(of: shelf, where: { _ in true })
        report.observableCounts.append(shown?.count)
        var another = SampleData.books(2_001, authors: 40)[2_000]
        another.authorIDs = [3]
        try await library.publish(another)
        let after = try await updates.next() ?? []
        // Its results change once the commit is observed, on the main actor.
        let count = shown?.count ?? 0
        report.observableCounts.append(await ObservedResults.results(of: shelf, where: { $0.count > count })?.count)
        report.observedCounts.append(try await counts.next() ?? -1)
        report.liveCounts = [before.count, after.count]
        for await event in changes {
            if case .change(let change) = event {
                report.helperSaw = change.kind
                break
            }
        }

        // Tests use an in-memory persistence: same behaviour, nothing on disk.
        let memory = Persistence.inMemory()
        let memoryAuthors = memory.datastore(for: AuthorFormat.self)
        try await memoryAuthors.persist(newcomer)
        report.memoryCount = try await memoryAuthors.count()

        return report
    }

    /// Waits until the replica at `path` holds `token`'s commit (a reader of it opens there).
    private static func waitForReplica(at path: String, toReach token: ObservationToken) async throws -> Bool {
        for _ in 0..<3_000 {
            if FileManager.default.fileExists(atPath: path + "/root") {
                let replica = try Persistence(readingFrom: path)
                defer { replica.close() }
                if replica.currentToken.generation >= token.generation { return true }
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
