import Testing
import Foundation
import Folio

/// A migration that changes an indexed value: an old record lists the index values the old
/// release computed until it is rewritten. The guide's remedies (section 7): the index's
/// version raised in the same release rebuilds it before the first read, and `migrateAndReindex()`
/// rewrites the old records with their current values.
@Suite struct MigratedIndexValueTests {
    struct Part: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var code: String
    }

    struct Release1: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "parts"
        static let currentVersion = Version.one
        typealias Instance = Part
        let code = Index(\Part.code)
    }

    /// Version 2 renames one part's code as it converts it: too few records for the sample
    /// of stale indexes to find reliably.
    static func convert(_ version: Int, _ data: ArraySlice<UInt8>, _ decoder: FolioJSONDecoder) throws -> Part {
        var part = try decoder.decode(Part.self, from: data)
        if version == 1, part.id == renamed { part.code = "renamed" }
        return part
    }

    static let renamed = 500

    struct Release2: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1, two }
        static let key = "parts"
        static let currentVersion = Version.two
        typealias Instance = Part
        let code = Index(\Part.code)
        static func decode(
            _ version: Version, from data: ArraySlice<UInt8>, using decoder: FolioJSONDecoder
        ) throws -> Part {
            try MigratedIndexValueTests.convert(version.rawValue, data, decoder)
        }
    }

    /// Release 2 with the index's version raised, as the guide says to.
    struct Release2Versioned: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1, two }
        static let key = "parts"
        static let currentVersion = Version.two
        typealias Instance = Part
        let code = Index(\Part.code, version: 2)
        static func decode(
            _ version: Version, from data: ArraySlice<UInt8>, using decoder: FolioJSONDecoder
        ) throws -> Part {
            try MigratedIndexValueTests.convert(version.rawValue, data, decoder)
        }
    }

    static let options = PersistenceOptions(autoCompaction: nil, log: { _ in })

    static func release1Store() async throws -> String {
        let path = FileManager.default.temporaryDirectory.path + "/migrated-\(UUID().uuidString)"
        let persistence = try Persistence(at: path, options: options)
        defer { persistence.close() }
        let parts = persistence.datastore(for: Release1.self)
        try await persistence.perform {
            for id in 0..<1_000 { try await parts.persist(Part(id: id, code: "p\(id)")) }
        }
        return path
    }

    @Test func aRaisedIndexVersionIndexesTheMigratedValueAtOnce() async throws {
        let path = try await Self.release1Store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let persistence = try Persistence(at: path, options: Self.options)
        defer { persistence.close() }
        let parts = persistence.datastore(for: Release2Versioned.self)
        #expect(try await parts.load("renamed", from: \.code).collect().map(\.id) == [Self.renamed])
        #expect(try await parts.load("p\(Self.renamed)", from: \.code).collect().isEmpty)
        #expect(try await parts.fetch(where: #Predicate { $0.code == "renamed" }).collect().map(\.id) == [Self.renamed])
    }

    @Test func migrateAndReindexRewritesTheMigratedValue() async throws {
        let path = try await Self.release1Store()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let persistence = try Persistence(at: path, options: Self.options)
        defer { persistence.close() }
        let parts = persistence.datastore(for: Release2.self)
        try await parts.migrateAndReindex()
        #expect(try await parts.load("renamed", from: \.code).collect().map(\.id) == [Self.renamed])
        #expect(try await parts.load("p\(Self.renamed)", from: \.code).collect().isEmpty)
        #expect(try await parts.fetch(where: #Predicate { $0.code == "renamed" }).collect().map(\.id) == [Self.renamed])
    }
}
