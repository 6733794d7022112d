import Foundation
import Synchronization
import FolioStorage
@_spi(Engine) import Folio
import LibraryExample

// folio-torture: the second process of Folio's multi-process tests and kill tests.
// Every command prints one line per event and flushes it at once, so a parent that kills
// this process knows exactly what was acknowledged before the kill.
//
//   folio-torture turn-cost STORE N          ns per lock try+unlock, empty turn, and one-key
//                                            commit per turn and in a held turn (TurnCost.swift)
//   folio-torture hold-writer STORE          open for writing, begin a transaction (its turn holds
//                                            the lock), print "ready", wait for stdin EOF
//   folio-torture idle-writer STORE          open for writing, print "ready", wait for stdin EOF
//   folio-torture try-writer STORE           try to open for writing; print "opened" or "locked <ms>"
//   folio-torture try-lock PATH              try the lock file's lock once; print "locked" or "busy"
//   folio-torture hold-lock-file PATH        take the lock file's lock, print "held" (or "busy" and
//                                            exit), keep it until stdin EOF, print "released"
//   folio-torture writer STORE N             N commits, each putting key "k<i mod 100>" and "gen"
//   folio-torture acked-writer STORE FIRST N [--busy-timeout-ms M]   N commits of keys "a<i>",
//                                            i from FIRST, in tree "acks"; prints "open G",
//                                            "ack i G" per commit, "done G" (CompactionCommands)
//   folio-torture compact STORE [--busy-timeout-ms M] [--hold]   compacts; prints "compacted G"
//                                            or "locked PATH"; with --hold prints "copied G"
//                                            after the first pass and waits for a stdin line
//   folio-torture concurrent-writers STORE THREADS N [--first-thread K] [--busy-timeout-ms M]
//                                            THREADS threads committing at once, to be killed;
//                                            threads numbered from K, so that several processes
//                                            write one store, each waiting up to M ms for the
//                                            others' turns (ConcurrentWriters.swift)
//   folio-torture follow-generations STORE   read-only, following: "start G", then "gen G" per
//                                            commit delivered and "unavailable A B" per
//                                            historyUnavailable; at stdin EOF "end G"
//                                            (FollowGenerations.swift)
//   folio-torture reader STORE SECONDS       read-only: refresh and check snapshot consistency
//   folio-torture authors STORE N [COMPACT_EVERY]   Folio-level: N transactions, each setting
//                                            authors 2k and 2k+1 to born = transaction number
//   folio-torture authors-next STORE         Folio-level, as a newer release: persists author 1,000
//                                            with a newer declaration of authors (NewerDeclaration.swift)
//   folio-torture values STORE N             Folio-level key-value store: sets key "counter" to
//                                            1...N outside transactions, flushing after each
//   folio-torture values-kill STORE N [--grouped]   Folio-level key-value store, to be killed:
//                                            continues "counter" from the store's value up to N,
//                                            every third step in a perform that also sets
//                                            "pair/a" and "pair/b" and persists an author;
//                                            prints "flushed n" once n is durable
//   folio-torture transfers STORE SEED N [--grouped] [--compact-every K] [--blob-every K]
//                 [--blob-bytes B] [--retention-ms M] [--retain-generations R]
//                 [--commit-during-compaction] [--key-limit L --wholesale-every K --wholesale-keys W]
//                                            seeded bank transfers up to N transactions, resuming
//                                            from the store's count; prints "open C G V",
//                                            "declared R G", "attempt n", "ack n G", "compact G",
//                                            "compacted G", "done C G" (see Transfers.swift)
//   folio-torture transfer-reader STORE SEED SECONDS [options of transfers] [--until-eof]
//                                            read-only: every view must equal the transfer
//                                            model after some count; prints "views V ..."
//   folio-torture library-writer STORE MAX [--step]   Folio records: books of the worked
//                                            example, one per commit, until MAX or stdin EOF;
//                                            prints "commit G N"; --step: one commit per stdin line
//   folio-torture author-steps STORE SEED KEY_LIMIT   Folio records: one seeded step of the
//                                            authors per stdin line, large ones recorded
//                                            wholesale; prints "ready G", "step n G", "done G"
//                                            (AuthorSteps.swift)
//   folio-torture big-transaction STORE N BUDGET [KEY_LIMIT]   N puts in one transaction
//                                            spilling past BUDGET bytes, the change log capped
//                                            at KEY_LIMIT keys (16,384); prints "rss B",
//                                            "peak P", "count N"
//   folio-torture folio-writers STORE WRITER N [--seed S] [--busy-timeout-ms M] [--compact-every K]
//                                            Folio records, several writer processes at once:
//                                            writer WRITER's transactions up to N over its own
//                                            datastore and a shared one, resuming from the
//                                            store; prints "open C G", "ack n G", "done C G"
//                                            (FolioWriters.swift)
//   folio-torture folio-observer STORE WRITERS [--seed S]   read-only: observes the shared
//                                            datastore of folio-writers and reads snapshots;
//                                            prints "start T G", "tx G T W N", "reload G T",
//                                            ..., "end T G S" at stdin EOF (FolioObserver.swift)
//   folio-torture migrate-books STORE [--stop-after-first-batch]   migrateAndReindex of the
//                                            example's books, to be killed; prints "evaluating",
//                                            "working C T", "complete T", "done"; the option
//                                            stops it after one batch (MigrationCommands.swift)
//   folio-torture book-edits STORE COUNT [--seed S]   edits release-1 books and adds new ones,
//                                            one perform a step, until stdin EOF; prints
//                                            "edit s i G", "done S" (MigrationCommands.swift)

