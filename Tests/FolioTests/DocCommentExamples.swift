import Foundation
import Folio
import Observation

// The examples in the doc comments of Sources/Folio, as code the test target compiles:
// `DocCommentExampleTests` checks that every paragraph of every such example appears here
// line for line, and runs the ones that end. A change to the API that breaks an example
// breaks the build of the tests.

// MARK: Keys of the key-value store (ValueKeys, KeyValueStore, Persistence.makeDurable)

extension ValueKeys {
    static let launches = ValueKey<Int>("launches", default: 0)
}

extension ValueKeys {
    static let lastSync = ValueKey<Date?>("sync/last")
}

extension ValueKeys {
    static let onboardingDone = ValueKey<Bool>("onboardingDone", default: false)
}

enum DocCommentExamples {
    // MARK: Declarations (DatastoreFormat, DefaultVersion, IndexStorage)

    enum Declaring {
        /// Release 1's book: one author.
        struct BookV1: Codable {
            var id: UUID
            var title: String
            var authorID: Int
            var isbn: String
        }

        struct BookFormat: DatastoreFormat {
            enum Version: String, CaseIterable { case v1 = "2024-01", current = "2025-03" }
            static let key = "books"
            static let currentVersion = Version.current
            typealias Instance = Book  // Codable & Identifiable

            static func decode(
                _ version: Version, from data: ArraySlice<UInt8>,
                using decoder: FolioJSONDecoder
            ) throws -> Book {
                switch version {
                case .v1: Book(try decoder.decode(BookV1.self, from: data))
                case .current: try decoder.decode(Book.self, from: data)
                }
            }

            let title = Index(\Book.title)  // one-to-many
            let isbn = OneToOneIndex(\Book.isbn)  // unique
            let authors = ManyToManyIndex(\Book.authorIDs)
        }

        struct Note: Codable, Identifiable, Sendable, Equatable {
            var id: Int
            var text: String
        }

        struct NoteFormat: DatastoreFormat {
            static let key = "notes"
            typealias Instance = Note  // Codable & Identifiable
        }

        struct CoveringFormat: DatastoreFormat {
            static let key = "books"
            typealias Instance = Book
            let isbn = OneToOneIndex(\Book.isbn, storage: .covering)
        }

        struct Message: Codable, Identifiable, Sendable, Equatable {
            var id: Int
            var threadID: Int
            var read: Bool
        }

        struct MessageFormat: DatastoreFormat {
            static let key = "messages"
            typealias Instance = Message
            let thread = Index(\Message.threadID)
        }
    }

    // MARK: Persistence

    static func opening(book: Book) async throws {
        let persistence = try Persistence(at: "/path/to/Library.folio")  // Persistence<ReadWrite>
        let books = persistence.datastore(for: BookFormat.self)
        try await books.persist(book)

        let helper = try Persistence(readingFrom: "/path/to/Library.folio")  // Persistence<ReadOnly>
        _ = helper
    }

    static func waitingForAnotherWriter(path: String) throws -> Persistence<ReadWrite> {
        var options = PersistenceOptions()
        options.busyTimeout = .seconds(1)
        let persistence = try Persistence(at: path, options: options)
        return persistence
    }

    static func transaction(
        persistence: Persistence<ReadWrite>, authors: Datastore<AuthorFormat, ReadWrite>,
        books: Datastore<BookFormat, ReadWrite>, author: Author, book: Book
    ) async throws {
        try await persistence.perform {
            try await authors.persist(author)
            try await books.persist(book)  // a unique-index conflict here undoes both
        }
    }

    static func makingDurable(persistence: Persistence<ReadWrite>) async throws {
        try persistence.values.set(true, for: .onboardingDone)  // queued, committed soon
        try await persistence.makeDurable()  // on disk now, with every commit
    }

    static func compacting(persistence: Persistence<ReadWrite>) async throws -> CompactionReport {
        let report = try await persistence.compact()
        print("\(report.bytesBefore) → \(report.bytesAfter) bytes")
        return report
    }

    static func verifying(persistence: Persistence<ReadWrite>) -> Bool {
        let report = persistence.verify()
        if !report.isClean {
            for line in report.lines { print("store damaged: \(line)") }
        }
        return report.isClean
    }

    // MARK: Writing

    static func writing(books: Datastore<BookFormat, ReadWrite>, book: Book) async throws -> (Book?, Book) {
        let replaced = try await books.persist(book)  // nil when the book is new
        let deleted = try await books.delete(book.id)  // throws instanceNotFound if there is none
        return (replaced, deleted)
    }

