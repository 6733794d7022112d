import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage

/// A computed key path is known to the catalog by its type only, so a changed body keeps the
/// index's fingerprint. Preparation recomputes the declared index values of a bounded sample
/// of records and compares them with the values their headers list; a difference rebuilds
/// the index. When nothing changed, it reads the sample and writes nothing.
@Suite struct StaleIndexDetectionTests {
    struct Card: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var name: String
        var upper: String { name.uppercased() }
        var lower: String { name.lowercased() }
    }

    struct Release1: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "cards"
        static let currentVersion = Version.one
        typealias Instance = Card
        let byName = Index(\Card.upper)
    }

    /// The same index, its computed key path's body changed, its version not raised.
    struct Release2: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "cards"
        static let currentVersion = Version.one
        typealias Instance = Card
        let byName = Index(\Card.lower)
    }

    static let options = PersistenceOptions(autoCompaction: nil, log: { _ in })

    static func store(_ count: Int) async throws -> String {
        let path = FileManager.default.temporaryDirectory.path + "/stale-\(UUID().uuidString)"
        let persistence = try Persistence(at: path, options: options)
        let cards = persistence.datastore(for: Release1.self)
        try await persistence.perform {
            for id in 0..<count { try await cards.persist(Card(id: id, name: id % 2 == 0 ? "Ann" : "Bob \(id)")) }
        }
        #expect(try await cards.load("ANN", from: \.byName).collect().count == (count + 1) / 2)
        persistence.close()
        return path
    }

    @Test func aChangedComputedKeyPathRebuildsItsIndex() async throws {
        let path = try await Self.store(3_000)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let persistence = try Persistence(at: path, options: Self.options)
        defer { persistence.close() }
        let cards = persistence.datastore(for: Release2.self)
        #expect(try await cards.load("ann", from: \.byName).collect().count == 1_500)
        #expect(try await cards.load("ANN", from: \.byName).collect().isEmpty)
        #expect(try await cards.fetch(where: #Predicate { $0.lower == "ann" }).collect().count == 1_500)
        expectSound(persistence)
    }

    /// Inside a transaction, and for `migrateAndReindex`, the check runs as for any first use.
    @Test func theCheckRunsInsideATransactionAndInMigrateAndReindex() async throws {
        for explicit in [false, true] {
            let path = try await Self.store(40)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let persistence = try Persistence(at: path, options: Self.options)
            let cards = persistence.datastore(for: Release2.self)
            if explicit {
                try await cards.migrateAndReindex()
                #expect(try await cards.count("ann", from: \.byName) == 20)
            } else {
                try await persistence.perform { () throws in #expect(try await cards.count("ann", from: \.byName) == 20)
                }
            }
            persistence.close()
        }
    }

    /// A read-only helper never reads an index its sample finds stale: it is not built, as
    /// far as the helper can tell, and queries evaluate the records instead.
    @Test func aReadOnlyHelperDoesNotReadAStaleIndex() async throws {
        let path = try await Self.store(40)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let helper = try Persistence(readingFrom: path, options: Self.options)
        defer { helper.close() }
        let cards = helper.datastore(for: Release2.self)
        await #expect(throws: FolioError.indexNotBuilt(datastore: "cards", index: "byName")) {
            _ = try await cards.load("ann", from: \.byName).collect()
        }
        #expect(try await cards.fetch(where: #Predicate { $0.lower == "ann" }).collect().count == 20)
    }

    /// An unchanged declaration: a sample of at most 16 records is read once per process, and
    /// nothing is committed.
    @Test func anUnchangedDeclarationReadsASampleAndCommitsNothing() async throws {
        let path = try await Self.store(5_000)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let persistence = try Persistence(at: path, options: Self.options)
        defer { persistence.close() }
        let generation = persistence.store.generation
        let cards = persistence.datastore(for: Release1.self)
        let counter = Preparation.SampleCounter()
        try await Preparation.$sampledRecords.withValue(counter) {
            #expect(try await cards.load("ANN", from: \.byName).collect().count == 2_500)
            #expect(try await cards.count() == 5_000)
            _ = try await cards.load(7)
        }
        let sampled = counter.records.withLock { $0 }
        #expect(sampled > 8 && sampled <= 16, "first, last and spread records: \(sampled)")
        #expect(persistence.store.generation == generation, "nothing written")
    }

    /// A record whose header is malformed says nothing in the sample: one bad record among
    /// those sampled must not make every read and write of the datastore fail, in the
    /// writer or in a read-only helper.
    @Test func aMalformedRecordInTheSampleIsPassedOver() async throws {
        let path = try await Self.store(40)
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let persistence = try Persistence(at: path, options: Self.options)
            // Below every other identifier, so it is among the first records sampled.
            try persistence.store.write { txn in
                _ = try txn.put([0xEE], for: KeyEncoding.encode(-1), in: "records/cards")
            }
            persistence.close()
        }
        let helper = try Persistence(readingFrom: path, options: Self.options)
        #expect(try await helper.datastore(for: Release1.self).load("ANN", from: \.byName).collect().count == 20)
        helper.close()
        let persistence = try Persistence(at: path, options: Self.options)
        defer { persistence.close() }
        let cards = persistence.datastore(for: Release1.self)
        #expect(try await cards.load("ANN", from: \.byName).collect().count == 20)
        try await cards.persist(Card(id: 100, name: "Ann"))
        #expect(try await cards.count("ANN", from: \.byName) == 21)
    }

    /// A rebuild caused by the sample says so in the persistence's log, once, naming the
    /// datastore, the index and a record with its stored and recomputed values: an index
    /// whose values are not a function of the record is rebuilt at every launch, and this
    /// line is how its author finds out.
    @Test func aRebuildForChangedValuesIsLogged() async throws {
        let path = try await Self.store(40)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let lines = Mutex<[String]>([])
        let options = PersistenceOptions(autoCompaction: nil, log: { line in lines.withLock { $0.append(line) } })
        let persistence = try Persistence(at: path, options: options)
        defer { persistence.close() }
        let cards = persistence.datastore(for: Release2.self)
        #expect(try await cards.count("ann", from: \.byName) == 20)
        let logged = lines.withLock { $0 }
        try #require(logged.count == 1, "\(logged)")
        let line = logged[0]
        for part in ["cards", "byName", "record 0", "\"ANN\"", "\"ann\"", "every launch"] {
            #expect(line.contains(part), "\(part) in: \(line)")
        }
    }

    /// One preparation reads the sample once, however many of its steps need the verdict
    /// (the check whether anything is to do, the work `migrateAndReindex` reports, the rebuild).
    @Test func aStaleIndexIsSampledOncePerPreparation() async throws {
        for explicit in [false, true] {
            let path = try await Self.store(40)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let persistence = try Persistence(at: path, options: Self.options)
            defer { persistence.close() }
            let cards = persistence.datastore(for: Release2.self)
            let counter = Preparation.SampleCounter()
            try await Preparation.$sampledRecords.withValue(counter) {
                if explicit { try await cards.migrateAndReindex() }
                #expect(try await cards.count("ann", from: \.byName) == 20)
            }
            let sampled = counter.records.withLock { $0 }
            #expect(sampled > 8 && sampled <= 16, "migrateAndReindex \(explicit): \(sampled) records sampled")
        }
    }
}
