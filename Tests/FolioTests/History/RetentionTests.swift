import Testing
import Foundation
import Folio
import FolioStorage
import FolioTestSupport

/// Declared history: compactions under a retention keep every retained generation readable
/// (and only those files), checkpoints keep theirs until released, the declaration lives in
/// the store (a writer that declares nothing keeps it), and below the horizon the error
/// names the oldest generation held.
@Suite struct RetentionTests {
    typealias Note = PastReadsTests.Note
    typealias NoteFormat = PastReadsTests.NoteFormat

    /// Replaced files have no grace period and at most one is kept for readers: what stays
    /// longer, stays for history.
    static let options = PersistenceOptions(
        autoCompaction: nil, retention: SnapshotRetention(gracePeriod: .zero, maximumRetainedFiles: 1))

    struct State {
        var token: ObservationToken
        var notes: [Int: Note]
    }

    static func snapshotFiles(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory + "/snapshots").filter { $0.hasSuffix(".folio") }
            .sorted()
    }

    /// Reads `state`'s generation and checks it equals the model; false if the store no
    /// longer holds it (the error must then name the oldest generation it holds).
    static func readsAsCommitted(_ state: State, in persistence: Persistence<ReadWrite>) async throws -> Bool {
        let notes = persistence.datastore(for: NoteFormat.self)
        do {
            let read = try await persistence.read(at: state.token) { try await notes.load(...).collect() }
            #expect(read == state.notes.values.sorted { $0.id < $1.id }, "generation \(state.token.generation)")
            return true
        } catch let error as FolioError {
            guard case .storage(.generationUnavailable(let requested, let oldest, let newest)) = error else {
                throw error
            }
            #expect(requested == state.token.generation)
            #expect(oldest > requested && oldest <= newest)
            #expect(try persistence.oldestReadableToken().generation == oldest)
            return false
        }
    }

    /// A model run: random transactions, compactions, checkpoints made and released, a
    /// reopen; after each compaction and at the end, every generation the retention or a
    /// checkpoint keeps reads as it was committed, and `verify` is clean.
    @Test(arguments: [HistoryRetention.generations(25), .bytes(256 << 10), .duration(.seconds(3_600))])
    func compactionsKeepEveryRetainedGeneration(retention: HistoryRetention) async throws {
        let directory = PastReadsTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var persistence = try Persistence(at: directory, options: Self.options)
        try await persistence.setHistoryRetention(retention)
        #expect(try persistence.historyRetention() == retention)
        var rng = SplitMix64(seed: 29)
        var model: [Int: Note] = [:]
        var states: [State] = []
        var checkpoints: [String: State] = [:]
        for step in 0..<90 {
            let notes = persistence.datastore(for: NoteFormat.self)
            try await persistence.perform {
                for _ in 0..<(1 + Int(rng.next() % 3)) {
                    let id = Int(rng.next() % 20)
                    if rng.next() % 5 == 0 {
                        _ = try await notes.deleteIfPresent(id)
                        model[id] = nil
                    } else {
                        let note = Note(
                            id: id, topic: Int(rng.next() % 4), code: "\(id)-" + String(repeating: "x", count: 200))
                        try await notes.persist(note)
                        model[id] = note
                    }
                }
            }
            states.append(State(token: persistence.currentToken, notes: model))
            if step % 23 == 5 {
                let checkpoint = try await persistence.checkpoint("step \(step)")
                #expect(checkpoint.token == states.last?.token)
                checkpoints[checkpoint.name] = states.last
            }
            if step == 70 { #expect(try await persistence.releaseCheckpoint("step 28")) }
            if step == 70 { checkpoints["step 28"] = nil }
            if step % 10 == 9 {
                try await persistence.compact()
                try await checkRetained(states, checkpoints, retention, persistence)
            }
            if step == 50 {
                // Another writer's open: it declares nothing, and keeps what the store declares.
                persistence.close()
                persistence = try Persistence(at: directory, options: Self.options)
                try await checkRetained(states, checkpoints, retention, persistence)
            }
        }
        #expect(try persistence.checkpoints().map(\.name) == ["step 5", "step 51", "step 74"])
        try await checkRetained(states, checkpoints, retention, persistence)
        #expect(persistence.verify().isClean)
        if let count = retention.generations {
            // Without its checkpoints, the history keeps only the files of the newest
            // generations (a compaction every 10 commits), and the file kept for readers.
            for name in checkpoints.keys { try await persistence.releaseCheckpoint(name) }
            try await persistence.perform { try persistence.values.set(1, for: PastReadsTests.other) }
            #expect(try Self.snapshotFiles(directory).count <= count / 10 + 3)
            try await checkRetained(states, [:], retention, persistence)
        }
        persistence.close()
    }

    func checkRetained(
        _ states: [State], _ checkpoints: [String: State], _ retention: HistoryRetention,
        _ persistence: Persistence<ReadWrite>
    ) async throws {
        let newest = persistence.currentToken.generation
        var held = 0
        for state in states {
            let kept =
                retention.generations.map { state.token.generation + UInt64($0) > newest } ?? false
                || retention.duration != nil
                || checkpoints.values.contains { $0.token == state.token }
            let reads = try await Self.readsAsCommitted(state, in: persistence)
            if kept {
                let files = try Self.snapshotFiles(persistence.path)
                #expect(
                    reads,
                    "generation \(state.token.generation) is retained (newest \(newest), files \(files))"
                )
            }
            if reads { held += 1 }
        }
        if retention.bytes != nil {
            // A budget of a few files' bytes keeps more than the file compaction leaves.
            #expect(held >= 10)
        }
        // No more files than the history needs: each kept replaced file holds a retained
        // generation or fits the budget.
        #expect(try persistence.oldestReadableToken().generation <= newest)
    }

    @Test func withoutARetentionCompactionLeavesOnlyItsOwnFile() async throws {
        let directory = PastReadsTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let persistence = try Persistence(at: directory, options: Self.options)
        defer { persistence.close() }
        let notes = persistence.datastore(for: NoteFormat.self)
        try await persistence.setHistoryRetention(.generations(1_000))
        for round in 0..<4 {
            try await notes.persist(Note(id: round, topic: 0, code: "r\(round)"))
            try await persistence.compact()
        }
        try await notes.persist(Note(id: 9, topic: 0, code: "last"))
        #expect(try Self.snapshotFiles(directory).count == 5)
        #expect(try persistence.oldestReadableToken().generation == 1)
        // Back to the default: the next commit's check lets every replaced file go but the
        // one kept for readers.
        try await persistence.setHistoryRetention(.compactionOnly)
        #expect(try persistence.historyRetention() == .compactionOnly)
        try await notes.persist(Note(id: 10, topic: 0, code: "after"))
        #expect(try Self.snapshotFiles(directory).count <= 2)
    }

    /// A duration keeps the files of the generations committed within it, and lets them go
    /// once they are older: here a shorter duration, declared once they are, lets them go in
    /// the commit that declares it (only a lower bound of the time that passed matters).
    @Test func aDurationLetsOlderFilesGo() async throws {
        let directory = PastReadsTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let persistence = try Persistence(at: directory, options: Self.options)
        defer { persistence.close() }
        let notes = persistence.datastore(for: NoteFormat.self)
        try await persistence.setHistoryRetention(.duration(.seconds(3_600)))
        try await notes.persist(Note(id: 1, topic: 1, code: "early"))
        let early = persistence.currentToken
        for round in 0..<3 {
            try await notes.persist(Note(id: 10 + round, topic: 0, code: "r\(round)"))
            try await persistence.compact()
        }
        try await notes.persist(Note(id: 20, topic: 0, code: "within"))
        #expect(try await persistence.read(at: early) { try await notes.load(1) }?.code == "early")
        #expect(try Self.snapshotFiles(directory).count == 4)
        try await Task.sleep(for: .milliseconds(300))
        try await persistence.setHistoryRetention(.duration(.milliseconds(200)))
        #expect(try Self.snapshotFiles(directory).count == 1)
        await #expect(throws: FolioError.self) { try await persistence.read(at: early) {} }
    }

    @Test func aCheckpointKeepsItsGenerationUntilReleased() async throws {
        let directory = PastReadsTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let persistence = try Persistence(at: directory, options: Self.options)
        defer { persistence.close() }
        let notes = persistence.datastore(for: NoteFormat.self)
        try await notes.persist(Note(id: 1, topic: 1, code: "before"))
        let checkpoint = try await persistence.checkpoint("before import")
        #expect(checkpoint.name == "before import")
        for id in 2..<6 {
            try await notes.persist(Note(id: id, topic: 1, code: "imported \(id)"))
            try await persistence.compact()
        }
        try await notes.persist(Note(id: 1, topic: 1, code: "after"))
        let before = try await persistence.read(at: checkpoint.token) { try await notes.load(...).collect() }
        #expect(before == [Note(id: 1, topic: 1, code: "before")])
        #expect(try persistence.checkpoints() == [checkpoint])
        // The same name again moves it.
        let moved = try await persistence.checkpoint("before import")
        #expect(moved.token > checkpoint.token)
        #expect(try persistence.checkpoints() == [moved])
        #expect(try await persistence.releaseCheckpoint("before import"))
        #expect(try await persistence.releaseCheckpoint("before import") == false)
        try await notes.persist(Note(id: 7, topic: 1, code: "later"))
        await #expect(throws: FolioError.self) {
            try await persistence.read(at: checkpoint.token) {}
        }
        #expect(try persistence.checkpoints().isEmpty)
    }

    @Test func badArgumentsAreTypedErrors() async throws {
        let persistence = Persistence.inMemory()
        await #expect(throws: FolioError.invalidArgument(name: "generations", reason: "must be positive, or nil")) {
            try await persistence.setHistoryRetention(.generations(0))
        }
        await #expect(throws: FolioError.invalidArgument(name: "duration", reason: "must be positive, or nil")) {
            try await persistence.setHistoryRetention(.duration(.seconds(-1)))
        }
        await #expect(throws: FolioError.self) { try await persistence.checkpoint("") }
        await #expect(throws: FolioError.storage(.writeTransactionInProgress)) {
            try await persistence.perform { try await persistence.checkpoint("inside") }
        }
        #expect(try persistence.historyRetention() == .compactionOnly)
        #expect(try persistence.checkpoints().isEmpty)
    }

    /// Declaring history and making checkpoints change no data: undo passes them by.
    @Test func undoPassesByRetentionCommits() async throws {
        let persistence = Persistence.inMemory()
        let notes = persistence.datastore(for: NoteFormat.self)
        try await notes.persist(Note(id: 1, topic: 1, code: "first"))
        try await persistence.perform(named: "Rename") {
            try await notes.persist(Note(id: 1, topic: 1, code: "renamed"))
        }
        try await persistence.setHistoryRetention(.generations(100))
        _ = try await persistence.checkpoint("after rename")
        #expect(try await persistence.undoableAction(.transactions)?.name == "Rename")
        let undone = try await persistence.undo(.transactions)
        #expect(undone?.name == "Rename")
        #expect(try await notes.load(1)?.code == "first")
        #expect(try persistence.checkpoints().map(\.name) == ["after rename"])
        #expect(try persistence.historyRetention() == .generations(100))
    }

    /// The declaration is read back by every process: a read-only helper sees it too.
    @Test func theDeclarationIsInTheStore() async throws {
        let directory = PastReadsTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let retention = HistoryRetention(generations: 500, duration: .seconds(60), bytes: 1 << 20)
        do {
            let persistence = try Persistence(at: directory)
            try await persistence.setHistoryRetention(retention)
            _ = try await persistence.checkpoint("one")
            persistence.close()
        }
        let reader = try Persistence<ReadOnly>(readingFrom: directory)
        defer { reader.close() }
        #expect(try reader.historyRetention() == retention)
        #expect(try reader.checkpoints().map(\.name) == ["one"])
    }

    /// A writer that closes long after its last removal check leaves what the declaration
    /// keeps: the next writer's open keeps it too.
    @Test func closeKeepsWhatTheDeclarationKeeps() async throws {
        let directory = PastReadsTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let options = RetentionTests.options  // grace 0, at most 1 file for readers
        var persistence = try Persistence(at: directory, options: options)
        var notes = persistence.datastore(for: NoteFormat.self)
        try await persistence.setHistoryRetention(.generations(1_000))
        try await notes.persist(Note(id: 1, topic: 1, code: "early"))
        let early = persistence.currentToken
        let checkpoint = try await persistence.checkpoint("cp")
        for round in 0..<3 {
            try await notes.persist(Note(id: 10 + round, topic: 0, code: "r\(round)"))
            try await persistence.compact()
        }
        try await notes.persist(Note(id: 99, topic: 0, code: "last"))
        let readBefore = try await persistence.read(at: early) { try await notes.load(...).collect() }
        #expect(readBefore == [Note(id: 1, topic: 1, code: "early")])
        let before = try RetentionTests.snapshotFiles(directory)
        try await Task.sleep(for: .milliseconds(1_500))  // past historyRecheckInterval (1 s)
        persistence.close()
        let after = try RetentionTests.snapshotFiles(directory)
        #expect(after == before, "close removed files the declaration keeps")
        persistence = try Persistence(at: directory, options: options)
        defer { persistence.close() }
        notes = persistence.datastore(for: NoteFormat.self)
        #expect(try persistence.historyRetention() == .generations(1_000))
        await #expect(throws: Never.self) {
            _ = try await persistence.read(at: early) { try await notes.load(...).collect() }
        }
        await #expect(throws: Never.self) {
            _ = try await persistence.read(at: checkpoint.token) { try await notes.load(...).collect() }
        }
    }

    /// The same with a grace period: the file the last compaction replaced stays at close
    /// after its grace period when the declaration keeps it.
    @Test func closeAfterTheGracePeriodKeepsWhatTheDeclarationKeeps() async throws {
        let directory = PastReadsTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let options = PersistenceOptions(
            autoCompaction: nil, retention: SnapshotRetention(gracePeriod: .seconds(1), maximumRetainedFiles: 10))
        var persistence = try Persistence(at: directory, options: options)
        var notes = persistence.datastore(for: NoteFormat.self)
        try await persistence.setHistoryRetention(.generations(1_000))
        try await notes.persist(Note(id: 1, topic: 1, code: "early"))
        let early = persistence.currentToken
        try await persistence.compact()
        try await notes.persist(Note(id: 2, topic: 1, code: "later"))
        try await Task.sleep(for: .milliseconds(1_500))
        persistence.close()
        persistence = try Persistence(at: directory, options: options)
        defer { persistence.close() }
        notes = persistence.datastore(for: NoteFormat.self)
        await #expect(throws: Never.self) {
            _ = try await persistence.read(at: early) { try await notes.load(...).collect() }
        }
    }

    /// `.bytes(1)` keeps no replaced file (every file is larger than a byte), including the
    /// ones a writer's open retires without knowing their lengths.
    @Test(arguments: [HistoryRetention.bytes(1), .compactionOnly])
    func aBudgetOfOneByteKeepsNoReplacedFileAfterReopen(retention: HistoryRetention) async throws {
        let directory = PastReadsTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let options = RetentionTests.options
        // The first writer has the default 30 s grace period: the file its compaction
        // replaced is still there when it closes.
        var persistence = try Persistence(at: directory, options: PersistenceOptions(autoCompaction: nil))
        var notes = persistence.datastore(for: NoteFormat.self)
        try await persistence.setHistoryRetention(retention)
        for round in 0..<1 {
            try await notes.persist(Note(id: round, topic: 0, code: "\(round)-" + String(repeating: "x", count: 200)))
            try await persistence.compact()
        }
        try await notes.persist(Note(id: 50, topic: 0, code: "a"))
        let beforeReopen = try RetentionTests.snapshotFiles(directory)
        persistence.close()
        persistence = try Persistence(at: directory, options: options)
        defer { persistence.close() }
        notes = persistence.datastore(for: NoteFormat.self)
        for round in 0..<3 {
            try await Task.sleep(for: .milliseconds(1_100))  // past each recheck
            try await notes.persist(Note(id: 100 + round, topic: 0, code: "b\(round)"))
        }
        let after = try RetentionTests.snapshotFiles(directory)
        #expect(after.count == 1, "before reopen \(beforeReopen), after \(after)")
    }

    /// A duration just under Int64.max microseconds: seconds × 10⁶ does not overflow, the
    /// added microseconds would; it is kept as the longest duration.
    @Test func aHugeDurationDoesNotTrap() async throws {
        let persistence = Persistence.inMemory()
        try await persistence.setHistoryRetention(.duration(.seconds(9_223_372_036_854) + .milliseconds(999)))
        #expect(try persistence.historyRetention().duration == .microseconds(Int64.max))
    }
}
