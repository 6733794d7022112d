import Testing
import Foundation
import Folio
import FolioStorage
import FolioTestSupport

/// `backup(to:at:)`: a new store as the store was at a past commit, after compactions the
/// declared history kept, or at a checkpoint; a commit the store no longer holds is a typed
/// error that leaves no destination behind.
@Suite struct PointInTimeRestoreTests {
    typealias Note = PastReadsTests.Note
    typealias NoteFormat = PastReadsTests.NoteFormat

    @Test func aRestoreAtAPastCommitHoldsTheStoreAsItWas() async throws {
        let directory = PastReadsTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let persistence = try Persistence(at: directory, options: RetentionTests.options)
        defer { persistence.close() }
        let notes = persistence.datastore(for: NoteFormat.self)
        try await persistence.setHistoryRetention(.generations(100))
        var states: [(token: ObservationToken, notes: [Note])] = []
        var model: [Int: Note] = [:]
        for step in 0..<12 {
            let note = Note(id: step % 5, topic: step % 3, code: "\(step % 5)-\(step)")
            try await notes.persist(note)
            model[note.id] = note
            states.append((persistence.currentToken, model.values.sorted { $0.id < $1.id }))
            if step % 4 == 3 { try await persistence.compact() }
        }
        let checkpoint = try await persistence.checkpoint("before the end")
        try await notes.persist(Note(id: 9, topic: 0, code: "last"))
        states.append((checkpoint.token, states.last!.notes))
        for (index, state) in states.enumerated() where index % 3 == 0 || index == states.count - 1 {
            let destination = directory + "-restored-\(index)"
            defer { try? FileManager.default.removeItem(atPath: destination) }
            let report = try persistence.backup(to: destination, at: state.token)
            #expect(report.generation == state.token.generation)
            let restored = try Persistence(at: destination)
            defer { restored.close() }
            #expect(restored.currentToken == state.token)
            let read = try await restored.datastore(for: NoteFormat.self).load(...).collect()
            #expect(read == state.notes, "\(state.token)")
            #expect(restored.verify().isClean)
            // The restored store goes on from there.
            try await restored.datastore(for: NoteFormat.self).persist(Note(id: 50, topic: 1, code: "after"))
            #expect(restored.currentToken.generation == state.token.generation + 1)
        }
    }

    @Test func aCommitTheStoreNoLongerHoldsIsATypedError() async throws {
        let persistence = Persistence.inMemory(
            options: PersistenceOptions(autoCompaction: nil, retention: SnapshotRetention(gracePeriod: .zero)))
        let notes = persistence.datastore(for: NoteFormat.self)
        try await notes.persist(Note(id: 1, topic: 1, code: "a"))
        let early = persistence.currentToken
        try await persistence.compact()
        try await notes.persist(Note(id: 2, topic: 1, code: "b"))
        try await notes.persist(Note(id: 3, topic: 1, code: "c"))
        let destination = PastReadsTests.directory()
        #expect(throws: FolioError.self) { try persistence.backup(to: destination, at: early) }
        #expect(!FileManager.default.fileExists(atPath: destination))
    }
}
