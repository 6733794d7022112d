import Testing
import Foundation
import Synchronization
@testable import Folio
import FolioTestSupport

/// The record cache never changes what a read returns: a model test of point reads, index
/// reads, queries and scans across committed and rolled-back transactions, snapshots held
/// across commits, reads inside `perform`, observers and a read-only persistence, with a
/// cache small enough to evict all the time. Every read is compared with a model of what
/// its snapshot holds.
@Suite struct RecordCacheModelTests {
    struct Item: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var group: Int
        var version: Int
    }

    struct ItemFormat: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "cached"
        static let currentVersion = Version.one
        typealias Instance = Item
        let group = Index(\Item.group)
    }

    struct Rollback: Error {}

    @Test(arguments: [(1, 24), (2, 1_000)]) func readsEqualTheModelWhateverTheCacheHolds(
        seed: UInt64, capacity: Int
    ) async throws {
        let options = PersistenceOptions(
            durability: seed % 2 == 0 ? .grouped(window: .milliseconds(1)) : .full, autoCompaction: nil,
            log: { _ in }, recordCache: RecordCacheLimits(count: capacity))
        let persistence = Persistence.inMemory(options: options)
        let items = persistence.datastore(for: ItemFormat.self)
        let readOnly = persistence.readOnly().datastore(for: ItemFormat.self)
        var rng = SplitMix64(seed: seed)
        var model: [Int: Item] = [:]
        var version = 0
        let ids = 0..<60

        for step in 0..<120 {
            switch rng.next() % 6 {
            case 0, 1:  // A committed transaction of a few changes.
                var next = model
                try await persistence.perform {
                    for _ in 0..<Int(1 + rng.next() % 4) {
                        let id = ids.randomElement(using: &rng)!
                        if rng.next() % 4 == 0, next[id] != nil {
                            try await items.delete(id)
                            next[id] = nil
                        } else {
                            version += 1
                            let item = Item(id: id, group: Int(rng.next() % 4), version: version)
                            try await items.persist(item)
                            next[id] = item
                        }
                        // Reads inside the transaction see its own writes, never the cache's.
                        #expect(try await items.load(id) == next[id], "read of its own write in perform")
                    }
                }
                model = next
            case 2:  // A rolled-back transaction changes nothing anyone reads afterwards.
                let id = ids.randomElement(using: &rng)!
                await #expect(throws: Rollback.self) {
                    try await persistence.perform {
                        try await items.persist(Item(id: id, group: 9, version: -1))
                        #expect(try await items.load(id)?.version == -1)
                        throw Rollback()
                    }
                }
            case 3:  // A snapshot held across a commit sees its own generation only.
                let before = model
                let id = ids.randomElement(using: &rng)!
                version += 1
                let changed = Item(id: id, group: Int(rng.next() % 4), version: version)
                try await persistence.read {
                    #expect(try await items.load(id) == before[id])
                    // Committed outside the snapshot (a write inside read { } is refused).
                    _ = try await Task.detached { try await items.persist(changed) }.value
                    #expect(try await items.load(id) == before[id], "a snapshot read must not see a later commit")
                    try await Self.check(items, ids: ids, against: before, &rng)
                }
                model[id] = changed
            default:
                break
            }
            try await Self.check(items, ids: ids, against: model, &rng)
            if step % 10 == 0 { try await Self.check(readOnly, ids: ids, against: model, &rng) }
        }
        let statistics = try #require(persistence.core.records?.statistics)
        #expect(statistics.hits > 0, "the model test should exercise hits, not only misses")
        persistence.close()
    }

    /// Point reads, point queries, an index read and a full scan, each against `model`.
    static func check<Access: AccessMode>(
        _ datastore: Datastore<ItemFormat, Access>, ids: Range<Int>, against model: [Int: Item],
        _ rng: inout SplitMix64
    ) async throws {
        for _ in 0..<20 {
            let id = Int(rng.next() % UInt64(ids.count + 5))
            #expect(try await datastore.load(id) == model[id], "load(\(id))")
            #expect(try await datastore.first(where: #Predicate { $0.id == id }) == model[id], "point query \(id)")
        }
        let group = Int(rng.next() % 4)
        #expect(
            try await datastore.load(group, from: \.group).collect()
                == model.values.filter { $0.group == group }.sorted { $0.id < $1.id })
        #expect(try await datastore.load(...).collect() == model.values.sorted { $0.id < $1.id })
    }

    @Test func anObserverOfAnInstanceSeesEachNewValueNotACachedOne() async throws {
        let persistence = Persistence.inMemory(options: PersistenceOptions(log: { _ in }))
        let items = persistence.datastore(for: ItemFormat.self)
        try await items.persist(Item(id: 1, group: 0, version: 0))
        #expect(try await items.load(1)?.version == 0)  // cached
        let values = try await items.observe(1)
        var iterator = values.makeAsyncIterator()
        func next() async -> Int? {
            guard case .value(let item)? = await iterator.next() else { return nil }
            return item.version
        }
        #expect(await next() == 0)
        for version in 1...5 {
            try await items.persist(Item(id: 1, group: 0, version: version))
            #expect(try await items.load(1)?.version == version)
            #expect(await next() == version)
        }
    }

    @Test func turnedOffThereIsNoCache() async throws {
        let persistence = Persistence.inMemory(options: PersistenceOptions(log: { _ in }, recordCache: nil))
        let items = persistence.datastore(for: ItemFormat.self)
        try await items.persist(Item(id: 1, group: 0, version: 0))
        #expect(try await items.load(1)?.version == 0)
        #expect(persistence.core.records == nil)
    }

    @Test func aPersistenceOverTheSameFilesNeverServesAValueItsSnapshotDoesNotHold() async throws {
        // Two persistences over one directory in one process: the writer's commits are
        // another store object's to the reader, as another process's would be.
        let path = FileManager.default.temporaryDirectory.path + "/cache-xstore-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try Persistence(at: path, options: PersistenceOptions(log: { _ in }))
        let written = writer.datastore(for: ItemFormat.self)
        try await written.persist(Item(id: 1, group: 0, version: 0))
        // What the reader's follower logs (a catch-up that failed says why here).
        let readerLog = Mutex<[String]>([])
        let reader = try Persistence(
            readingFrom: path, options: PersistenceOptions(log: { line in readerLog.withLock { $0.append(line) } }))
        let read = reader.datastore(for: ItemFormat.self)
        #expect(try await read.load(1)?.version == 0)
        #expect(try await read.load(1)?.version == 0)  // now from the cache
        for version in 1...20 {
            try await written.persist(Item(id: 1, group: 0, version: version))
            // The reader moves to the new generation by itself (it follows the directory);
            // once it has, it must never return the cached older value again.
            var seen = -1
            var guardian = HangGuard()
            while true {
                let loaded = try #require(try await read.load(1)).version
                #expect(loaded >= seen, "a read went back from version \(seen) to \(loaded)")
                seen = loaded
                if seen == version || guardian.expired() { break }
                try await Task.sleep(for: .milliseconds(1))
            }
            #expect(
                seen == version,
                """
                the reader never saw version \(version): it saw \(seen) at generation \(reader.core.store.generation), \
                the writer is at \(writer.core.store.generation); the reader's log ends \(readerLog.withLock { $0.suffix(5) })
                """)
            #expect(try await read.load(1)?.version == version)
        }
        reader.close()
        writer.close()
    }

    /// Instances of class type are never cached: every read returns a fresh object, so a
    /// caller that changes one does not change what later reads return.
    final class Note: Codable, Identifiable, @unchecked Sendable {
        var id: Int
        var text: String
        init(id: Int, text: String) {
            self.id = id
            self.text = text
        }
    }

    struct NoteFormat: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "notes"
        static let currentVersion = Version.one
        typealias Instance = Note
    }

    @Test func classInstancesAreNeverShared() async throws {
        let persistence = Persistence.inMemory()
        let notes = persistence.datastore(for: NoteFormat.self)
        try await notes.persist(Note(id: 1, text: "stored"))
        let first = try #require(try await notes.load(1))
        first.text = "changed by a reader"
        let second = try #require(try await notes.load(1))
        #expect(first !== second)
        #expect(second.text == "stored")
    }
}
