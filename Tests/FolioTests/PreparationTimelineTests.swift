import Testing
import Foundation
import Synchronization
@testable import Folio
import FolioTestSupport

/// Two transactions racing for the first use of a datastore that needs preparing (an index
/// to build over version-1 records, each decoded through the migration), step by step: the
/// first prepares it and holds its preparation until it ends (`PreparationHolds`); the
/// second, needing it meanwhile, waits, and then reads the first's preparation (committed)
/// or prepares it itself (rolled back). Every step is opened by a latch or by a state the
/// test reads (a waiter counted), never by the clock; deadlines only turn a hang into a
/// failure.
@Suite(.serialized) struct PreparationTimelineTests {
    typealias Latch = ConcurrentPerformTests.Latch
    typealias Part = PreparationExclusiveTests.Part

    struct Release1: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "timeline-parts"
        static let currentVersion = Version.one
        typealias Instance = Part
    }

    /// Version 2 adds an index; its build decodes every version-1 record through `decode`.
    struct Release2: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1, two }
        static let key = "timeline-parts"
        static let currentVersion = Version.two
        typealias Instance = Part
        let code = Index(\Part.code)
        static func decode(
            _ version: Version, from data: ArraySlice<UInt8>, using decoder: FolioJSONDecoder
        ) throws -> Part {
            if version == .one { Migrations.count.add(1, ordering: .relaxed) }
            return try decoder.decode(Part.self, from: data)
        }
    }

    /// Version-1 records migrated, by this suite's tests (run one at a time: `.serialized`),
    /// so that each test counts its own.
    enum Migrations {
        static let count = Atomic<Int>(0)
    }

    static let records = 50

    struct Abandoned: Error {}

    /// How many times each body ran.
    final class Runs: Sendable {
        let byBody = Mutex<[String: Int]>([:])
        func count(_ body: String) { byBody.withLock { $0[body, default: 0] += 1 } }
    }

    /// A store of version-1 records, reopened with the index and the migration declared.
    static func reopenedStore(_ path: String) async throws -> Persistence<ReadWrite> {
        let options = PersistenceOptions(autoCompaction: nil, log: { _ in })
        do {
            let persistence = try Persistence(at: path, options: options)
            defer { persistence.close() }
            let parts = persistence.datastore(for: Release1.self)
            try await persistence.perform {
                for id in 0..<records { try await parts.persist(Part(id: id, code: "p\(id % 5)")) }
            }
        }
        return try Persistence(at: path, options: options)
    }

    /// Runs `timeline` with a step counter bound, and a watchdog that opens `latches` once
    /// the timeline has hung (`hangWatchdog`: a hang fails instead of blocking the suite).
    static func counting(
        _ latches: [Latch], _ timeline: () async throws -> Void
    ) async rethrows -> (steps: Int, migrations: Int) {
        let counter = Preparation.StepCounter()
        let before = Migrations.count.load(ordering: .relaxed)
        let watchdog = hangWatchdog { for latch in latches { latch.open() } }
        defer { watchdog.cancel() }
        try await Preparation.$stepRuns.withValue(counter) { try await timeline() }
        return (counter.runs.withLock { $0 }, Migrations.count.load(ordering: .relaxed) - before)
    }

    /// 1. A's first use prepares the datastore (A holds its preparation); 2. B begins and
    /// its first use waits for A; 3. A commits; 4. B reads A's preparation and commits.
    /// The preparation ran once, every record was migrated once, and neither body ran
    /// twice (B moved onto A's commit rather than conflicting with it).
    @Test func theSecondFirstUseWaitsAndReadsTheFirstsPreparation() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/prepare-timeline-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let persistence = try await Self.reopenedStore(path)
        defer { persistence.close() }
        let parts = persistence.datastore(for: Release2.self)
        let holds = persistence.core.preparationHolds
        let aPrepared = Latch(), bWaits = Latch(), bBegan = Latch()
        let runs = Runs()
        let counted = try await Self.counting([aPrepared, bWaits, bBegan]) {
            let a = Task {
                try await persistence.perform {
                    runs.count("A")
                    try await parts.persist(Part(id: 1_000, code: "new"))
                    aPrepared.open()
                    await bWaits.wait()
                }
            }
            await aPrepared.wait()
            #expect(holds.isHeld(Release2.key), "A holds the preparation until it ends")
            let b = Task {
                try await persistence.perform {
                    runs.count("B")
                    bBegan.open()
                    try await parts.persist(Part(id: 1_001, code: "new"))
                }
            }
            await bBegan.wait()
            let waiting = await KV.eventually { holds.waitingCount(Release2.key) == 1 }
            #expect(waiting, "B's first use waits for A's preparation")
            bWaits.open()
            try await a.value
            try await b.value
        }
        #expect(counted.steps == 1, "the preparation ran once")
        #expect(counted.migrations == Self.records, "each record migrated once")
        #expect(runs.byBody.withLock { $0 } == ["A": 1, "B": 1], "neither body ran again")
        #expect(!holds.isHeld(Release2.key))
        #expect(try await parts.count() == Self.records + 2)
        #expect(try await parts.count("new", from: \.code) == 2)
        #expect(try await parts.count("p1", from: \.code) == Self.records / 5)
    }

    /// As above, but A throws after preparing: its preparation is rolled back with it, and
    /// B, woken by the rollback, finds the datastore unprepared and prepares it itself.
    @Test func afterTheHolderRollsBackTheWaiterPrepares() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/prepare-timeline-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let persistence = try await Self.reopenedStore(path)
        defer { persistence.close() }
        let parts = persistence.datastore(for: Release2.self)
        let holds = persistence.core.preparationHolds
        let aPrepared = Latch(), bWaits = Latch(), bBegan = Latch()
        let runs = Runs()
        let counted = try await Self.counting([aPrepared, bWaits, bBegan]) {
            let a = Task {
                try await persistence.perform {
                    runs.count("A")
                    try await parts.persist(Part(id: 1_000, code: "new"))
                    aPrepared.open()
                    await bWaits.wait()
                    throw Abandoned()
                }
            }
            await aPrepared.wait()
            let b = Task {
                try await persistence.perform {
                    runs.count("B")
                    bBegan.open()
                    try await parts.persist(Part(id: 1_001, code: "new"))
                }
            }
            await bBegan.wait()
            let waiting = await KV.eventually { holds.waitingCount(Release2.key) == 1 }
            #expect(waiting, "B's first use waits for A's preparation")
            bWaits.open()
            await #expect(throws: Abandoned.self) { try await a.value }
            try await b.value
        }
        #expect(counted.steps == 2, "A's preparation, rolled back, then B's")
        #expect(counted.migrations == 2 * Self.records)
        #expect(runs.byBody.withLock { $0 } == ["A": 1, "B": 1])
        #expect(try await parts.count() == Self.records + 1)
        #expect(try await parts.count("new", from: \.code) == 1)
        #expect(try await parts.load(1_000) == nil)
        #expect(try await parts.count("p1", from: \.code) == Self.records / 5)
    }

    /// A prepares authors and B books, each holding its preparation; then each needs the
    /// other's. Neither waits (a transaction that holds a preparation never waits for
    /// another: no cycle), each prepares the other datastore in its own transaction, one
    /// conflicts on the catalog and runs again alone, and both commit.
    @Test func crossedFirstUsesDoNotDeadlock() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let authors = persistence.datastore(for: AuthorFormat.self)
        let books = persistence.datastore(for: BookFormat.self)
        let aHolds = Latch(), bHolds = Latch()
        let bookOne = makeBook(1), bookTwo = makeBook(2)
        try await Self.counting([aHolds, bHolds]) {
            let a = Task {
                try await persistence.perform {
                    try await authors.persist(Author(id: 1, name: "Ann", born: 1970))
                    aHolds.open()
                    await bHolds.wait()
                    try await books.persist(bookOne)
                }
            }
            let b = Task {
                await aHolds.wait()
                try await persistence.perform {
                    try await books.persist(bookTwo)
                    bHolds.open()
                    try await authors.persist(Author(id: 2, name: "Bo", born: 1980))
                }
            }
            try await a.value
            try await b.value
        }
        #expect(try await authors.count() == 2)
        #expect(try await books.count() == 2)
        #expect(try await books.load(bookOne.id) == bookOne)
        #expect(!persistence.core.preparationHolds.isHeld(AuthorFormat.key))
        #expect(!persistence.core.preparationHolds.isHeld(BookFormat.key))
    }
}
