import Foundation
import Folio

/// What the library refuses to do.
public enum LibraryError: Error, Equatable {
    /// A book names an author the library does not have.
    case unknownAuthor(Int)
}

/// The worked example's app code: a catalogue of books and authors in one persistence.
/// Docs/Guide.md walks through it; tests and `folio demo` run it.
public struct Library: Sendable {
    public let persistence: Persistence<ReadWrite>
    public let books: Datastore<BookFormat, ReadWrite>
    public let authors: Datastore<AuthorFormat, ReadWrite>

    /// Opens (or creates) the library stored at `path`.
    public init(at path: String, options: PersistenceOptions = PersistenceOptions()) throws {
        persistence = try Persistence(at: path, options: options)
        books = persistence.datastore(for: BookFormat.self)
        authors = persistence.datastore(for: AuthorFormat.self)
    }

    // MARK: Writing

    /// Adds or replaces an author.
    public func add(_ author: Author) async throws {
        try await authors.persist(author)
    }

    /// Adds a book and the authors it needs, and counts it, all or nothing: if any of its
    /// authors is unknown, or its ISBN is taken, neither the authors, the book nor the count
    /// are stored.
    public func publish(_ book: Book, withNewAuthors newAuthors: [Author] = []) async throws {
        try await persistence.perform {
            for author in newAuthors {
                try await authors.persist(author)
            }
            for id in book.authorIDs where try await authors.load(id) == nil {
                throw LibraryError.unknownAuthor(id)
            }
            if try await books.persist(book) == nil {
                try persistence.values.set(persistence.values[.publishedCount] + 1, for: .publishedCount)
            }
        }
    }

    /// Stores every book it can, in one transaction, and returns the ones it refused with
    /// the reason. A call that fails inside `perform` changes nothing, so catching its
    /// error and going on is safe: the transaction keeps everything else.
    public func importBooks(_ incoming: [Book]) async throws -> [(book: Book, error: FolioError)] {
        var refused: [(book: Book, error: FolioError)] = []
        try await persistence.perform {
            for book in incoming {
                do {
                    try await books.persist(book)
                } catch let error as FolioError {
                    refused.append((book, error))
                }
            }
        }
        return refused
    }

    /// Merges a duplicate author into the one kept: every book that names the duplicate
    /// names the kept author instead, and the duplicate is deleted, in one transaction.
    /// Returns how many books changed. Merging an author into itself changes nothing, and a
    /// duplicate already deleted still has its books rewritten.
    public func merge(author duplicate: Author.ID, into kept: Author.ID) async throws -> Int {
        guard duplicate != kept else { return 0 }
        return try await persistence.perform {
            let changed = try await books.update(where: #Predicate { $0.authorIDs.contains(duplicate) }) { book in
                var named = Set<Author.ID>()
                book.authorIDs = book.authorIDs.map { $0 == duplicate ? kept : $0 }.filter { named.insert($0).inserted }
            }
            // Books can name an author already gone: their rewrite stands without one.
            try await authors.deleteIfPresent(duplicate)
            return changed
        }
    }

    /// The book as it was at `token`, a past commit (nil if it did not exist then).
    public func book(_ id: Book.ID, asOf token: ObservationToken) async throws -> Book? {
        try await persistence.read(at: token) {
            try await books.load(id)
        }
    }

    /// Every book that changed since `token`, as it was then and as it is now.
    public func bookChanges(since token: ObservationToken) async throws -> [Change<Book, Book.ID>] {
        try await books.changes(from: token).collect()
    }

    /// Adds `book` as an action the app's Edit menu can undo ("Add “Title”").
    public func add(_ book: Book) async throws {
        try await persistence.perform(named: "Add “\(book.title)”") {
            try await books.persist(book)
        }
    }

    /// Undoes the newest action not undone; returns its name for the menu ("Undo Add …").
    public func undo() async throws -> String? {
        try await persistence.undo()?.name
    }

    /// Keeps a month of the library's history, in every process that opens it.
    public func keepAMonthOfHistory() async throws {
        try await persistence.setHistoryRetention(.duration(.seconds(30 * 86_400)))
    }

