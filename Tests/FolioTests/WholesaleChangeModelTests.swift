import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport

/// Commits that change more records than a commit lists (`changeRecordKeyLimit`, 20 here)
/// record the datastore as changed wholesale. Seeded steps alternate small transactions
/// (listed changes) and large ones (wholesale), and after each one every consumer must
/// agree with a fresh read: live queries over index and identifier ranges, an event stream
/// applied to a model (changes applied, a reload re-reads), an instance observer, and the
/// record cache (every record loaded before the step is loaded again). A stream resumed
/// from a token before a wholesale commit (replay) gets a reload for it.
@Suite struct WholesaleChangeModelTests {
    /// What the event stream's consumer has built from the events so far.
    final class EventModel: Sendable {
        let authors = Mutex<[Int: Author]>([:])
        let reloads = Mutex<[UInt64]>([])
    }

    @Test(arguments: [1, 2] as [UInt64])
    func consumersAgreeWithFreshReadsAcrossWholesaleChanges(seed: UInt64) async throws {
        var options = PersistenceOptions()
        options.changeRecordKeyLimit = 20
        let persistence = Persistence.inMemory(options: options)
        defer { persistence.close() }
        let authors = persistence.datastore(for: AuthorFormat.self)
        var random = SplitMix64(seed: seed)
        try await persistence.perform {
            for id in 0..<10 { try await authors.persist(Author(id: id, name: "a\(id)", born: 1900 + id)) }
        }

        let model = EventModel()
        model.authors.withLock { state in
            for id in 0..<10 { state[id] = Author(id: id, name: "a\(id)", born: 1900 + id) }
        }
        let events = try await authors.observe(bufferLimit: 100_000)
        let eventTask = Task {
            for await event in events {
                switch event {
                case .change(let change):
                    model.authors.withLock { $0[change.identifier] = change.newValue }
                case .reload(let token):
                    model.reloads.withLock { $0.append(token.generation) }
                    let fresh = try await authors.load(...).collect()
                    model.authors.withLock { state in
                        state = Dictionary(uniqueKeysWithValues: fresh.map { ($0.id, $0) })
                    }
                case .failure(let error, _):
                    Issue.record("event failure: \(error)")
                }
            }
        }
        let watched = Mutex<Author?>(nil)
        let instance = try await authors.observe(3, bufferLimit: 10_000)
        let instanceTask = Task {
            for await event in instance {
                if case .value(let author) = event { watched.withLock { $0 = author } }
            }
        }
        let born = Mutex<[Author]?>(nil), ids = Mutex<[Author]?>(nil)
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

        var truth = Dictionary(
            uniqueKeysWithValues: (0..<10).map { ($0, Author(id: $0, name: "a\($0)", born: 1900 + $0)) })
        let beforeWholesale = persistence.currentToken
        var wholesaleGenerations: [UInt64] = []
        for step in 0..<12 {
            // Fill the record cache with every record, so a stale entry would be served.
            for id in 0..<80 { _ = try await authors.load(id) }
            let large = step % 2 == 1
            let operations = large ? 30 + Int(random.next() % 30) : 1 + Int(random.next() % 5)
            var plan: [(id: Int, born: Int?)] = []
            for _ in 0..<operations {
                let id = Int(random.next() % 80)
                let born: Int? = random.next() % 5 == 0 ? nil : 1900 + Int(random.next() % 50)
                plan.append((id, born))
            }
            // Always change author 3 in a large step, so the instance observer must follow.
            if large { plan.append((3, 1900 + step)) }
            try await persistence.perform {
                for (id, born) in plan {
                    if let born {
                        try await authors.persist(Author(id: id, name: "a\(id)-\(step)", born: born))
                    } else {
                        try await authors.deleteIfPresent(id)
                    }
                }
            }
            for (id, born) in plan { truth[id] = born.map { Author(id: id, name: "a\(id)-\(step)", born: $0) } }
            let generation = persistence.currentToken.generation
            let changes = try persistence.store.read().changes()
            if changes.isChangedWholesale(DatastoreLayout.recordsTree(AuthorFormat.key)) {
                wholesaleGenerations.append(generation)
            }
            let freshByID = truth
            #expect(try await authors.load(...).collect() == freshByID.values.sorted { $0.id < $1.id })
            // The record cache: every load equals the model (a stale entry would not).
            for id in 0..<80 {
                #expect(try await authors.load(id) == freshByID[id], "seed \(seed), step \(step): author \(id)")
            }
            let expectedBorn = try await authors.load(1910..<1940, from: \.born).collect()
            let expectedIDs = try await authors.load(5..<60).collect()
            #expect(await eventually { born.withLock { $0 } == expectedBorn }, "seed \(seed), step \(step): born")
            #expect(await eventually { ids.withLock { $0 } == expectedIDs }, "seed \(seed), step \(step): ids")
            #expect(
                await eventually { model.authors.withLock { $0 } == freshByID }, "seed \(seed), step \(step): events")
            if let author = freshByID[3] {
                #expect(await eventually { watched.withLock { $0 } == author }, "seed \(seed), step \(step): instance")
            }
        }
        #expect(wholesaleGenerations.count >= 5, "large steps were not recorded wholesale: \(wholesaleGenerations)")
        #expect(model.reloads.withLock { $0 } == wholesaleGenerations)

        // Replay: a stream resumed from before the first wholesale commit gets a reload
        // naming it (and each later one), not silence.
        let resumed = try await authors.observe(after: beforeWholesale, bufferLimit: 100_000)
        let expectedCount = wholesaleGenerations.count
        let collector = Task {
            var reloads: [UInt64] = []
            for await event in resumed {
                if case .reload(let token) = event { reloads.append(token.generation) }
                if reloads.count == expectedCount { break }
            }
            return reloads
        }
        let timeout = hangWatchdog { collector.cancel() }
        #expect(await collector.value == wholesaleGenerations)
        timeout.cancel()
    }
}
