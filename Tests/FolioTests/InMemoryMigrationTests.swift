import Testing
import Folio

/// An in-memory persistence behaves as one on disk across launches: `reopened()` is the
/// next launch, so a test can write with one release's formats and read with the next's.
@Suite struct InMemoryMigrationTests {
    @Test func aReleaseMigratesWhatThePreviousOneWroteInMemory() async throws {
        let first = Persistence.inMemory()
        let v1 = first.datastore(for: People.Release1.self)
        try await first.perform {
            for id in 0..<50 { try await v1.persist(People.V1(id: id, name: "Ann\(id) Lee\(id % 5)")) }
        }
        // Within one persistence a second declaration of the key with another format is refused...
        await #expect(throws: FolioError.self) { try await first.datastore(for: People.Release2.self).count() }

        // ...the next launch declares it freely and migrates on read.
        let second = try first.reopened()
        defer { second.close() }
        let v2 = second.datastore(for: People.Release2.self)
        #expect(try await v2.count() == 50)
        #expect(try await v2.load(7)?.first == "Ann7")
        #expect(try await v2.load(7)?.last == "Lee2")
        #expect(try await v2.load("Lee3", from: \.last).collect().count == 10, "the new index is built")
        // The first persistence is closed: its store is the second's now.
        await #expect(throws: FolioError.self) { try await v1.count() }
        expectSound(second)
    }
}