/// Writes a line straight to the standard output descriptor (unbuffered), so that it is out
/// before the next instruction, even if the process is killed right after.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("folio-torture: \(message)\n".utf8))
    exit(2)
}

let quiet = StoreOptions(log: { _ in })

/// Tries to open a writer; reports whether the lock was refused and how fast.
func tryWriter(_ path: String) {
    let start = ContinuousClock.now
    let result = Result { () throws(StorageError) -> Store in
        try Store.open(at: path, options: StoreOptions(createIfMissing: false, log: { _ in }))
    }
    switch result {
    case .success(let store):
        say("opened")
        store.close()
    case .failure(.lockedByAnotherWriter):
        let elapsed = ContinuousClock.now - start
        say("locked \(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)")
    case .failure(let error):
        fail("\(error)")
    }
}
/// A Folio-level writer: opens the worked example's library at `path` (creating it), adds
/// 10 authors, then persists book 0, 1, 2, ... each in its own durable transaction, and
/// compacts after every 50th. After each commit it prints "commit G N" (the generation and
/// the number of books), after each compaction "compact G N"; it stops after `maximum` books
/// or when its standard input is closed (with `step`, it commits once per line it reads), and
/// prints "done G N". At every generation the
/// books are exactly books 0 ..< N of `SampleData.books`.
func libraryWriter(_ path: String, maximum: Int, step: Bool) async throws {
    let stop = Atomic<Bool>(false)
    if !step {
        let watcher = Thread {
            while readLine() != nil {}
            stop.store(true, ordering: .relaxed)
        }
        watcher.start()
    }
    let library = try Library(at: path, options: PersistenceOptions(log: { _ in }))
    defer { library.persistence.close() }
    try await library.persistence.perform {
        for author in SampleData.authors(10) { try await library.add(author) }
    }
    let store = library.persistence.store
    say("commit \(store.generation) 0")
    let books = SampleData.books(maximum, authors: 10)
    var count = 0
    while count < maximum && !stop.load(ordering: .relaxed) {
        if step && readLine() == nil { break }
        try await library.books.persist(books[count])
        count += 1
        say("commit \(store.generation) \(count)")
        if count % 50 == 0 {
            try store.compact()
            say("compact \(store.generation) \(count)")
        }
    }
    say("done \(store.generation) \(count)")
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else { fail("usage: folio-torture COMMAND STORE ...") }

do {
    switch command {
    case "big-transaction":
        guard arguments.count >= 4, let count = Int(arguments[2]), let budget = Int(arguments[3]),
            let keyLimit = arguments.count > 4 ? Int(arguments[4]) : 16_384
        else {
            fail("usage: folio-torture big-transaction STORE N BUDGET [KEY_LIMIT]")
        }
        try bigTransaction(arguments[1], count: count, budget: budget, keyLimit: keyLimit)
    case "turn-cost":
        guard arguments.count >= 3, let count = Int(arguments[2]) else {
            fail("usage: folio-torture turn-cost STORE N")
        }
        try turnCost(arguments[1], count: count)
    case "hold-writer":
        // A writer in the middle of a transaction: its turn holds the store's lock.
        let store = try Store.open(at: arguments[1], options: quiet)
        let transaction = try store.beginWrite()
        say("ready")
        while readLine() != nil {}
        transaction.rollback()
        store.close()
    case "idle-writer":
        // A writer open with no transaction: it holds no lock.
        let store = try Store.open(at: arguments[1], options: quiet)
        say("ready")
        while readLine() != nil {}
        store.close()
    case "try-writer":
        tryWriter(arguments[1])
    case "try-lock":
        try tryLockFile(arguments[1])
    case "hold-lock-file":
        try holdLockFile(arguments[1])
    case "acked-writer":
        try ackedWriter(arguments)
    case "compact":
        try compactCommand(arguments)
    case "writer":
        let store = try Store.open(at: arguments[1], options: quiet)
        let count = Int(arguments[2]) ?? 100
        for i in 0..<count {
            try store.write { txn in
                // Every commit rewrites all "k" keys with its own generation: a reader that
                // ever sees two different values in one view has seen a torn transaction.
                let generation = Array(String(txn.generation).utf8)
                for k in 0..<20 { try txn.put(generation, for: Array("k\(k)".utf8), in: "consistency") }
                try txn.put(Array(String(i).utf8), for: Array("i\(i % 100)".utf8), in: "load")
            }
            if i % 50 == 49 { try store.compact() }
        }
        say("done \(store.generation)")
        store.close()
    case "reader":
        let seconds = Double(arguments[2]) ?? 1
        let store = try Store.openReadOnly(at: arguments[1], options: quiet)
        let deadline = Date().addingTimeInterval(seconds)
        var views = 0, generations = Set<UInt64>()
        while Date() < deadline {
            try store.refresh()
            let view = try store.read()
            var cursor = try view.cursor(in: "consistency")
            var values = Set<[UInt8]>()
            while let entry = try cursor.next() { values.insert(entry.value) }
            if values.count > 1 { fail("torn read at generation \(view.generation): \(values.count) different values") }
            // Compaction makes a generation with unchanged contents, so the values may come
            // from an earlier generation, never a later one.
            if let value = values.first, let written = UInt64(String(decoding: value, as: UTF8.self)),
                written > view.generation
            {
                fail("view of generation \(view.generation) holds values of the later generation \(written)")
            }
            views += 1
            generations.insert(view.generation)
        }
        say("views \(views) generations \(generations.count)")
    case "authors":
        try await writeAuthors(
            path: arguments[1], count: Int(arguments[2]) ?? 1_000,
            compactEvery: arguments.count > 3 ? Int(arguments[3]) ?? 0 : 0)
    case "authors-next":
        try await runAuthorsNext(arguments[1])
    case "transfers":
        try runTransfers(Array(arguments.dropFirst()))
    case "concurrent-writers":
        try runConcurrentWriters(Array(arguments.dropFirst()))
    case "follow-generations":
        try runFollowGenerations(Array(arguments.dropFirst()))
    case "transfer-reader":
        try runTransferReader(Array(arguments.dropFirst()))
    case "values":
        try await writeValues(path: arguments[1], count: Int(arguments[2]) ?? 100)
    case "values-kill":
        try await writeValuesUntilKilled(
            path: arguments[1], upTo: Int(arguments[2]) ?? 1_000, grouped: arguments.contains("--grouped"))
    case "author-steps":
        try await runAuthorSteps(Array(arguments.dropFirst()))
    case "folio-writers":
        try await runFolioWriters(Array(arguments.dropFirst()))
    case "folio-observer":
        try await runFolioObserver(Array(arguments.dropFirst()))
    case "migrate-books":
        try await runMigrateBooks(Array(arguments.dropFirst()))
    case "book-edits":
        try await runBookEdits(Array(arguments.dropFirst()))
    case "library-writer":
        try await libraryWriter(arguments[1], maximum: Int(arguments[2]) ?? 1_000, step: arguments.contains("--step"))
    default:
        fail("unknown command \(command)")
    }
} catch {
    fail("\(error)")
}

/// Folio-level writer for cross-process observation tests: transaction `i` sets authors
/// 2k and 2k+1 (k = i mod 20) to `born = i`, so a reader that sees the pair disagree has
/// seen a torn transaction. Prints "done G" at the end.
func writeAuthors(path: String, count: Int, compactEvery: Int) async throws {
    let persistence = try Persistence(
        at: path,
        options: PersistenceOptions(
            durability: .grouped(window: .milliseconds(5)),
            log: { _ in }))
    let authors = persistence.datastore(for: AuthorFormat.self)
    for i in 0..<count {
        let k = i % 20
        try await persistence.perform {
            try await authors.persist(Author(id: 2 * k, name: "t\(i)", born: i))
            try await authors.persist(Author(id: 2 * k + 1, name: "t\(i)", born: i))
        }
        if compactEvery > 0 && i % compactEvery == compactEvery - 1 { try persistence.store.compact() }
    }
    try persistence.store.flush()
    say("done \(persistence.store.generation)")
    persistence.close()
}

/// Folio-level writer for the key-value store's cross-process tests: sets the Int key
/// "counter" to 1...count outside transactions, each flushed (durable, so visible to a
/// read-only process) before the next. Prints "done N" at the end.
func writeValues(path: String, count: Int) async throws {
    let persistence = try Persistence(at: path, options: PersistenceOptions(log: { _ in }))
    let counter = ValueKey<Int>("counter", default: 0)
    for n in 1...max(count, 1) {
        try persistence.values.set(n, for: counter)
        try await persistence.values.flush()
    }
    say("done \(persistence.values[counter])")
    persistence.close()
}

/// Folio-level writer for the key-value store's kill tests (KeyValueKillTests): continues
/// "counter" from the value the store holds. Step n sets it outside transactions; every
/// third step instead runs one `perform` that sets it, sets "pair/a" and "pair/b" to n and
/// persists author n, so a store that shows them disagree after a kill has kept half a
/// transaction. Prints "flushed n" once step n is durable (after `values.flush()`).
func writeValuesUntilKilled(path: String, upTo target: Int, grouped: Bool) async throws {
    let options = PersistenceOptions(durability: grouped ? .grouped(window: .milliseconds(2)) : .full, log: { _ in })
    let persistence = try Persistence(at: path, options: options)
    let counter = ValueKey<Int>("counter", default: 0)
    let (pairA, pairB) = (ValueKey<Int>("pair/a", default: 0), ValueKey<Int>("pair/b", default: 0))
    let authors = persistence.datastore(for: AuthorFormat.self)
    let start = try persistence.values.value(for: counter) + 1
    say("open \(start - 1)")
    guard start <= target else { return }
    for n in start...target {
        if n % 3 == 0 {
            try await persistence.perform {
                try persistence.values.set(n, for: counter)
                try persistence.values.set(n, for: pairA)
                try await authors.persist(Author(id: n, name: "v\(n)", born: n))
                try persistence.values.set(n, for: pairB)
            }
        } else {
            try persistence.values.set(n, for: counter)
        }
        try await persistence.values.flush()
        say("flushed \(n)")
    }
    persistence.close()
}
