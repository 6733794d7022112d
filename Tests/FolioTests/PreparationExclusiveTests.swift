import Testing
import Foundation
import Synchronization
@testable import Folio

/// Two concurrent first uses of a datastore that needs preparing (an index to build over
/// records of an older version, decoded through the migration) should run the preparation,
/// and the migration of every record, once, and neither caller should see an error: the
/// first holds the datastore's preparation until it ends, and the second waits for it, then
/// reads it (`PreparationHolds`). Counted, never timed; deadlines only turn a hang into a
/// failure. (The step-by-step version of this race is `PreparationTimelineTests`.)
@Suite struct PreparationExclusiveTests {
    struct Part: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var code: String
    }

    struct Release1: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "parts"
        static let currentVersion = Version.one
        typealias Instance = Part
    }

    /// Version 2 adds an index; its build decodes every version-1 record through `decode`.
    struct Release2: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1, two }
        static let key = "parts"
        static let currentVersion = Version.two
        typealias Instance = Part
        let code = Index(\Part.code)
        static func decode(
            _ version: Version, from data: ArraySlice<UInt8>, using decoder: FolioJSONDecoder
        ) throws -> Part {
            if version == .one { PreparationExclusiveTests.migrations.add(1, ordering: .relaxed) }
            return try decoder.decode(Part.self, from: data)
        }
    }

    /// Version-1 records migrated (only this suite declares `Release2`).
    static let migrations = Atomic<Int>(0)
    static let records = 300

    @Test
    func twoConcurrentFirstUsesMigrateOnceAndNeitherFails() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/prepare-exclusive-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let options = PersistenceOptions(autoCompaction: nil, log: { _ in })
        do {
            let persistence = try Persistence(at: path, options: options)
            defer { persistence.close() }
            let parts = persistence.datastore(for: Release1.self)
            try await persistence.perform {
                for id in 0..<Self.records { try await parts.persist(Part(id: id, code: "p\(id % 7)")) }
            }
        }
        let persistence = try Persistence(at: path, options: options)
        defer { persistence.close() }
        let parts = persistence.datastore(for: Release2.self)
        let meeting = KeyValueConcurrentTransactionTests.Meeting()
        let counter = Preparation.StepCounter()
        let before = Self.migrations.load(ordering: .relaxed)
        try await Preparation.$stepRuns.withValue(counter) {
            // Each body waits until both have begun, then uses the datastore first.
            @Sendable func firstUse(_ id: Int) async throws {
                try await persistence.perform {
                    await meeting.meet("\(id)")
                    try await parts.persist(Part(id: id, code: "new"))
                }
            }
            async let first: Void = firstUse(10_000)
            async let second: Void = firstUse(10_001)
            try await first
            try await second
        }
        let migrated = Self.migrations.load(ordering: .relaxed) - before
        #expect(counter.runs.withLock { $0 } == 1, "the preparation ran once")
        #expect(migrated >= Self.records && migrated < 2 * Self.records, "migrated \(migrated)")
        #expect(try await parts.count() == Self.records + 2)
        #expect(try await parts.count("new", from: \.code) == 2)
        #expect(try await parts.count("p3", from: \.code) == Self.records / 7 + (Self.records % 7 > 3 ? 1 : 0))
    }
}
