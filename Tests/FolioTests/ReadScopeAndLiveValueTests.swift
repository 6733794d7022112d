import Testing
import Foundation
import Folio

/// Two forms of the API found awkward from the outside: a task started inside `read { }`
/// that outlives it, and a live query on a one-to-one index by the value `load` takes.
@Suite struct ReadScopeAndLiveValueTests {
    /// Timeline: `read { }` starts a `Task { }` and returns; the task then writes. Before,
    /// it inherited the ended snapshot and failed with `writeInReadOnlySnapshot`; now its
    /// write is its own transaction. A write directly inside `read { }` is still refused.
    @Test func aTaskStartedInsideReadWritesOnItsOwnOnceReadReturned() async throws {
        let persistence = Persistence.inMemory()
        let books = persistence.datastore(for: BookFormat.self)
        let gate = AsyncStream<Void>.makeStream()
        let task = try await persistence.read { () -> Task<Book?, any Error> in
            await #expect(throws: FolioError.writeInReadOnlySnapshot) { try await books.persist(makeBook(1)) }
            return Task {
                for await _ in gate.stream { break }  // wait until read { } has returned
                return try await books.persist(makeBook(2))
            }
        }
        gate.continuation.yield()
        #expect(try await task.value == nil)
        #expect(try await books.load(makeBook(2).id) == makeBook(2))
    }

    @Test func liveQueryOnAOneToOneIndexTakesTheValue() async throws {
        let persistence = Persistence.inMemory()
        let books = persistence.datastore(for: BookFormat.self)
        let book = makeBook(3)
        var results = try await books.liveQuery(book.isbn, from: \.isbn).makeAsyncIterator()
        #expect(try await results.next() == [])
        try await books.persist(book)
        #expect(try await results.next() == [book])
        try await books.persist(makeBook(4))  // another value: the results do not change
        try await books.delete(book.id)
        #expect(try await results.next() == [])
    }
}
