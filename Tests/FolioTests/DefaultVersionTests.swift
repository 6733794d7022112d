import Testing
import Foundation
@_spi(Engine) import Folio

/// A format that declares no versions has one, `DefaultVersion.v1`, stored as "1": it
/// compiles without a `Version` enum or `currentVersion`, stores and loads (on disk, across
/// a reopen, through an index), and a later release that declares versions reads those
/// records as its version 1 and converts them.
@Suite struct DefaultVersionTests {
    struct Note: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var text: String
    }

    /// Release 1: no versions declared.
    struct NoteFormat: DatastoreFormat {
        static let key = "notes"
        typealias Instance = Note
        let text = Index(\Note.text)
    }

    struct NoteV2: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var text: String
        var pinned: Bool
    }

    /// Release 2: the shape changed, so it declares versions, keeping 1 for the old records.
    struct NoteFormatV2: DatastoreFormat {
        enum Version: Int, CaseIterable { case v1 = 1, v2 }
        static let key = "notes"
        static let currentVersion = Version.v2
        typealias Instance = NoteV2
        let text = Index(\NoteV2.text)

        static func decode(
            _ version: Version, from data: ArraySlice<UInt8>, using decoder: FolioJSONDecoder
        ) throws -> NoteV2 {
            switch version {
            case .v1:
                let old = try decoder.decode(Note.self, from: data)
                return NoteV2(id: old.id, text: old.text, pinned: false)
            case .v2: return try decoder.decode(NoteV2.self, from: data)
            }
        }
    }

    @Test func anUnversionedFormatStoresLoadsAndMigratesLater() async throws {
        #expect(NoteFormat.currentVersion == .v1)
        let path = FileManager.default.temporaryDirectory.path + "/default-version-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let persistence = try Persistence(at: path)
            defer { persistence.close() }
            let notes = persistence.datastore(for: NoteFormat.self)
            try await notes.persist(Note(id: 1, text: "milk"))
            try await notes.persist(Note(id: 2, text: "bread"))
            #expect(try await notes.load(1) == Note(id: 1, text: "milk"))
            #expect(try await notes.first(where: #Predicate { $0.text == "bread" })?.id == 2)
            let versions = try StoreInspector(store: persistence.store).versionsPresent(in: "notes")
            #expect(versions == ["1": 2], "records are tagged with the default version's raw value")
        }
        do {
            let persistence = try Persistence(at: path)
            defer { persistence.close() }
            #expect(try await persistence.datastore(for: NoteFormat.self).load(2) == Note(id: 2, text: "bread"))
        }
        let persistence = try Persistence(at: path)
        defer { persistence.close() }
        let notes = persistence.datastore(for: NoteFormatV2.self)
        #expect(try await notes.load(1) == NoteV2(id: 1, text: "milk", pinned: false))
        try await notes.migrateAndReindex()
        let versions = try StoreInspector(store: persistence.store).versionsPresent(in: "notes")
        #expect(versions == ["2": 2])
        #expect(try await notes.load("bread", from: \.text).collect().map(\.id) == [2])
    }
}