    /// Imports `imported` after a checkpoint, which keeps the library as it was before
    /// until the checkpoint is released.
    public func importBooksAfterCheckpoint(_ imported: [Book]) async throws -> HistoryCheckpoint {
        let checkpoint = try await persistence.checkpoint("before import")
        try await persistence.perform(named: "Import \(imported.count) books") {
            for book in imported { try await books.persist(book) }
        }
        return checkpoint
    }

    /// Keeps a replica of the library at `replica` (another disk, a network drive) until the
    /// task is cancelled: each commit reaches it once durable.
    public func replicate(to replica: String) async throws {
        try await persistence.replicate(to: replica)
    }

    /// Restores the library as the replica at `replica` held it at `token`, into a new
    /// store at `destination`.
    public static func restore(
        from replica: String, at token: ObservationToken, into destination: String
    ) throws -> BackupReport {
        let source = try Persistence(readingFrom: replica)
        defer { source.close() }
        return try source.backup(to: destination, at: token)
    }

    /// Withdraws a book; returns it.
    public func withdraw(_ id: Book.ID) async throws -> Book {
        try await books.delete(id)
    }

    // MARK: Reading

    /// The book with an ISBN (a unique, covering index: one lookup).
    public func book(isbn: String) async throws -> Book? {
        try await books.load(isbn, from: \.isbn)
    }

    /// Every book an author wrote or co-wrote (a many-to-many index).
    public func books(by author: Author.ID) async throws -> [Book] {
        try await books.load(author, from: \.authors).collect()
    }

    /// Books whose sort title starts with a letter in `first ..< last`, in title order,
    /// streamed (a range over a one-to-many index on a computed property).
    public func shelf(from first: String, to last: String) -> Records<Book> {
        books.load(first..<last, from: \.title)
    }

    /// The newest books, newest first.
    public func newest(_ count: Int) -> Records<Book> {
        books.load(1...9999, from: \.year, order: .descending, limit: count)
    }

    /// An author's books since a year, by title: a query in Foundation's terms, planned
    /// over the declared indexes.
    public func books(by author: Author.ID, since year: Int, limit: Int) -> Records<Book> {
        books.fetch(
            where: #Predicate { $0.authorIDs.contains(author) && $0.year >= year },
            sortBy: [SortDescriptor(\.title)], limit: limit)
    }

    /// How that query runs: which index it reads, what it filters and sorts.
    public func explainBooks(by author: Author.ID, since year: Int) async throws -> QueryPlan {
        try await books.explain(
            where: #Predicate { $0.authorIDs.contains(author) && $0.year >= year },
            sortBy: [SortDescriptor(\.title)])
    }

    /// An author and their books, read from one snapshot (both or neither see a commit
    /// that happens meanwhile).
    public func bibliography(of id: Author.ID) async throws -> (Author, [Book])? {
        try await persistence.read {
            guard let author = try await authors.load(id) else { return nil }
            return (author, try await books.load(id, from: \.authors).collect())
        }
    }

    // MARK: Observing

    /// An author's books, kept up to date: the list now, then the list after each commit
    /// that changes it.
    public func watchBooks(by author: Author.ID) async throws -> LiveResults<BookFormat> {
        try await books.liveQuery(author, from: \.authors)
    }

    /// An author's books by title, as an `Observable` object (what a SwiftUI view shows):
    /// its results change on the main actor, when the live query's do.
    public func observedBooks(by author: Author.ID) -> ObservableResults<BookFormat> {
        ObservableResults(
            books, where: #Predicate { $0.authorIDs.contains(author) }, sortBy: [SortDescriptor(\.title)])
    }

    // MARK: Upgrading

    /// Brings both datastores up to date: builds changed indexes and rewrites records
    /// stored by older releases, reporting progress.
    public func upgrade(progress: ((MigrationProgress) -> Void)? = nil) async throws {
        try await authors.migrateAndReindex()
        try await books.migrateAndReindex(progress: progress)
    }
}

/// What release 1 of the app did: store books in their old shape.
public enum Release1 {
    /// Opens the library at `path` as release 1 did and stores `books` there.
    public static func store(
        _ books: [BookV1], at path: String, options: PersistenceOptions = PersistenceOptions()
    ) async throws {
        let persistence = try Persistence(at: path, options: options)
        defer { persistence.close() }
        let datastore = persistence.datastore(for: BookFormatRelease1.self)
        try await persistence.perform {
            for book in books { try await datastore.persist(book) }
        }
    }
}
