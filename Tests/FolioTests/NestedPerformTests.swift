import Foundation
import Testing
@_spi(Engine) import Folio
import FolioStorage

/// Nested `perform`s and what their rollback may undo: never a sibling task's writes.
@Suite struct NestedPerformTests {
    struct Boom: Error {}

    /// A child task's nested `perform` fails after a sibling task wrote (and its own nested
    /// `perform` returned). Rolling back would silently discard the sibling's writes: instead
    /// the transaction is aborted, and nothing is committed.
    @Test func aNestedRollbackOvertakenByASiblingAbortsTheTransaction() async throws {
        let persistence = Persistence.inMemory()
        let books = persistence.datastore(for: BookFormat.self)
        try await books.persist(makeBook(0))  // prepared before
        let (aStarted, aStartedGo) = AsyncStream.makeStream(of: Void.self)
        let (bDone, bDoneGo) = AsyncStream.makeStream(of: Void.self)
        let kept = makeBook(2)
        let generation = persistence.store.generation
        await #expect(
            throws: FolioError.storage(
                .transactionAborted(
                    cause:
                        "a nested perform failed after another task wrote in the same transaction: its writes could not be undone without undoing that task's"
                ))
        ) {
            try await persistence.perform {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        do {
                            try await persistence.perform {
                                aStartedGo.yield()
                                for await _ in bDone { break }
                                throw Boom()
                            }
                        } catch is Boom {}
                    }
                    group.addTask {
                        for await _ in aStarted { break }
                        try await persistence.perform { try await books.persist(kept) }
                        bDoneGo.yield()
                    }
                    try await group.waitForAll()
                }
            }
        }
        #expect(persistence.store.generation == generation, "nothing committed")
        #expect(try await books.load(kept.id) == nil)
        #expect(try await books.count() == 1)
        // Without a sibling writing meanwhile, the same rollback undoes only its own writes.
        try await persistence.perform {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        try await persistence.perform {
                            try await books.persist(makeBook(3)); throw Boom()
                        }
                    } catch is Boom {}
                }
                try await group.waitForAll()
            }
            try await books.persist(kept)
        }
        #expect(try await books.load(kept.id) != nil)
        #expect(try await books.load(makeBook(3).id) == nil)
        expectSound(persistence)
    }

    /// The first use of a datastore inside a nested `perform` that throws: the preparation
    /// (catalog entry, index trees) is rolled back with the savepoint, so the datastore must
    /// not count as prepared (marking it ready would leave it with no catalog entry, and
    /// verify would find index trees that belong to no datastore).
    @Test func preparationRolledBackBySavepointIsNotMarkedReady() async throws {
        let persistence = Persistence.inMemory()
        let books = persistence.datastore(for: BookFormat.self)
        try await persistence.perform {
            do {
                try await persistence.perform {
                    try await books.persist(makeBook(1))
                    throw Boom()
                }
            } catch is Boom {}
        }
        try await books.persist(makeBook(2))
        expectSound(persistence)
    }
}
