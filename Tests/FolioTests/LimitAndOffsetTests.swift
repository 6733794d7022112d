import Testing
import Foundation
import Folio

/// Limits and offsets come from callers (often from user input): a negative one is a typed
/// error, never a trap, and a sum that does not fit an `Int` saturates.
@Suite struct LimitAndOffsetTests {
    struct Note: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var rank: Int
    }

    struct Notes: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "notes"
        static let currentVersion = Version.one
        typealias Instance = Note
        let rank = Index(\Note.rank)
    }

    static func isInvalid(_ name: String) -> @Sendable (any Error) -> Bool {
        { error in
            guard case FolioError.invalidArgument(let argument, _) = error else { return false }
            return argument == name
        }
    }

    @Test func negativeLimitsAndOffsetsAreTypedErrors() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let notes = persistence.datastore(for: Notes.self)
        try await persistence.perform { for id in 1...5 { try await notes.persist(Note(id: id, rank: 10 - id)) } }
        // Two descriptors: no index gives this order, so the results go through a sort step.
        let byRank = [SortDescriptor(\Note.rank), SortDescriptor(\Note.id)]
        await #expect(performing: { _ = try await notes.fetch(offset: -1).collect() }, throws: Self.isInvalid("offset"))
        await #expect(
            performing: { _ = try await notes.fetch(sortBy: byRank, offset: -1).collect() },
            throws: Self.isInvalid("offset"))
        // A limit of 0 ends the sequence before the query runs: the offset is still checked.
        await #expect(
            performing: { _ = try await notes.fetch(limit: 0, offset: -1).collect() }, throws: Self.isInvalid("offset"))
        await #expect(performing: { _ = try await notes.fetch(limit: -1).collect() }, throws: Self.isInvalid("limit"))
        await #expect(
            performing: { _ = try await notes.fetch(sortBy: byRank, limit: -1).collect() },
            throws: Self.isInvalid("limit"))
        await #expect(performing: { _ = try await notes.explain(limit: -1) }, throws: Self.isInvalid("limit"))
        await #expect(performing: { _ = try await notes.explain(offset: -1) }, throws: Self.isInvalid("offset"))
        await #expect(
            performing: { _ = try await notes.load(..., limit: -1).collect() }, throws: Self.isInvalid("limit"))
        await #expect(
            performing: { _ = try await notes.load(1...3, limit: -1).collect() }, throws: Self.isInvalid("limit"))
        await #expect(
            performing: { _ = try await notes.load(..., from: \.rank, limit: -1).collect() },
            throws: Self.isInvalid("limit"))
        await #expect(
            performing: { _ = try await notes.load(5, from: \.rank, limit: -1).collect() },
            throws: Self.isInvalid("limit"))
        await #expect(performing: { _ = try await notes.liveQuery(..., limit: -1) }, throws: Self.isInvalid("limit"))
        await #expect(
            performing: { _ = try await notes.liveQuery(5, from: \.rank, limit: -1) }, throws: Self.isInvalid("limit"))
        await #expect(
            performing: { _ = try await notes.liveQuery(where: #Predicate { $0.rank > 0 }, limit: -1) },
            throws: Self.isInvalid("limit"))
        #expect(try await notes.count() == 5, "nothing changed")
    }

    @Test func aLimitPlusAnOffsetBeyondIntSaturates() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let notes = persistence.datastore(for: Notes.self)
        try await persistence.perform { for id in 1...5 { try await notes.persist(Note(id: id, rank: 10 - id)) } }
        // Two descriptors: no index gives this order, so the results go through a sort step.
        let byRank = [SortDescriptor(\Note.rank), SortDescriptor(\Note.id)]
        #expect(try await notes.fetch(sortBy: byRank, limit: .max, offset: 1).collect().map(\.id) == [4, 3, 2, 1])
        #expect(try await notes.fetch(sortBy: byRank, limit: 2, offset: .max).collect().isEmpty)
        #expect(try await notes.fetch(limit: .max, offset: 1).collect().map(\.id) == [2, 3, 4, 5])
        #expect(
            try await notes.fetch(where: #Predicate { $0.rank > 6 }, sortBy: byRank, limit: .max, offset: .max)
                .collect().isEmpty)
        #expect(try await notes.fetch(limit: 0).collect().isEmpty)
        #expect(try await notes.load(..., limit: .max).collect().count == 5)
    }
}
