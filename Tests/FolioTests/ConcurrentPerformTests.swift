import Foundation
import Synchronization
import Testing
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport

/// `perform`s run at once (Docs/Architecture.md invariant 7): over disjoint datastores
/// both commit; over the same datastore the later committer's body runs again, alone, so
/// the result is that of some serial order. Timelines are fixed by latches, not the clock.
@Suite struct ConcurrentPerformTests {
    /// A counter shared by the tasks of a test.
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    /// A one-shot signal a task can wait for. Each test opens its latches from a watchdog
    /// after a minute, so that a build whose transactions run one at a time fails (its
    /// expectations do not hold) instead of hanging.
    final class Latch: Sendable {
        private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

        func open() {
            let waiters = state.withLock { state in
                state.open = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }

        func wait() async {
            await withCheckedContinuation { continuation in
                let open = state.withLock { state in
                    if !state.open { state.waiters.append(continuation) }
                    return state.open
                }
                if open { continuation.resume() }
            }
        }
    }

    /// Transaction A (authors) begins; B (books) begins, commits and returns while A is
    /// still open; then A commits. Both are kept, and neither body ran twice.
    @Test func performsOverDisjointDatastoresOverlap() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        let books = persistence.datastore(for: BookFormat.self)
        // Prepared first, so that neither transaction prepares a datastore.
        try await authors.persist(Author(id: 0, name: "Zed", born: 1900))
        try await books.persist(makeBook(0))
        let aWrote = Latch(), bCommitted = Latch()
        let runs = Counter()
        let bookOne = makeBook(1)
        let a = Task {
            try await persistence.perform {
                runs.value.add(1, ordering: .relaxed)
                try await authors.persist(Author(id: 1, name: "Ann", born: 1970))
                aWrote.open()
                await bCommitted.wait()
            }
        }
        let b = Task {
            await aWrote.wait()
            try await persistence.perform {
                runs.value.add(1, ordering: .relaxed)
                try await books.persist(bookOne)
            }
            // B's commit is visible while A is still open.
            #expect(try await books.load(bookOne.id) == bookOne)
            #expect(try await authors.load(1) == nil)
            bCommitted.open()
        }
        let watchdog = hangWatchdog {
            aWrote.open()
            bCommitted.open()
        }
        try await b.value
        try await a.value
        watchdog.cancel()
        #expect(runs.value.load(ordering: .relaxed) == 2)
        #expect(try await authors.load(1) == Author(id: 1, name: "Ann", born: 1970))
        #expect(try await books.load(bookOne.id) == bookOne)
    }

    /// A reads author 1's birth year; B adds one to it and commits; A adds one to what it
    /// read and commits: A conflicts, its body runs again (alone) and reads B's value, so
    /// no update is lost: two increments, A's body ran twice.
    @Test func aConflictingPerformRunsAgainAndLosesNoUpdate() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await authors.persist(Author(id: 1, name: "Ann", born: 0))
        let aRead = Latch(), bCommitted = Latch()
        let aRuns = Counter()
        let a = Task {
            try await persistence.perform {
                let run = aRuns.value.add(1, ordering: .relaxed).newValue
                let author = try await authors.load(1)!
                if run == 1 {
                    aRead.open()
                    await bCommitted.wait()
                }
                try await authors.persist(Author(id: 1, name: "Ann", born: author.born + 1))
            }
        }
        let b = Task {
            await aRead.wait()
            try await persistence.perform {
                let author = try await authors.load(1)!
                try await authors.persist(Author(id: 1, name: "Ann", born: author.born + 1))
            }
            bCommitted.open()
        }
        let watchdog = hangWatchdog {
            aRead.open()
            bCommitted.open()
        }
        try await b.value
        try await a.value
        watchdog.cancel()
        #expect(try await authors.load(1)?.born == 2)
        #expect(aRuns.value.load(ordering: .relaxed) == 2)
        #expect(!persistence.writer.isHeld && persistence.writer.sharedCount == 0)
    }

    /// Many tasks incrementing shared counters and writing their own records at once: no
    /// update is lost and every record is kept.
    @Test func concurrentPerformsAreSerializable() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        let books = persistence.datastore(for: BookFormat.self)
        try await authors.persist(Author(id: 0, name: "counter", born: 0))
        let tasks = 4, each = 25
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for i in 0..<each {
                        try await persistence.perform {
                            if i % 2 == 0 {
                                let counter = try await authors.load(0)!
                                try await authors.persist(Author(id: 0, name: "counter", born: counter.born + 1))
                            }
                            try await books.persist(makeBook(1 + task * each + i))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await authors.load(0)?.born == tasks * ((each + 1) / 2))
        #expect(try await books.count() == tasks * each)
        #expect(persistence.writer.sharedCount == 0)
    }
}
