import Testing
import Foundation
import Folio
import FolioTestSupport

/// `UndoConnection` driven by an undo manager that follows Foundation's rules (Foundation's
/// own is not in swift-corelibs-Foundation): the menu's undos and redos reach the store in
/// the order chosen, whatever their awaits, and the store follows them.
@MainActor @Suite struct UndoConnectionTests {
    typealias Note = PastReadsTests.Note
    typealias NoteFormat = PastReadsTests.NoteFormat

    /// Foundation's rules: a registration while undoing goes to the redo stack, one while
    /// redoing or otherwise to the undo stack; a new action clears the redo stack.
    final class MenuUndoManager: UndoRegistrar {
        var undoStack: [(name: String?, handler: @MainActor () -> Void)] = []
        var redoStack: [(name: String?, handler: @MainActor () -> Void)] = []
        private var undoing = false
        private var redoing = false

        func registerUndo(named name: String?, handler: @escaping @MainActor () -> Void) {
            if undoing {
                redoStack.append((name, handler))
            } else {
                if !redoing { redoStack.removeAll() }
                undoStack.append((name, handler))
            }
        }

        var undoActionName: String? { undoStack.last?.name ?? nil }

        func undo() {
            guard let entry = undoStack.popLast() else { return }
            undoing = true
            entry.handler()
            undoing = false
        }

        func redo() {
            guard let entry = redoStack.popLast() else { return }
            redoing = true
            entry.handler()
            redoing = false
        }
    }

    @Test func theMenuUndoesAndRedoesTheStoresActions() async throws {
        let persistence = Persistence.inMemory()
        let notes = persistence.datastore(for: NoteFormat.self)
        _ = try await notes.count()
        let menu = MenuUndoManager()
        var errors: [any Error] = []
        let connection = UndoConnection(persistence: persistence, registrar: menu) { errors.append($0) }
        for id in 1...3 {
            try await connection.perform(named: "Add \(id)") {
                try await notes.persist(Note(id: id, topic: 0, code: "c\(id)"))
            }
        }
        #expect(menu.undoActionName == "Add 3")
        // Two undos and a redo chosen at once: the store takes them in that order.
        menu.undo()
        menu.undo()
        menu.redo()
        await connection.settled()
        #expect(try await notes.load(...).collect().map(\.id) == [1, 2])
        #expect(menu.undoActionName == "Add 2" && menu.redoStack.map(\.name) == ["Add 3"])
        menu.redo()
        await connection.settled()
        #expect(try await notes.load(...).collect().map(\.id) == [1, 2, 3])
        // A new action clears what can be redone, in the menu and in the store.
        menu.undo()
        await connection.settled()
        try await connection.perform(named: "Add 4") { try await notes.persist(Note(id: 4, topic: 0, code: "c4")) }
        #expect(try menu.redoStack.isEmpty && persistence.redoableAction() == nil)
        #expect(try await notes.load(...).collect().map(\.id) == [1, 2, 4])
        // A conflict reaches onError; the store is left as it was.
        try await notes.persist(Note(id: 4, topic: 9, code: "changed"))  // unnamed
        menu.undo()
        await connection.settled()
        #expect(errors.count == 1)
        if case FolioError.undoConflict(_, let records)? = errors.first { #expect(records == ["notes 4"]) }
        #expect(try await notes.load(4)?.topic == 9)
    }
}
