import Testing
import Foundation
import Folio
import FolioStorage
import FolioTestSupport

/// `undo(forcing:)`: the action's records are written back over later changes, their
/// index entries follow them (every index reads the same as a scan, and `verify` is clean),
/// and a value of a one-to-one index another record holds now refuses it.
@Suite struct ForcedUndoTests {
    typealias Note = PastReadsTests.Note
    typealias NoteFormat = PastReadsTests.NoteFormat

    /// Every index agrees with the records: what a query through each finds is what a scan finds.
    static func checkIndexes(
        _ notes: Datastore<NoteFormat, ReadWrite>, _ persistence: Persistence<ReadWrite>
    )
        async throws
    {
        let all = try await notes.load(...).collect()
        for topic in 0..<5 {
            let indexed = try await notes.fetch(where: #Predicate { $0.topic == topic }).collect().map(\.id).sorted()
            #expect(indexed == all.filter { $0.topic == topic }.map(\.id).sorted(), "topic \(topic)")
        }
        for note in all {
            let code = note.code
            #expect(try await notes.fetch(where: #Predicate { $0.code == code }).collect() == [note])
        }
        #expect(persistence.verify().isClean, "\(persistence.verify().lines)")
    }

    @Test func aForcedUndoWritesBackOverLaterChanges() async throws {
        let persistence = Persistence.inMemory()
        let notes = persistence.datastore(for: NoteFormat.self)
        try await notes.persist(Note(id: 1, topic: 1, code: "one"))
        try await notes.persist(Note(id: 9, topic: 4, code: "nine"))
        try await persistence.perform(named: "Edit") {
            try await notes.persist(Note(id: 1, topic: 2, code: "one-edited"))
            try await notes.persist(Note(id: 2, topic: 2, code: "two"))
        }
        // Later, outside the action: note 1 changed again (both indexed fields), note 2
        // deleted, note 9 changed.
        try await notes.persist(Note(id: 1, topic: 3, code: "one-later"))
        _ = try await notes.delete(2)
        try await notes.persist(Note(id: 9, topic: 0, code: "nine-later"))
        await #expect(throws: FolioError.undoConflict(generation: 5, changedSince: ["notes 1", "notes 2"])) {
            try await persistence.undo()
        }
        let undone = try await persistence.undo(forcing: ObservationToken(generation: 5))
        #expect(undone?.name == "Edit")
        #expect(
            try await notes.load(...).collect() == [
                Note(id: 1, topic: 1, code: "one"), Note(id: 9, topic: 0, code: "nine-later"),
            ])
        try await Self.checkIndexes(notes, persistence)
        // Redo reverts the undo commit: the store as it was before the undo, later changes
        // included.
        #expect(try await persistence.redo()?.name == "Edit")
        #expect(try await notes.load(1) == Note(id: 1, topic: 3, code: "one-later"))
        #expect(try await notes.load(2) == nil)
        try await Self.checkIndexes(notes, persistence)
    }

    @Test func aOneToOneValueAnotherRecordHoldsRefusesIt() async throws {
        let persistence = Persistence.inMemory()
        let notes = persistence.datastore(for: NoteFormat.self)
        try await notes.persist(Note(id: 1, topic: 1, code: "a"))
        try await persistence.perform(named: "Recode") {
            try await notes.persist(Note(id: 1, topic: 1, code: "b"))
        }
        try await notes.persist(Note(id: 3, topic: 1, code: "a"))  // takes the old code
        try await notes.persist(Note(id: 1, topic: 2, code: "c"))
        let recode = try #require(try persistence.undoableAction())
        await #expect(throws: FolioError.self) { try await persistence.undo(forcing: recode.token) }
        do {
            try await persistence.undo(forcing: recode.token)
        } catch FolioError.cannotUndo(_, let reason) {
            #expect(reason.contains("index/notes/code"))
        }
        #expect(try await notes.load(1) == Note(id: 1, topic: 2, code: "c"))
        #expect(try await persistence.undoableAction()?.name == "Recode")
        try await Self.checkIndexes(notes, persistence)
    }

    /// The conflict a user confirmed is the one forced: if another action became the newest
    /// meanwhile, nothing is written.
    @Test func forcingNamesTheActionConfirmed() async throws {
        let persistence = Persistence.inMemory()
        let notes = persistence.datastore(for: NoteFormat.self)
        try await notes.persist(Note(id: 1, topic: 1, code: "one"))
        try await persistence.perform(named: "Edit 1") {
            try await notes.persist(Note(id: 1, topic: 2, code: "edited"))
        }
        try await notes.persist(Note(id: 1, topic: 3, code: "later"))
        var confirmed: ObservationToken?
        do {
            try await persistence.undo()
        } catch FolioError.undoConflict(let generation, let changed) {
            #expect(changed == ["notes 1"])
            confirmed = ObservationToken(generation: generation)
        }
        // While the user reads the alert, another action commits.
        try await persistence.perform(named: "Edit 2") { try await notes.persist(Note(id: 2, topic: 1, code: "two")) }
        await #expect(throws: FolioError.self) { try await persistence.undo(forcing: try #require(confirmed)) }
        #expect(try await notes.load(1) == Note(id: 1, topic: 3, code: "later"))
        #expect(try await notes.load(2) == Note(id: 2, topic: 1, code: "two"))
    }

    /// Random actions, each followed by random unnamed transactions over the same notes;
    /// then every action forced back in turn, newest first: after each, the notes the action
    /// changed are as they were before it, every other note as it was, and the indexes agree.
    @Test func forcedUndosAgainstAModel() async throws {
        let persistence = Persistence.inMemory()
        let notes = persistence.datastore(for: NoteFormat.self)
        var rng = SplitMix64(seed: 31)
        var model: [Int: Note] = [:]
        var step = 0
        func randomWrites() -> [(Int, Note?)] {
            (0..<(1 + Int(rng.next() % 3))).map { _ in
                step += 1
                let id = Int(rng.next() % 8)
                if rng.next() % 4 == 0 { return (id, nil) }
                return (id, Note(id: id, topic: Int(rng.next() % 5), code: "c\(step)"))
            }
        }
        func apply(_ writes: [(Int, Note?)], named name: String?) async throws {
            let body = { () async throws in
                for (id, note) in writes {
                    if let note { try await notes.persist(note) } else { _ = try await notes.deleteIfPresent(id) }
                }
            }
            if let name {
                try await persistence.perform(named: name, body)
            } else {
                try await persistence.perform(body)
            }
            for (id, note) in writes { model[id] = note }
        }
        try await apply([(0, Note(id: 0, topic: 0, code: "start"))], named: nil)
        var actions: [(name: String, before: [Int: Note], ids: Set<Int>)] = []
        for round in 0..<12 {
            let writes = randomWrites()
            let before = model
            try await apply(writes, named: "action \(round)")
            // What it changed: a write of a note as it was (a delete of none) reverts nothing.
            actions.append(("action \(round)", before, Set(writes.map(\.0).filter { before[$0] != model[$0] })))
            if rng.next() % 3 != 0 { try await apply(randomWrites(), named: nil) }
        }
        for action in actions.reversed() {
            let token = try #require(try persistence.undoableAction()).token
            let undone = try await persistence.undo(forcing: token)
            #expect(undone?.name == action.name)
            for id in action.ids { model[id] = action.before[id] }
            #expect(try await notes.load(...).collect() == model.values.sorted { $0.id < $1.id }, "\(action.name)")
            try await Self.checkIndexes(notes, persistence)
        }
    }
}
