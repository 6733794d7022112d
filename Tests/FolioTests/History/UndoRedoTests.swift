import Testing
import Foundation
import Folio
import FolioStorage
import FolioTestSupport

/// Undo and redo against a model: random named actions (records created, changed and
/// deleted through every index kind, values set), undos and redos, in any order, under a
/// declared retention, with compactions and checkpoints among them; after each step the
/// store equals the model's state, and the action undo and redo would take is the model's.
/// At the end every generation the retention or a checkpoint keeps reads as the model was
/// then, and `changes(from:to:)` between them is the model's difference. The model is an
/// undo manager's: a list of states and a position in it.
@Suite struct UndoRedoTests {
    typealias Note = PastReadsTests.Note
    typealias NoteFormat = PastReadsTests.NoteFormat
    static let counter = ValueKey<Int?>("counter")

    struct State: Equatable {
        var notes: [Int: Note] = [:]
        var counter: Int?
    }

    static func state(
        _ persistence: Persistence<ReadWrite>, _ notes: Datastore<NoteFormat, ReadWrite>
    ) async throws
        -> State
    {
        var state = State()
        for note in try await notes.load(...).collect() { state.notes[note.id] = note }
        state.counter = try persistence.values.value(for: Self.counter)
        return state
    }

    /// In `.namedActions`, unnamed transactions on other records come between the actions:
    /// they are never undone, and the states the model expects include them. In
    /// `.transactions`, every transaction is an action, named or not.
    @Test(arguments: [(UInt64(1), UndoScope.namedActions), (2, .namedActions), (3, .transactions), (4, .transactions)])
    func undoAndRedoFollowTheModel(seed: UInt64, scope: UndoScope) async throws {
        let persistence = Persistence.inMemory(
            options: PersistenceOptions(
                autoCompaction: nil, retention: SnapshotRetention(gracePeriod: .zero, maximumRetainedFiles: 1)))
        let notes = persistence.datastore(for: NoteFormat.self)
        _ = try await notes.count()  // prepared before the first action
        // Every generation of the run is kept: undo reaches back across the compactions.
        try await persistence.setHistoryRetention(.generations(10_000))
        var rng = SplitMix64(seed: seed)
        // Each generation the run made, with the notes the model had then; the checkpoints.
        var generations: [(token: ObservationToken, notes: [Int: Note])] = []
        var checkpoints: [String: ObservationToken] = [:]
        // The model: states after each action still done or redoable, and the current one.
        var states = [State()]
        var names: [String?] = [nil]
        var position = 0
        var noise: [Int: Note] = [:]
        for step in 0..<60 {
            let choice = rng.next() % 12
            if choice < 5 {
                var state = states[position]
                var writes: [(Int, Note?)] = []
                for _ in 0..<(1 + Int(rng.next() % 3)) {
                    let id = Int(rng.next() % 12)
                    let note =
                        rng.next() % 4 == 0 ? nil : Note(id: id, topic: Int(rng.next() % 3), code: "c\(id)-\(step)")
                    writes.append((id, note))
                    state.notes[id] = note
                }
                let setsCounter = rng.next() % 3 == 0
                if setsCounter { state.counter = step }
                let name: String? = scope == .namedActions || rng.next() % 4 != 0 ? "step \(step)" : nil
                let body = {
                    for (id, note) in writes {
                        if let note { try await notes.persist(note) } else { _ = try await notes.deleteIfPresent(id) }
                    }
                    if setsCounter { try persistence.values.set(step as Int?, for: Self.counter) }
                }
                if let name {
                    try await persistence.perform(named: name, body)
                } else {
                    try await persistence.perform(body)
                }
                states = Array(states.prefix(position + 1)) + [state]
                names = Array(names.prefix(position + 1)) + [name]
                position += 1
            } else if choice < 8 {
                let undone = try await persistence.undo(scope)
                if position == 0 {
                    #expect(undone == nil)
                } else {
                    #expect(undone?.name == names[position], "step \(step)")
                    position -= 1
                }
            } else if choice < 11 {
                let redone = try await persistence.redo(scope)
                if position + 1 < states.count {
                    position += 1
                    #expect(redone?.name == names[position], "step \(step)")
                } else {
                    #expect(redone == nil)
                }
            } else if scope == .namedActions {
                let note = Note(id: 100 + Int(rng.next() % 5), topic: 1, code: "noise-\(step)")
                try await notes.persist(note)
                noise[note.id] = note
            }
            var expected = states[position]
            expected.notes.merge(noise) { $1 }
            #expect(try await Self.state(persistence, notes) == expected, "step \(step)")
            generations.append((persistence.currentToken, expected.notes))
            if step % 9 == 8 { try await persistence.compact() }
            if step % 13 == 4 {
                let checkpoint = try await persistence.checkpoint("step \(step)")
                checkpoints[checkpoint.name] = checkpoint.token
            }
            if step == 40 { try await persistence.releaseCheckpoint("step 4") }
            #expect(try persistence.undoableAction(scope)?.name == (position > 0 ? names[position] : nil))
            #expect((try persistence.redoableAction(scope) != nil) == (position + 1 < states.count))
            // The indexes follow the records: a query through each gives what a scan does.
            let byTopic = try await notes.fetch(where: #Predicate { $0.topic == 1 }).collect().map(\.id).sorted()
            #expect(byTopic == expected.notes.values.filter { $0.topic == 1 }.map(\.id).sorted())
            for note in expected.notes.values { #expect(try await notes.load(note.code, from: \.code) == note) }
        }
        #expect(try await persistence.verify().isClean)
        #expect(try persistence.checkpoints().map(\.name).sorted() == ["step 17", "step 30", "step 43", "step 56"])
        for (token, model) in generations {
            let then = try await persistence.read(at: token) { try await notes.load(...).collect() }
            #expect(then == model.values.sorted { $0.id < $1.id }, "\(token)")
        }
        for _ in 0..<10 {
            let a = generations[Int(rng.next() % UInt64(generations.count))]
            let b = generations[Int(rng.next() % UInt64(generations.count))]
            let changes = try await notes.changes(from: a.token, to: b.token).collect()
            let ids = Set(a.notes.keys).union(b.notes.keys).filter { a.notes[$0] != b.notes[$0] }.sorted()
            #expect(changes.map(\.identifier) == ids, "\(a.token) → \(b.token)")
            #expect(changes.map(\.oldValue) == ids.map { a.notes[$0] })
            #expect(changes.map(\.newValue) == ids.map { b.notes[$0] })
        }
    }

    /// A later transaction that changed what the action changed makes its undo a conflict
    /// naming the record; nothing is written.
    @Test func aConflictNamesTheRecordsAndWritesNothing() async throws {
        let persistence = Persistence.inMemory()
        let notes = persistence.datastore(for: NoteFormat.self)
        _ = try await notes.count()
        try await persistence.perform(named: "first") { try await notes.persist(Note(id: 1, topic: 1, code: "a")) }
        try await persistence.perform(named: "second") { try await notes.persist(Note(id: 2, topic: 1, code: "b")) }
        try await notes.persist(Note(id: 2, topic: 2, code: "b2"))  // unnamed: not an action
        #expect(try persistence.undoableAction()?.name == "second")
        let generation = persistence.currentToken
        await #expect(throws: FolioError.undoConflict(generation: generation.generation - 1, changedSince: ["notes 2"]))
        {
            try await persistence.undo()
        }
        #expect(persistence.currentToken == generation, "nothing written")
        // As a transaction, the unnamed one is undone first, then "second".
        #expect(try await persistence.undo(.transactions)?.name == nil)
        #expect(try await persistence.undo()?.name == "second")
        #expect(try await notes.load(...).collect() == [Note(id: 1, topic: 1, code: "a")])
        #expect(try await persistence.redo()?.name == "second")
        #expect(try await notes.load(2) == Note(id: 2, topic: 1, code: "b"))
    }

    @Test func anActionBeforeAPreparationCannotBeUndone() async throws {
        let directory = PastReadsTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let persistence = try Persistence(at: directory)
            let plain = persistence.datastore(for: PastReadsTests.PlainNoteFormat.self)
            _ = try await plain.count()
            try await persistence.perform(named: "add") { try await plain.persist(Note(id: 1, topic: 1, code: "a")) }
            #expect(try persistence.undoableAction()?.name == "add")
            persistence.close()
        }
        let persistence = try Persistence(at: directory)
        defer { persistence.close() }
        _ = try await persistence.datastore(for: NoteFormat.self).count()  // builds two indexes
        do {
            try await persistence.undo()
            Issue.record("undo reverted an action from before an index build")
        } catch FolioError.cannotUndo(_, let reason) {
            #expect(reason.contains("prepared"))
        }
    }
}
