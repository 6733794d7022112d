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

    /// A backup copies the checkpoints with the rest of the store, but not the history they
    /// keep: the copy lists none, a read of one is a generation it does not hold (never a
    /// page of the source's files read in the copy's), and none keeps a file.
    @Test func aBackupsCopiedCheckpointsReadAsHistoryItDoesNotHold() async throws {
        let directory = PastReadsTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let destination = directory + "-backup"
        defer { try? FileManager.default.removeItem(atPath: destination) }
        let old: HistoryCheckpoint
        do {
            let persistence = try Persistence(at: directory, options: RetentionTests.options)
            defer { persistence.close() }
            let notes = persistence.datastore(for: NoteFormat.self)
            for id in 0..<30 { try await notes.persist(Note(id: id, topic: 0, code: "c\(id)")) }
            old = try await persistence.checkpoint("old")
            for id in 30..<60 { try await notes.persist(Note(id: id, topic: 0, code: "c\(id)")) }
            try await persistence.compact()
            try await persistence.compact()
            try persistence.backup(to: destination)
        }
        let backup = try Persistence(at: destination, options: RetentionTests.options)
        defer { backup.close() }
        #expect(try backup.checkpoints().isEmpty)
        do {
            try await backup.read(at: old.token) {}
            Issue.record("read a generation the backup does not hold")
        } catch FolioError.storage(.generationUnavailable(let requested, _, _)) {
            #expect(requested == old.token.generation)
        }
        #expect(backup.verify().isClean)
        // Compactions of the copy keep no file for the copied checkpoint.
        let notes = backup.datastore(for: NoteFormat.self)
        for round in 0..<2 {
            try await notes.persist(Note(id: 100 + round, topic: 0, code: "r\(round)"))
            try await backup.compact()
        }
        try await notes.persist(Note(id: 200, topic: 0, code: "last"))
        #expect(try RetentionTests.snapshotFiles(destination).count == 1)
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
