import Testing
import Foundation
import Synchronization
import Folio
import FolioStorage
import FolioTestSupport

/// `Persistence.replicate(to:)`: a replica that a read-only persistence opens and follows,
/// whose observers resume by token after a reopen, and that restores any generation it
/// holds as the source was then.
@Suite struct PersistenceReplicationTests {
    typealias Note = PastReadsTests.Note
    typealias NoteFormat = PastReadsTests.NoteFormat

    /// A store open for writing in a fresh directory, and where its replica goes; ``remove()``
    /// closes it and removes both.
    struct Source {
        let directory = PastReadsTests.directory()
        var replicaPath: String { directory + "-replica" }
        let persistence: Persistence<ReadWrite>

        init() throws {
            persistence = try Persistence(at: directory, options: RetentionTests.options)
        }

        func remove() {
            persistence.close()
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: replicaPath)
        }
    }

    /// Timeline: a one-off shipment creates the replica → a reader opens it and observes →
    /// replication follows the writer → the writer persists 30 notes → the reader's stream
    /// yields every change in order → the reader closes; the writer persists 10 more → a
    /// new reader resumes after the last token it saw and gets exactly those 10 →
    /// cancelling the replication returns what it shipped.
    @Test func aReplicaReaderFollowsAndResumesByToken() async throws {
        let source = try Source()
        defer { source.remove() }
        let (persistence, replicaPath) = (source.persistence, source.replicaPath)
        let notes = persistence.datastore(for: NoteFormat.self)
        try await notes.persist(Note(id: 0, topic: 0, code: "first"))
        let once = try await persistence.replicate(to: replicaPath, following: false)
        #expect(once.generation == persistence.currentToken.generation)

        let reader = try Persistence(readingFrom: replicaPath)
        let stream = try await reader.datastore(for: NoteFormat.self).observe()
        let replication = Task { try await persistence.replicate(to: replicaPath) }
        for id in 1...30 { try await notes.persist(Note(id: id, topic: id % 3, code: "n\(id)")) }
        var seen: [Int] = []
        var lastToken: ObservationToken?
        for await event in stream {
            if case .change(let change) = event {
                seen.append(change.identifier)
                lastToken = change.token
            }
            if seen.count == 30 { break }
        }
        #expect(seen == Array(1...30))
        reader.close()

        for id in 31...40 { try await notes.persist(Note(id: id, topic: 0, code: "later \(id)")) }
        let newest = persistence.currentToken
        let resumedReader = try Persistence(readingFrom: replicaPath)
        defer { resumedReader.close() }
        let resumed = try await resumedReader.datastore(for: NoteFormat.self).observe(after: lastToken)
        var later: [Int] = []
        for await event in resumed {
            if case .change(let change) = event { later.append(change.identifier) }
            if later.count == 10 { break }
        }
        #expect(later == Array(31...40))
        replication.cancel()
        let report = try await replication.value
        #expect(report.generation == newest.generation)
        #expect(report.fromGeneration == once.generation)
        #expect(resumedReader.verify().isClean)
    }

    /// A replica restores any generation it holds: each restored store equals the writer's
    /// state at that token, across compactions the declared history keeps.
    @Test func aRestoreFromAReplicaEqualsTheSourceAtThatCommit() async throws {
        let source = try Source()
        defer { source.remove() }
        let (persistence, directory, replicaPath) = (source.persistence, source.directory, source.replicaPath)
        try await persistence.setHistoryRetention(.generations(1_000))
        let notes = persistence.datastore(for: NoteFormat.self)
        var states: [(token: ObservationToken, notes: [Note])] = []
        var model: [Int: Note] = [:]
        for step in 0..<24 {
            let note = Note(id: step % 7, topic: step % 3, code: "\(step)")
            try await notes.persist(note)
            model[note.id] = note
            states.append((persistence.currentToken, model.values.sorted { $0.id < $1.id }))
            if step % 8 == 7 { try await persistence.compact() }
            if step % 5 == 4 { try await persistence.replicate(to: replicaPath, following: false) }
        }
        try await persistence.replicate(to: replicaPath, following: false)
        let replica = try Persistence(readingFrom: replicaPath)
        defer { replica.close() }
        for (index, state) in states.enumerated() where index % 4 == 1 || index == states.count - 1 {
            let destination = directory + "-restored-\(index)"
            defer { try? FileManager.default.removeItem(atPath: destination) }
            try replica.backup(to: destination, at: state.token)
            let restored = try Persistence(readingFrom: destination)
            defer { restored.close() }
            #expect(restored.currentToken == state.token)
            #expect(try await restored.datastore(for: NoteFormat.self).load(...).collect() == state.notes)
        }
    }

    /// Timeline: this process replicates its store → another process writes 20 commits
    /// into the same store, and exits → the replica reaches the store's newest generation,
    /// without a commit of this process to wake the replicator.
    @Test func aReplicationShipsTheCommitsOfOtherWriterProcesses() async throws {
        let source = try Source()
        defer { source.remove() }
        let (persistence, directory, replicaPath) = (source.persistence, source.directory, source.replicaPath)
        try await persistence.datastore(for: NoteFormat.self).persist(Note(id: 0, topic: 0, code: "first"))
        let shipped = Mutex<UInt64>(0)
        let replication = Task {
            try await persistence.replicate(to: replicaPath) { event in
                if case .shipped(let report) = event { shipped.withLock { $0 = report.generation } }
            }
        }
        #expect(await eventually { shipped.withLock { $0 } == persistence.currentToken.generation })

        let child = try ChildProcess(
            try ProjectExecutable.path("folio-torture"), ["concurrent-writers", directory, "1", "20"])
        let status = try await child.waitUntilExit(timeout: 120)
        #expect(status == 0, "\(child.errorOutput.suffix(600))")
        let newest = try Store.openReadOnly(at: directory, options: StoreOptions()).generation
        #expect(
            await eventually { shipped.withLock { $0 } == newest },
            "shipped up to \(shipped.withLock { $0 }) of \(newest)")
        replication.cancel()
        let report = try await replication.value
        #expect(report.generation == newest)
        let replica = try Store.openReadOnly(at: replicaPath, options: StoreOptions())
        defer { replica.close() }
        #expect(replica.generation == newest)
        #expect(replica.verify().isClean)
    }

    /// Following a replica that is already up to date, and cancelled before anything moved
    /// it, reports the generation it holds.
    @Test func anUpToDateReplicaReportsItsGeneration() async throws {
        let source = try Source()
        defer { source.remove() }
        let (persistence, replicaPath) = (source.persistence, source.replicaPath)
        try await persistence.datastore(for: NoteFormat.self).persist(Note(id: 0, topic: 0, code: "first"))
        _ = try await persistence.replicate(to: replicaPath, following: false)
        let replication = Task { try await persistence.replicate(to: replicaPath) }
        try await Task.sleep(for: .milliseconds(500))
        replication.cancel()
        let report = try await replication.value
        #expect(report.generation == persistence.currentToken.generation)
        // Cancelled at once, before the replicator's thread ran (seen on a loaded machine
        // after the 500 ms above too): still the generation it holds, not 0.
        for _ in 0..<5 {
            let cancelled = Task { try await persistence.replicate(to: replicaPath) }
            cancelled.cancel()
            #expect(try await cancelled.value.generation == persistence.currentToken.generation)
        }
    }
}
