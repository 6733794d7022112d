import Testing
import Foundation
import Folio
import FolioStorage
import FolioTestSupport

/// Undo and redo at their edges: a menu that would offer an undo that fails, records
/// rewritten unchanged, undos at once, undo inside a transaction, values not yet committed,
/// and the scope of a redo.
@Suite struct UndoEdgeTests {
    typealias Note = PastReadsTests.Note
    typealias NoteFormat = PastReadsTests.NoteFormat
    typealias TagFormat = PastReadsTests.TagFormat
    static let counter = ValueKey<Int?>("counter")

    static func prepared() async throws -> (Persistence<ReadWrite>, Datastore<NoteFormat, ReadWrite>) {
        let persistence = Persistence.inMemory()
        let notes = persistence.datastore(for: NoteFormat.self)
        _ = try await notes.count()
        return (persistence, notes)
    }

    /// Once a datastore was prepared after an action, undo cannot revert it: the menu is not
    /// offered an undo that would throw.
    @Test func aBlockedUndoIsNotOffered() async throws {
        let (persistence, notes) = try await Self.prepared()
        try await persistence.perform(named: "add") { try await notes.persist(Note(id: 1, topic: 1, code: "a")) }
        _ = try await persistence.datastore(for: PastReadsTests.TagFormat.self).count()
        #expect(try persistence.undoableAction() == nil)
        await #expect(throws: FolioError.self) { try await persistence.undo() }
    }

    /// A record (or value) an action wrote with the value it had is no change of the action's:
    /// a later edit of it is no conflict, and undo leaves it as it is.
    @Test func aRecordRewrittenUnchangedIsNoConflict() async throws {
        let (persistence, notes) = try await Self.prepared()
        try await notes.persist(Note(id: 1, topic: 1, code: "a"))
        try persistence.values.set(5 as Int?, for: Self.counter)
        try await persistence.values.flush()
        try await persistence.perform(named: "save all") {
            try await notes.persist(Note(id: 1, topic: 1, code: "a"))
            try persistence.values.set(5 as Int?, for: Self.counter)
            try await notes.persist(Note(id: 2, topic: 1, code: "b"))
        }
        try await notes.persist(Note(id: 1, topic: 2, code: "a2"))
        try persistence.values.set(6 as Int?, for: Self.counter)
        #expect(try await persistence.undo()?.name == "save all")
        #expect(try await notes.load(2) == nil)
        #expect(try await notes.load(1)?.code == "a2")
        #expect(try persistence.values.value(for: Self.counter) == 6)
    }

    /// Two undos at once revert the two newest actions, one each.
    @Test func undosAtOnceEachRevertOneAction() async throws {
        for _ in 0..<10 {
            let (persistence, notes) = try await Self.prepared()
            try await persistence.perform(named: "A") { try await notes.persist(Note(id: 1, topic: 1, code: "a")) }
            try await persistence.perform(named: "B") { try await notes.persist(Note(id: 2, topic: 1, code: "b")) }
            let names = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<2 { group.addTask { try await persistence.undo()?.name } }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(names.compactMap { $0 }.sorted() == ["A", "B"])
            #expect(try await notes.count() == 0)
        }
    }

    /// Inside a transaction, undo would revert that transaction's writes with the action, or
    /// put them in the undo commit: refused.
    @Test func undoInsideATransactionIsRefused() async throws {
        let (persistence, notes) = try await Self.prepared()
        try await persistence.perform(named: "A") { try await notes.persist(Note(id: 1, topic: 1, code: "a")) }
        await #expect(throws: FolioError.storage(.writeTransactionInProgress)) {
            try await persistence.perform(named: "B") {
                try await notes.persist(Note(id: 2, topic: 1, code: "b"))
                try await persistence.undo()
            }
        }
        #expect(try await notes.count() == 1)
        #expect(try persistence.undoableAction()?.name == "A")
    }

    /// A value set and not yet committed is a transaction newer than the action before it:
    /// committed first, and undone first.
    @Test func aValueNotYetCommittedIsUndoneFirst() async throws {
        let (persistence, notes) = try await Self.prepared()
        try await persistence.perform { try await notes.persist(Note(id: 1, topic: 1, code: "a")) }
        try persistence.values.set(5 as Int?, for: Self.counter)
        try await persistence.undo(.transactions)
        #expect(try await notes.load(1) != nil)
        #expect(try persistence.values.value(for: Self.counter) == nil)
    }

    /// A redo of an unnamed transaction is no named action.
    @Test func aRedoKeepsItsActionsScope() async throws {
        let (persistence, notes) = try await Self.prepared()
        try await persistence.perform { try await notes.persist(Note(id: 1, topic: 1, code: "a")) }
        try await persistence.undo(.transactions)
        try await persistence.redo(.transactions)
        #expect(try persistence.undoableAction() == nil)
        #expect(try persistence.undoableAction(.transactions) != nil)
    }
}
