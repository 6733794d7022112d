import Testing
import Foundation
import Folio
import FolioStorage
import FolioTestSupport

/// `changes(from:to:)` against a model: random transactions (some changing more records than
/// a change record lists, so that the datastore changed wholesale), then the changes between
/// random pairs of commits, either way round, must equal the model's difference.
@Suite struct ChangesBetweenTests {
    typealias Note = PastReadsTests.Note
    typealias NoteFormat = PastReadsTests.NoteFormat

    /// The model's difference between two states, as `changes(from:to:)` reports it.
    static func difference(
        _ old: [Int: Note], _ new: [Int: Note]
    ) -> [(kind: Change<Note, Int>.Kind, id: Int, old: Note?, new: Note?)] {
        Set(old.keys).union(new.keys).sorted().compactMap { id in
            switch (old[id], new[id]) {
            case (nil, nil): return nil
            case (nil, let created?): return (.created, id, nil, created)
            case (let deleted?, nil): return (.deleted, id, deleted, nil)
            case (let before?, let after?): return before == after ? nil : (.updated, id, before, after)
            }
        }
    }

    @Test(arguments: [16_384, 3])
    func changesBetweenAnyTwoCommitsAreTheModelsDifference(changeRecordKeyLimit: Int) async throws {
        var options = PersistenceOptions()
        options.changeRecordKeyLimit = changeRecordKeyLimit
        let persistence = Persistence.inMemory(options: options)
        let notes = persistence.datastore(for: NoteFormat.self)
        var rng = SplitMix64(seed: UInt64(changeRecordKeyLimit))
        var model: [Int: Note] = [:]
        var states: [(ObservationToken, [Int: Note])] = [(persistence.currentToken, [:])]
        for step in 0..<60 {
            var writes: [(Int, Note?)] = []
            for _ in 0..<(1 + Int(rng.next() % 5)) {
                let id = Int(rng.next() % 25)
                // Sometimes the same value again: written, but no change.
                let same = rng.next() % 5 == 0 ? model[id] : nil
                writes.append(
                    (
                        id,
                        rng.next() % 4 == 0
                            ? nil : same ?? Note(id: id, topic: Int(rng.next() % 3), code: "c\(id)-\(step)")
                    ))
            }
            try await persistence.perform {
                for (id, note) in writes {
                    if let note { try await notes.persist(note) } else { _ = try await notes.deleteIfPresent(id) }
                }
            }
            for (id, note) in writes { model[id] = note }
            states.append((persistence.currentToken, model))
        }
        for _ in 0..<80 {
            let (a, b) = (
                states[Int(rng.next() % UInt64(states.count))], states[Int(rng.next() % UInt64(states.count))]
            )
            let changes = try await notes.changes(from: a.0, to: b.0).collect()
            let expected = Self.difference(a.1, b.1)
            #expect(changes.map(\.identifier) == expected.map(\.id), "\(a.0) → \(b.0)")
            #expect(changes.map(\.kind) == expected.map(\.kind))
            #expect(changes.map(\.oldValue) == expected.map(\.old))
            #expect(changes.map(\.newValue) == expected.map(\.new))
            #expect(changes.allSatisfy { $0.token == b.0 })
        }
        // To the newest by default.
        let first = try #require(states.dropFirst().first)
        #expect(
            try await notes.changes(from: first.0).collect().map(\.identifier)
                == Self.difference(first.1, model).map(\.id))
    }

    /// The change records name what changed, and only that is read; a commit that changed
    /// the tree wholesale makes both generations read side by side.
    @Test func theChangeRecordsAreFollowedWhereTheyNameEveryChange() throws {
        let store = try Store.open(at: "/s", options: StoreOptions(fileSystem: MemoryFileSystem(), autoCompaction: nil))
        defer { store.close() }
        for i in 0..<50 { try store.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        let start = try store.read()
        try store.write { try $0.put([1], for: [7], in: "t") }
        try store.write { try $0.put([2], for: [7], in: "t") }
        try store.write { _ = try $0.remove([9], from: "t") }
        try store.write { try $0.put([9], for: [9], in: "t") }  // back as it was: no difference
        var named = try store.differences(in: "t", from: start, to: try store.read())
        #expect(named.followsChangeRecords)
        #expect(try named.next() == KeyDifference(key: [7], before: [7], after: [2]))
        #expect(try named.next() == nil)
        try store.write { _ = try $0.dropTree("t") }
        try store.write { try $0.put([3], for: [3], in: "t") }  // re-created as it was
        var sideBySide = try store.differences(in: "t", from: start, to: try store.read())
        #expect(!sideBySide.followsChangeRecords)
        var keys: [[UInt8]] = []
        while let difference = try sideBySide.next() { keys.append(difference.key) }
        // Every key but [3], whose value is as it was.
        #expect(keys == (0..<50).filter { $0 != 3 }.map { [UInt8($0)] })
    }

    @Test func aStartTheStoreNoLongerHoldsIsATypedError() async throws {
        let persistence = Persistence.inMemory(
            options: PersistenceOptions(retention: SnapshotRetention(gracePeriod: .zero)))
        let notes = persistence.datastore(for: NoteFormat.self)
        try await notes.persist(Note(id: 1, topic: 1, code: "a"))
        let early = persistence.currentToken
        try await persistence.compact()
        let compacted = persistence.currentToken
        try await notes.persist(Note(id: 2, topic: 1, code: "b"))
        try await notes.persist(Note(id: 3, topic: 1, code: "c"))
        await #expect(
            throws: FolioError.storage(
                .generationUnavailable(
                    requested: early.generation, oldest: compacted.generation,
                    newest: persistence.currentToken.generation))
        ) {
            _ = try await notes.changes(from: early).collect()
        }
        #expect(try await notes.changes(from: compacted).collect().map(\.identifier) == [2, 3])
    }

    /// An index build rewrites every record's index keys, not the records: no change.
    @Test func anIndexBuildIsNoChange() async throws {
        let directory = PastReadsTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let token: ObservationToken
        do {
            let persistence = try Persistence(at: directory)
            let plain = persistence.datastore(for: PastReadsTests.PlainNoteFormat.self)
            for id in 0..<4 { try await plain.persist(Note(id: id, topic: id % 2, code: "c\(id)")) }
            token = persistence.currentToken
            persistence.close()
        }
        let persistence = try Persistence(at: directory)
        defer { persistence.close() }
        let notes = persistence.datastore(for: NoteFormat.self)
        _ = try await notes.count(where: #Predicate { $0.topic == 1 })  // builds the indexes
        #expect(persistence.currentToken != token, "the build committed")
        #expect(try await notes.changes(from: token).collect().isEmpty)
        try await notes.persist(Note(id: 9, topic: 1, code: "c9"))
        #expect(try await notes.changes(from: token).collect().map(\.identifier) == [9])
    }
}