    static func readingThePast(
        persistence: Persistence<ReadWrite>, books: Datastore<BookFormat, ReadWrite>, revised: Book
    ) async throws -> Book? {
        let before = persistence.currentToken
        try await books.persist(revised)
        let old = try await persistence.read(at: before) {
            try await books.load(revised.id)  // the book as it was before
        }
        return old
    }

    static func changesSince(
        persistence: Persistence<ReadWrite>, books: Datastore<BookFormat, ReadWrite>, revised: Book
    ) async throws -> [Change<Book, Book.ID>] {
        let since = persistence.currentToken
        try await books.persist(revised)
        for try await change in books.changes(from: since) {
            print(change.kind, change.identifier, change.oldValue?.title ?? "-", change.newValue?.title ?? "-")
        }
        return try await books.changes(from: since).collect()
    }

    static func namedActions(
        persistence: Persistence<ReadWrite>, books: Datastore<BookFormat, ReadWrite>, imported: [Book]
    ) async throws -> HistoryAction? {
        try await persistence.perform(named: "Import 20 books") {
            for book in imported { try await books.persist(book) }
        }
        let action = try await persistence.undo()  // action?.name == "Import 20 books"
        return action
    }

    static func forcingAnUndo(persistence: Persistence<ReadWrite>, userConfirms: ([String]) -> Bool) async throws {
        do {
            try await persistence.undo()
        } catch FolioError.undoConflict(let generation, let changed) {
            if userConfirms(changed) {
                try await persistence.undo(forcing: ObservationToken(generation: generation))
            }
        }
    }

    static func restoringACheckpoint(persistence: Persistence<ReadWrite>, restoredPath: String) throws {
        let checkpoint = try persistence.checkpoints().first { $0.name == "before import" }!
        try persistence.backup(to: restoredPath, at: checkpoint.token)
    }

    static func replicatingUntilCancelled(persistence: Persistence<ReadWrite>) async throws {
        let replication = Task {
            try await persistence.replicate(to: "/Volumes/Backup/Library.folio")
        }
        // ... the app runs; each commit reaches the replica within a commit's time.
        replication.cancel()  // the replica's newest root is made durable, then it returns
    }

    static func keepingHistory(
        persistence: Persistence<ReadWrite>, books: Datastore<BookFormat, ReadWrite>,
        importBooks: () async throws -> Void
    ) async throws -> Int {
        try await persistence.setHistoryRetention(.generations(10_000))
        try await persistence.setHistoryRetention(HistoryRetention(duration: .seconds(7 * 86_400), bytes: 1 << 30))

        let checkpoint = try await persistence.checkpoint("before import")
        try await importBooks()
        let before = try await persistence.read(at: checkpoint.token) { try await books.count() }

        for checkpoint in try persistence.checkpoints() { print(checkpoint.name, checkpoint.token) }

        try await persistence.releaseCheckpoint("before import")
        return before
    }

    @MainActor static func connectingUndo(
        persistence: Persistence<ReadWrite>, books: Datastore<BookFormat, ReadWrite>, dune: Book,
        undoManager: some UndoRegistrar
    ) async throws {
        let undo = UndoConnection(persistence: persistence, registrar: undoManager)
        try await undo.perform(named: "Add “Dune”") { try await books.persist(dune) }
        // Edit > Undo Add “Dune” now reverts it in the store; Edit > Redo re-applies it.
    }

    static func deletingWithoutDecoding(books: Datastore<BookFormat, ReadWrite>, id: Book.ID) async throws {
        do {
            _ = try await books.load(id)
        } catch .decodingFailed {
            try await books.deleteWithoutDecoding(id)
        }
    }

