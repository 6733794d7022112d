import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport
import LibraryExample

/// Commits recorded wholesale, made by another process: `folio-torture author-steps` runs
/// seeded steps on the worked example's authors with `changeRecordKeyLimit` 20, one step
/// each time this process asks, alternating small steps (changes listed) and large ones
/// (the datastore changed wholesale). This process follows the store read-only, and after
/// each step every consumer must agree with a fresh read (a new read-only persistence): an
/// event stream applied to a model (a reload re-reads), an instance observer, live queries
/// over an index range and an identifier range, and the record cache (every record was
/// loaded before the step). The reloads name exactly the steps recorded wholesale, live
/// and when a stream resumes from a token before them.
@Suite(.serialized) struct CrossProcessWholesaleTests {
    /// What the event stream's consumer has built from the events so far.
    final class EventModel: Sendable {
        let authors = Mutex<[Int: LibraryExample.Author]>([:])
        let reloads = Mutex<[UInt64]>([])
    }

    @Test func observersInAReadOnlyProcessFollowWholesaleCommits() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/xwholesale-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/store"
        let writer = try ChildProcess(try ProjectExecutable.path("folio-torture"), ["author-steps", path, "5", "20"])
        defer { writer.kill() }
        try await writer.nextLine(timeout: 60) { $0.hasPrefix("ready") }

        let quiet = PersistenceOptions(log: { _ in })
        let reader = try Persistence(readingFrom: path, options: quiet)
        defer { reader.close() }
        let authors = reader.datastore(for: LibraryExample.AuthorFormat.self)
        /// What a fresh process would read now: a new read-only persistence, nothing cached
        /// (every author by identifier, and the two live queries' ranges).
        func fresh() async throws -> (
            byID: [Int: LibraryExample.Author], born: [LibraryExample.Author], ids: [LibraryExample.Author]
        ) {
            let other = try Persistence(readingFrom: path, options: quiet)
            defer { other.close() }
            let datastore = other.datastore(for: LibraryExample.AuthorFormat.self)
            let all = try await datastore.load(...).collect()
            return (
                Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) }),
                try await datastore.load(1910..<1940, from: \.born).collect(),
                try await datastore.load(5..<60).collect()
            )
        }

        let model = EventModel()
        let initial = try await fresh().byID
        model.authors.withLock { $0 = initial }
        let events = try await authors.observe(bufferLimit: 100_000)
        let eventTask = Task {
            for await event in events {
                switch event {
                case .change(let change): model.authors.withLock { $0[change.identifier] = change.newValue }
                case .reload(let token):
                    model.reloads.withLock { $0.append(token.generation) }
                    let all = try await authors.load(...).collect()
                    model.authors.withLock { $0 = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) }) }
                case .failure(let error, _): Issue.record("event failure: \(error)")
                }
            }
        }
        let watched = Mutex<LibraryExample.Author?>(nil)
        let instance = try await authors.observe(3, bufferLimit: 10_000)
        let instanceTask = Task {
            for await event in instance { if case .value(let author) = event { watched.withLock { $0 = author } } }
        }
        let born = Mutex<[LibraryExample.Author]?>(nil), ids = Mutex<[LibraryExample.Author]?>(nil)
        let bornLive = try await authors.liveQuery(1910..<1940, from: \.born)
        let idsLive = try await authors.liveQuery(5..<60)
        let liveTasks = [
            Task { for try await results in bornLive { born.withLock { $0 = results } } },
            Task { for try await results in idsLive { ids.withLock { $0 = results } } },
        ]
        defer {
            eventTask.cancel()
            instanceTask.cancel()
            for task in liveTasks { task.cancel() }
        }

        let beforeSteps = reader.currentToken
        let recordsTree = DatastoreLayout.recordsTree(LibraryExample.AuthorFormat.key)
        var wholesale: [UInt64] = []
        for step in 0..<12 {
            // Fill the record cache with every record, so a stale entry would be served.
            for id in 0..<80 { _ = try await authors.load(id) }
            writer.send("step")
            let line = try await writer.nextLine(timeout: 60) { $0.hasPrefix("step \(step) ") }
            let generation = UInt64(line.split(separator: " ")[2])!
            let context = "step \(step), generation \(generation)"
            // Followed by polling: wait until this process is at the step's generation.
            #expect(
                await eventually { reader.store.generation >= generation }, "\(context)")
            let view = try reader.store.read()
            #expect(view.generation == generation, "\(context): the reader is at \(view.generation)")
            if try view.changes().isChangedWholesale(recordsTree) { wholesale.append(generation) }

            let (truth, expectedBorn, expectedIDs) = try await fresh()
            for id in 0..<80 { #expect(try await authors.load(id) == truth[id], "\(context): author \(id)") }
            #expect(
                try await authors.load(...).collect() == truth.values.sorted { $0.id < $1.id }, "\(context): load")
            #expect(await eventually { model.authors.withLock { $0 } == truth }, "\(context): events")
            #expect(await eventually { born.withLock { $0 } == expectedBorn }, "\(context): live query by born")
            #expect(await eventually { ids.withLock { $0 } == expectedIDs }, "\(context): live query by id")
            if let author = truth[3] {
                #expect(await eventually { watched.withLock { $0 } == author }, "\(context): instance")
            }
        }
        #expect(wholesale.count == 6, "large steps were not recorded wholesale: \(wholesale)")
        #expect(model.reloads.withLock { $0 } == wholesale)

        // Replay: a stream resumed from before the steps, read back from the other
        // process's commit pages, gets a reload naming each commit recorded wholesale.
        let resumed = try await authors.observe(after: beforeSteps, bufferLimit: 100_000)
        let expectedCount = wholesale.count
        let collector = Task {
            var reloads: [UInt64] = []
            for await event in resumed {
                if case .reload(let token) = event { reloads.append(token.generation) }
                if reloads.count == expectedCount { break }
            }
            return reloads
        }
        let timeout = hangWatchdog { collector.cancel() }
        #expect(await collector.value == wholesale, "replayed reloads")
        timeout.cancel()
        writer.closeInput()
        #expect(try await writer.waitUntilExit() == 0, "\(writer.errorOutput.suffix(400))")
        #expect(reader.verify().isClean)
    }
}
