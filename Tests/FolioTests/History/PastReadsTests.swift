import Testing
import Foundation
import Folio
import FolioStorage
import FolioTestSupport

/// `read(at:)` against a model: random transactions over two datastores (one created part
/// way), then every generation read back, through every kind of read: point loads, full
/// scans, counts, queries planned through an index, index ranges and values by key.
@Suite struct PastReadsTests {
    struct Note: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var topic: Int
        var code: String
    }

    struct NoteFormat: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "notes"
        static let currentVersion = Version.one
        typealias Instance = Note
        let topic = Index(\Note.topic)
        let code = OneToOneIndex(\Note.code)
    }

    /// The notes' datastore as an earlier release declared it: no indexes.
    struct PlainNoteFormat: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "notes"
        static let currentVersion = Version.one
        typealias Instance = Note
    }

    struct Tag: Codable, Identifiable, Sendable, Equatable {
        var id: String
        var uses: Int
    }

    struct TagFormat: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "tags"
        static let currentVersion = Version.one
        typealias Instance = Tag
    }

    /// What the store held at one generation.
    struct State {
        var token: ObservationToken
        var notes: [Int: Note]
        var tags: [String: Tag]?
        var counter: Int?
    }

    static let counter = ValueKey<Int?>("counter")

    @Test func everyGenerationReadsAsItWasCommitted() async throws {
        let persistence = Persistence.inMemory()
        let notes = persistence.datastore(for: NoteFormat.self)
        let tags = persistence.datastore(for: TagFormat.self)
        var rng = SplitMix64(seed: 2_029)
        var model: [Int: Note] = [:]
        var tagModel: [String: Tag]? = nil
        var counter: Int? = nil
        var states = [State(token: persistence.currentToken, notes: [:], tags: nil, counter: nil)]
        for step in 0..<80 {
            var writes: [(Int, Note?)] = []
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                let id = Int(rng.next() % 30)
                if rng.next() % 4 == 0 {
                    writes.append((id, nil))
                } else {
                    writes.append((id, Note(id: id, topic: Int(rng.next() % 5), code: "c\(id)-\(step)")))
                }
            }
            let tag = step >= 40 ? Tag(id: "t\(rng.next() % 6)", uses: step) : nil
            try await persistence.perform {
                for (id, note) in writes {
                    if let note { try await notes.persist(note) } else { _ = try await notes.deleteIfPresent(id) }
                }
                if let tag { try await tags.persist(tag) }
                if step % 7 == 3 { try persistence.values.set(step as Int?, for: Self.counter) }
            }
            for (id, note) in writes { model[id] = note }
            if let tag { tagModel = (tagModel ?? [:]).merging([tag.id: tag]) { $1 } }
            if step % 7 == 3 { counter = step }
            states.append(State(token: persistence.currentToken, notes: model, tags: tagModel, counter: counter))
        }
        #expect(try persistence.oldestReadableToken() <= states[0].token)
        // Newest first, then oldest first: a read walks back once, and later reads find
        // generations on both sides of what was walked.
        for state in states.reversed() + states { try await Self.check(state, persistence, notes, tags) }
    }

    static func check(
        _ state: State, _ persistence: Persistence<ReadWrite>, _ notes: Datastore<NoteFormat, ReadWrite>,
        _ tags: Datastore<TagFormat, ReadWrite>
    ) async throws {
        try await persistence.read(at: state.token) {
            let expected = state.notes.values.sorted { $0.id < $1.id }
            #expect(try await notes.load(...).collect() == expected, "\(state.token)")
            #expect(try await notes.count() == expected.count)
            for id in [0, 7, 13, 29] { #expect(try await notes.load(id) == state.notes[id]) }
            let topic = 2
            let byTopic = try await notes.fetch(where: #Predicate { $0.topic == topic }).collect()
            #expect(byTopic.map(\.id).sorted() == expected.filter { $0.topic == topic }.map(\.id))
            #expect(try await notes.load(topic...topic, from: \.topic).collect().count == byTopic.count)
            if let any = expected.first {
                #expect(try await notes.load(any.code, from: \.code) == any)
            }
            #expect(try await tags.load(...).collect() == (state.tags ?? [:]).values.sorted { $0.id < $1.id })
            #expect(try persistence.values.value(for: Self.counter) == state.counter)
        }
    }

    @Test func writesInsideAPastReadAreRefused() async throws {
        let persistence = Persistence.inMemory()
        let notes = persistence.datastore(for: NoteFormat.self)
        try await notes.persist(Note(id: 1, topic: 1, code: "a"))
        let token = persistence.currentToken
        try await notes.persist(Note(id: 1, topic: 2, code: "b"))
        await #expect(throws: FolioError.writeInReadOnlySnapshot) {
            try await persistence.read(at: token) { try await notes.persist(Note(id: 2, topic: 1, code: "c")) }
        }
        // Inside a transaction, the past for the time of the body, then the transaction again.
        try await persistence.perform {
            try await notes.persist(Note(id: 3, topic: 3, code: "d"))
            let past = try await persistence.read(at: token) { try await notes.load(...).collect() }
            #expect(past == [Note(id: 1, topic: 1, code: "a")])
            #expect(try await notes.count() == 2)
        }
    }

    @Test func aGenerationTheStoreDoesNotHoldIsATypedError() async throws {
        let persistence = Persistence.inMemory(
            options: PersistenceOptions(retention: SnapshotRetention(gracePeriod: .zero)))
        let notes = persistence.datastore(for: NoteFormat.self)
        try await notes.persist(Note(id: 1, topic: 1, code: "a"))
        let early = persistence.currentToken
        try await notes.persist(Note(id: 1, topic: 2, code: "b"))
        let future = ObservationToken(generation: persistence.currentToken.generation + 5)
        await #expect(
            throws: FolioError.storage(
                .generationUnavailable(
                    requested: future.generation, oldest: 1, newest: persistence.currentToken.generation))
        ) {
            try await persistence.read(at: future) {}
        }
        // A compaction, then two commits: the replaced file goes (no grace period), and with
        // it every generation before the compaction.
        try await persistence.compact()
        let compacted = persistence.currentToken
        try await notes.persist(Note(id: 2, topic: 1, code: "c"))
        try await notes.persist(Note(id: 3, topic: 1, code: "d"))
        let newest = persistence.currentToken
        await #expect(
            throws: FolioError.storage(
                .generationUnavailable(
                    requested: early.generation, oldest: compacted.generation, newest: newest.generation))
        ) {
            try await persistence.read(at: early) {}
        }
        #expect(try persistence.oldestReadableToken() == compacted)
        let atCompaction = try await persistence.read(at: compacted) { try await notes.load(...).collect() }
        #expect(atCompaction == [Note(id: 1, topic: 2, code: "b")])
    }

    /// A generation from before an index existed reads through a scan: the index's tree is
    /// not in that generation's catalog, and the planner sees so.
    @Test func anIndexAddedLaterIsNotUsedBeforeItWasBuilt() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var tokens: [ObservationToken] = []
        do {
            let persistence = try Persistence(at: directory)
            let plain = persistence.datastore(for: PastReadsTests.PlainNoteFormat.self)
            for id in 0..<6 {
                try await plain.persist(Note(id: id, topic: id % 2, code: "c\(id)"))
                tokens.append(persistence.currentToken)
            }
            persistence.close()
        }
        let persistence = try Persistence(at: directory)
        let notes = persistence.datastore(for: NoteFormat.self)
        #expect(try await notes.count(where: #Predicate { $0.topic == 1 }) == 3)
        for (index, token) in tokens.enumerated() {
            let odd = try await persistence.read(at: token) {
                try await notes.fetch(where: #Predicate { $0.topic == 1 }).collect().map(\.id)
            }
            #expect(odd == (0...index).filter { $0 % 2 == 1 })
        }
        persistence.close()
    }

    static let word = ValueKey<String?>("word")
    static let other = ValueKey<Int?>("other")

    static func directory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("past-\(UUID())").path
    }

    /// A fresh process's caches start at the generation it opened; a past read must neither
    /// move them back to its generation nor leave its values in them as current.
    @Test func aPastReadLeavesTheRecordCacheExact() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let token: ObservationToken
        do {
            let persistence = try Persistence(at: directory)
            let notes = persistence.datastore(for: NoteFormat.self)
            try await notes.persist(Note(id: 1, topic: 1, code: "old"))
            token = persistence.currentToken
            try await notes.persist(Note(id: 1, topic: 2, code: "new"))
            persistence.close()
        }
        let persistence = try Persistence(at: directory)
        defer { persistence.close() }
        let notes = persistence.datastore(for: NoteFormat.self)
        #expect(try await persistence.read(at: token) { try await notes.load(1) }?.code == "old")
        try await notes.persist(Note(id: 2, topic: 1, code: "other"))
        #expect(try await notes.load(1)?.code == "new")
        #expect(try await persistence.read(at: token) { try await notes.load(1) }?.code == "old")
    }

    @Test func aPastReadLeavesTheValueCacheExact() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let token: ObservationToken
        do {
            let persistence = try Persistence(at: directory)
            try persistence.values.set("old", for: Self.word)
            try await persistence.values.flush()
            token = persistence.currentToken
            try persistence.values.set("new", for: Self.word)
            try await persistence.values.flush()
            persistence.close()
        }
        let persistence = try Persistence(at: directory)
        defer { persistence.close() }
        #expect(try await persistence.read(at: token) { try persistence.values.value(for: Self.word) } == "old")
        try persistence.values.set(1, for: Self.other)
        try await persistence.values.flush()
        #expect(try persistence.values.value(for: Self.word) == "new")
    }
}