    static func updating(messages: Datastore<Declaring.MessageFormat, ReadWrite>, thread: Int) async throws {
        try await messages.update(where: #Predicate { $0.threadID == thread && !$0.read }) { $0.read = true }
    }

    static func migrating(books: Datastore<BookFormat, ReadWrite>) async throws {
        try await books.migrateAndReindex { progress in
            if case .working(let current, let total) = progress { print("\(current)/\(total)") }
        }
    }

    // MARK: Reading

    static func loadingByIdentifier(authors: Datastore<AuthorFormat, ReadWrite>) async throws -> [Author] {
        if let author = try await authors.load(40) {
            print(author.name)
        }
        let firstTen = try await authors.load(1...10).collect()
        let lastFive = try await authors.load(..., order: .descending, limit: 5).collect()
        return firstTen + lastFive
    }

    static func loadingFromIndexes(books: Datastore<BookFormat, ReadWrite>, authorID: Author.ID) async throws -> [Book]
    {
        let book = try await books.load("978-1-0001234-4", from: \.isbn)
        for try await book in books.load(authorID, from: \.authors) {
            print(book.title)
        }
        let nineties = try await books.load(1990..<2000, from: \.year, order: .descending).collect()
        for try await book in books.load(..., from: \.title, limit: 50) {
            print(book.title)
        }
        return nineties + (book.map { [$0] } ?? [])
    }

    static func streaming(books: Datastore<BookFormat, ReadWrite>) async throws -> [Book] {
        for try await book in books.load("a"..<"b", from: \.title) { print(book.title) }
        let firstTen = try await books.load(..., limit: 10).collect()
        return firstTen
    }

    static func querying(
        books: Datastore<BookFormat, ReadWrite>, authors: Datastore<AuthorFormat, ReadWrite>
    ) async throws -> ([Book], Author?) {
        let recent = try await books.fetch(
            where: #Predicate { $0.year >= 1990 }, sortBy: [SortDescriptor(\.title)], limit: 20
        ).collect()
        let eldest = try await authors.first(where: #Predicate { $0.born < 1900 }, sortBy: [SortDescriptor(\.born)])
        return (recent, eldest)
    }

    static func explainingScans(books: Datastore<BookFormat, ReadWrite>) async throws -> Bool {
        let plan = try await books.explain(where: #Predicate { $0.year >= 1990 })
        let readsYear = plan.scans.map(\.index) == ["year"]
        return readsYear
    }

    static func explainingIndexes(books: Datastore<BookFormat, ReadWrite>) async throws -> Bool {
        let plan = try await books.explain(where: #Predicate { $0.year >= 1990 })
        let usesYear = plan.indexes == ["year"]
        return usesYear
    }

    static func explainingSortKeys(books: Datastore<BookFormat, ReadWrite>) async throws -> Bool {
        let sorted = try await books.explain(sortBy: [SortDescriptor(\.title)], limit: 20)
        let byTitle = sorted.sortKeys == [QueryPlan.SortKey(property: "title", descending: false)]
        return byTitle
    }

    // MARK: Observing (these run until their task is cancelled: compiled, not run)

    static func observingChanges(books: Datastore<BookFormat, ReadWrite>) async throws {
        for await event in try await books.observe() {
            if case .change(let change) = event { print(change.kind, change.identifier) }
        }
    }

    static func observingOne(authors: Datastore<AuthorFormat, ReadWrite>) async throws {
        for await event in try await authors.observe(40) {
            switch event {
            case .value(let author): print(author.name)
            case .deleted: print("deleted")
            case .failure(let error): print(error)
            }
        }
    }

    static func liveQueries(books: Datastore<BookFormat, ReadWrite>) async throws {
        let live = try await books.liveQuery(where: #Predicate { $0.year >= 2020 }, sortBy: [SortDescriptor(\.title)])
        for try await recent in live {
            print(recent.map(\.title))  // the results now, then after each commit that changes them
        }
        let shelf = try await books.liveQuery("a"..<"b", from: \.title)
        _ = shelf
    }

    // MARK: Live results (ObservableResults; its SwiftUI examples cannot compile here)

    @MainActor
    static func observableResults(
        books: Datastore<BookFormat, ReadWrite>, authors: Datastore<AuthorFormat, ReadWrite>, indexer: any Actor
    ) -> [AnyObject] {
        let recent = ObservableResults(
            books, where: #Predicate { $0.year >= 2000 }, sortBy: [SortDescriptor(\.title)])
        withObservationTracking {
            print(recent.results.count)  // reading registers the dependency
        } onChange: {
            print("changes on the main actor")  // once, before the next change is made
        }

        // Changes happen on the main actor.
        let shelf = ObservableResults(
            books, where: #Predicate { $0.title.starts(with: "G") },
            sortBy: [SortDescriptor(\.title)], limit: 50)

        // Changes happen on `indexer`, an actor of the app.
        let early = ObservableResults(authors, where: #Predicate { $0.born < 1900 }, isolation: indexer)
        return [recent, shelf, early]
    }

    // MARK: Values by key

    static func values(persistence: Persistence<ReadWrite>) async throws -> (Int, Date?) {
        let launches = persistence.values[.launches]

        try persistence.values.set(persistence.values[.launches] + 1, for: .launches)
        try await persistence.values.flush()  // durable from here on

        try persistence.values.set(Date(), for: .lastSync)  // visible at once, committed within milliseconds

        let lastSync = try persistence.values.value(for: .lastSync)  // nil until set
        return (launches, lastSync)
    }
}

extension Book {
    /// Converts a release-1 book (DatastoreFormat's example).
    init(_ old: DocCommentExamples.Declaring.BookV1) {
        self.init(id: old.id, title: old.title, authorIDs: [old.authorID], isbn: old.isbn, year: 0)
    }
}
