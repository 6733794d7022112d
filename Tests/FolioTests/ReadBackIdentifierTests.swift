import Testing
import Foundation
import Folio

/// A record is stored under its identifier, and found by it: a write whose record would read
/// back with another identifier is refused, whether or not the datastore has indexes. An
/// identifier type whose keys are exact (`String`, `UUID`...) says nothing about the record's
/// `Codable` conformance, which can normalise the identifier or leave it out.
@Suite struct ReadBackIdentifierTests {
    /// A conformance that lower-cases the identifier it decodes.
    struct Handle: Codable, Identifiable, Sendable, Equatable {
        var id: String
        var name: String
        init(id: String, name: String) {
            self.id = id
            self.name = name
        }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id).lowercased()
            name = try container.decode(String.self, forKey: .name)
        }
    }

    /// No index: nothing but the identifier depends on what reads back.
    struct Handles: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "handles"
        static let currentVersion = Version.one
        typealias Instance = Handle
    }

    /// The common mistake: an identifier the coding keys leave out, so every read makes a
    /// new one.
    struct Note: Codable, Identifiable, Sendable {
        var id = UUID()
        var text: String
        enum CodingKeys: String, CodingKey { case text }
    }

    struct Notes: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "notes"
        static let currentVersion = Version.one
        typealias Instance = Note
    }

    static func refusedForItsIdentifier(_ datastore: String) -> (any Error) -> Bool {
        { error in
            guard case FolioError.encodingFailed(let name, _, let reason) = error else { return false }
            return name == datastore && reason.contains("identifier")
        }
    }

    @Test func aNormalisedIdentifierIsRefusedWithoutIndexes() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let handles = persistence.datastore(for: Handles.self)
        try await handles.persist(Handle(id: "abc", name: "reads back as written"))
        await #expect {
            try await handles.persist(Handle(id: "ABC", name: "reads back as abc"))
        } throws: { error in Self.refusedForItsIdentifier("handles")(error) }
        #expect(try await handles.count() == 1)
        #expect(try await handles.load("abc")?.name == "reads back as written", "the refused write changed nothing")
        #expect(try await handles.load("ABC") == nil)
        #expect(try await handles.fetch(where: #Predicate { $0.id == "ABC" }).collect().isEmpty)
        #expect(
            try await handles.fetch(where: #Predicate { $0.id == "abc" }).collect().map(\.name) == [
                "reads back as written"
            ])
    }

    @Test func anIdentifierTheCodingKeysLeaveOutIsRefused() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let notes = persistence.datastore(for: Notes.self)
        let note = Note(text: "lost its identifier")
        await #expect {
            try await notes.persist(note)
        } throws: { error in Self.refusedForItsIdentifier("notes")(error) }
        #expect(try await notes.count() == 0)
        #expect(try await notes.load(note.id) == nil)
    }
}
