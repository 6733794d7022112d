import Testing
@testable import Folio

/// A datastore's preparation (`Preparation.step`: reading its catalog entry, counting its
/// records, comparing indexes) runs once, not on every operation: inside a `perform`, a
/// datastore this transaction already prepared skips it (`TransactionContext.prepared`),
/// and once a transaction that prepared it commits, the persistence records it as ready and
/// no later transaction runs it again. Counted through `Preparation.stepRuns`, never timed.
@Suite struct PreparationSkipTests {
    struct Note: Codable, Identifiable, Sendable, Equatable { var id: Int; var title: String }

    struct Notes: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "notes"
        static let currentVersion = Version.one
        typealias Instance = Note
        let title = Index(\Note.title)
    }

    @Test func aDatastorePreparedInATransactionSkipsThePreparationOnLaterOperations() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let notes = persistence.datastore(for: Notes.self)
        let counter = Preparation.StepCounter()
        try await Preparation.$stepRuns.withValue(counter) {
            try await persistence.perform {
                for id in 0..<20 { try await notes.persist(Note(id: id, title: "t\(id % 3)")) }
                #expect(try await notes.count("t1", from: \.title) == 7)
                #expect(try await notes.load(4)?.title == "t1")
            }
            #expect(counter.runs.withLock { $0 } == 1, "one preparation for every operation of the transaction")
            // Committed: the persistence records the datastore as ready.
            try await persistence.perform {
                try await notes.persist(Note(id: 20, title: "t2"))
                _ = try await notes.load(20)
            }
            try await notes.persist(Note(id: 21, title: "t0"))
            #expect(try await notes.count() == 22)
        }
        #expect(counter.runs.withLock { $0 } == 1, "a ready datastore is not prepared again")
    }

    @Test func aRolledBackPreparationRunsAgainInTheNextTransaction() async throws {
        struct Refused: Error {}
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let notes = persistence.datastore(for: Notes.self)
        let counter = Preparation.StepCounter()
        try await Preparation.$stepRuns.withValue(counter) {
            await #expect(throws: Refused.self) {
                try await persistence.perform {
                    try await notes.persist(Note(id: 1, title: "a"))
                    try await notes.persist(Note(id: 2, title: "b"))
                    throw Refused()
                }
            }
            #expect(counter.runs.withLock { $0 } == 1)
            try await persistence.perform {
                try await notes.persist(Note(id: 3, title: "c"))
                try await notes.persist(Note(id: 4, title: "d"))
            }
            #expect(counter.runs.withLock { $0 } == 2, "what a rolled-back transaction prepared is not kept")
        }
        #expect(try await notes.count() == 2)
    }
}
