import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage

/// Three shapes of one datastore, as three releases of an app would declare it.
enum People {
    struct V1: Codable, Identifiable, Sendable { var id: Int; var name: String }
    struct V2: Codable, Identifiable, Sendable { var id: Int; var first: String; var last: String }
    struct Person: Codable, Identifiable, Sendable, Equatable {
        var id: Int; var first: String; var last: String; var age: Int?
    }

    struct Release1: DatastoreFormat {
        enum Version: String, CaseIterable { case v1 }
        static let key = "people"
        static let currentVersion = Version.v1
        typealias Instance = V1
        let name = Index(\V1.name)
    }

    struct Release2: DatastoreFormat {
        enum Version: String, CaseIterable { case v1, v2 }
        static let key = "people"
        static let currentVersion = Version.v2
        typealias Instance = V2
        // The Foundation form of the hook, as formats written before Folio's own coder have
        // it: still called for records of the older version.
        static func decode(_ version: Version, from data: Data, using decoder: JSONDecoder) throws -> V2 {
            switch version {
            case .v1:
                let old = try decoder.decode(V1.self, from: data)
                let parts = old.name.split(separator: " ", maxSplits: 1).map(String.init)
                return V2(id: old.id, first: parts.first ?? "", last: parts.count > 1 ? parts[1] : "")
            case .v2:
                return try decoder.decode(V2.self, from: data)
            }
        }
        let last = Index(\V2.last)
    }

    struct Release3: DatastoreFormat {
        enum Version: String, CaseIterable { case v1, v2, v3 }
        static let key = "people"
        static let currentVersion = Version.v3
        typealias Instance = Person
        static func decode(
            _ version: Version, from data: ArraySlice<UInt8>, using decoder: FolioJSONDecoder
        ) throws -> Person {
            switch version {
            case .v1, .v2:
                let v2 = try Release2.decode(version == .v1 ? .v1 : .v2, from: data, using: decoder)
                return Person(id: v2.id, first: v2.first, last: v2.last, age: nil)
            case .v3:
                return try decoder.decode(Person.self, from: data)
            }
        }
        let last = Index(\Person.last)
        let age = Index(\Person.age)
    }
}

/// Record counts per stored version, read straight from the store.
func storedVersions(_ persistence: Persistence<some AccessMode>, _ key: String) throws -> [String: Int] {
    // Other processes' commits first, as a read of the persistence adopts them.
    try persistence.store.refresh()
    let view = try persistence.store.read()
    var cursor = try view.cursor(in: DatastoreLayout.recordsTree(key))
    var counts: [String: Int] = [:]
    while let entry = try cursor.next() { counts[StoredRecord.decode(entry.value)!.version, default: 0] += 1 }
    return counts
}

@Suite struct MigrationTests {
    func launch(_ path: String) throws -> Persistence<ReadWrite> {
        try Persistence(at: path, options: PersistenceOptions(autoCompaction: nil, log: { _ in }))
    }

    @Test func threeVersionsMigrateOnReadAndByMigrateAndReindex() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/people-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {  // Release 1 writes v1 records.
            let persistence = try launch(path)
            let people = persistence.datastore(for: People.Release1.self)
            try await persistence.perform {
                for id in 0..<1_500 { try await people.persist(People.V1(id: id, name: "Ann\(id) Lee\(id % 10)")) }
            }
            persistence.close()
        }
        do {  // Release 2 reads them converted, writes some v2 records.
            let persistence = try launch(path)
            let people = persistence.datastore(for: People.Release2.self)
            #expect(try await people.load(7)?.last == "Lee7")
            #expect(try await people.count("Lee3", from: \.last) == 150, "the new index is built on first use")
            try await people.persist(People.V2(id: 5_000, first: "New", last: "Person"))
            #expect(try storedVersions(persistence, "people") == ["v1": 1_500, "v2": 1])
            persistence.close()
        }
        let persistence = try launch(path)
        defer { persistence.close() }
        let people = persistence.datastore(for: People.Release3.self)
        // On read: v1 and v2 records both arrive as the current type.
        #expect(try await people.load(12) == People.Person(id: 12, first: "Ann12", last: "Lee2", age: nil))
        #expect(try await people.load(5_000) == People.Person(id: 5_000, first: "New", last: "Person", age: nil))
        // migrateAndReindex, interrupted after its first batch, then resumed.
        let reports = Mutex<[MigrationProgress]>([])
        let interrupted = Task {
            try await people.migrateAndReindex { progress in
                reports.withLock { $0.append(progress) }
                if case .working = progress { withUnsafeCurrentTask { $0?.cancel() } }
            }
        }
        await #expect(throws: FolioError.cancelled) { try await interrupted.value }
        let midway = try storedVersions(persistence, "people")
        #expect(midway["v3", default: 0] > 0 && midway["v1", default: 0] > 0, "part done, part left: \(midway)")
        #expect(try await people.count() == 1_501)
        #expect(try await people.load(1_499)?.first == "Ann1499", "data stays correct while half migrated")
        let resumed = Mutex<[MigrationProgress]>([])
        try await people.migrateAndReindex { progress in resumed.withLock { $0.append(progress) } }
        let steps = resumed.withLock { $0 }
        #expect(steps.first == .evaluating)
        #expect(steps.last == .complete(total: 1_501 - midway["v3", default: 0]))
        #expect(steps.contains { if case .working = $0 { return true } else { return false } })
        #expect(try storedVersions(persistence, "people") == ["v3": 1_501])
        #expect(try await people.count("Lee3", from: \.last) == 150)
        #expect(try await people.load(nil as Int?, from: \.age).collect().count == 1_501)
        // A second call has nothing to do.
        let again = Mutex<[MigrationProgress]>([])
        try await people.migrateAndReindex { progress in again.withLock { $0.append(progress) } }
        #expect(again.withLock { $0 } == [.evaluating, .complete(total: 0)])
        expectSound(persistence)
    }
}
