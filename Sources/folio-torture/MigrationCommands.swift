import Foundation
import Synchronization
import Folio
import FolioTestSupport
import LibraryExample

/// `folio-torture migrate-books STORE [--stop-after-first-batch]`: opens the worked
/// example's books as today's release declares them (`BookFormat`: a newer version and new
/// indexes) and runs `migrateAndReindex`, to be killed part-way: prints "evaluating",
/// "working C T" and "complete T" as it reports them (so the parent knows a batch has
/// committed), then "done". With `--stop-after-first-batch` it stops in its first
/// "working" report until its standard input ends, so that a kill lands after exactly one
/// committed batch however slow the parent is to send it.
func runMigrateBooks(_ arguments: [String]) async throws {
    let stops = arguments.count == 2 && arguments[1] == "--stop-after-first-batch"
    guard arguments.count == 1 || stops else {
        fail("usage: folio-torture migrate-books STORE [--stop-after-first-batch]")
    }
    let persistence = try Persistence(at: arguments[0], options: patient)
    defer { persistence.close() }
    var stopped = false
    try await persistence.datastore(for: BookFormat.self).migrateAndReindex { progress in
        switch progress {
        case .evaluating: say("evaluating")
        case .working(let current, let total):
            say("working \(current) \(total)")
            if stops && !stopped {
                stopped = true
                while readLine() != nil {}
            }
        case .complete(let total): say("complete \(total)")
        }
    }
    say("done")
}

/// `folio-torture book-edits STORE COUNT [--seed S]`: a writer of today's books beside a
/// migration in another process, until its standard input ends. Step s is one `perform`
/// that edits book `SampleData.bookID(i)` (i seeded in 0 ..< COUNT: a book a release-1 app
/// stored, perhaps not yet migrated) to title "Edited s" and year 2000 + s, and adds book
/// `SampleData.bookID(COUNT + s)` ("New s", year 1900 + s mod 100, authors [s mod 7]);
/// prints "edit s i G" once it returned (G: the generation this process saw just after), and
/// "done S" after S steps.
func runBookEdits(_ arguments: [String]) async throws {
    let usage = "usage: folio-torture book-edits STORE COUNT [--seed S]"
    guard arguments.count == 2 || arguments.count == 4, let count = Int(arguments[1]), count > 0 else { fail(usage) }
    var seed: UInt64 = 0
    if arguments.count == 4 {
        guard arguments[2] == "--seed", let value = UInt64(arguments[3]) else { fail(usage) }
        seed = value
    }
    let stop = Atomic<Bool>(false)
    Thread {
        while readLine() != nil {}
        stop.store(true, ordering: .relaxed)
    }.start()
    let persistence = try Persistence(at: arguments[0], options: patient)
    defer { persistence.close() }
    let books = persistence.datastore(for: BookFormat.self)
    var random = SplitMix64(seed: seed)
    var step = 0
    while !stop.load(ordering: .relaxed) {
        let (s, i) = (step, random.index(count))
        try await persistence.perform {
            guard var book = try await books.load(SampleData.bookID(i)) else { fail("book \(i) is missing") }
            book.title = "Edited \(s)"
            book.year = 2000 + s
            try await books.persist(book)
            try await books.persist(
                Book(
                    id: SampleData.bookID(count + s), title: "New \(s)", authorIDs: [s % 7], isbn: "new-\(s)",
                    year: 1900 + s % 100))
        }
        say("edit \(s) \(i) \(persistence.currentToken.generation)")
        step += 1
    }
    say("done \(step)")
}

/// Quiet, and waiting up to two minutes for the other process's turns (its migration's
/// batches, or the writer's edits), where the default 5 s was seen to run out on a loaded
/// machine.
private let patient = {
    var options = PersistenceOptions(log: { _ in })
    options.busyTimeout = .seconds(120)
    return options
}()
