import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage

/// A datastore's preparation (its first use: the catalog entry, the indexes) runs one at a
/// time per datastore, in the task of the caller that runs it (`Datastore+Preparation.swift`,
/// an `AsyncGate` per datastore): a concurrent first use waits for its turn, a caller
/// cancelled while it waits throws `FolioError.cancelled`, and a preparer cancelled while it
/// waits for the writer slot leaves the preparation to the next caller in line. The test
/// holds the writer slot, so that the preparation waits for it.
@Suite struct PreparationTurnTests {
    /// Two first uses of a datastore: the first preparing (waiting for the writer slot the
    /// test holds), the second waiting for its turn behind it. Each records how it ended.
    struct Race {
        /// Which tasks have returned.
        final class Ended: Sendable {
            let names = Mutex<Set<String>>([])
        }
        let persistence: Persistence<ReadWrite>
        let authors: Datastore<AuthorFormat, ReadWrite>
        let first: Task<Author?, any Error>
        let second: Task<Author?, any Error>
        let ended = Ended()

        init() async throws {
            persistence = Persistence.inMemory()
            let authors = persistence.datastore(for: AuthorFormat.self)
            self.authors = authors
            try await persistence.writer.acquire()
            let ended = self.ended
            let persistence = persistence
            first = Task {
                defer { _ = ended.names.withLock { $0.insert("first") } }
                return try await authors.load(1)
            }
            let preparing = await KV.eventually { persistence.writer.waitingCount == 1 }
            #expect(preparing, "the first use prepares, waiting for the writer slot")
            let turn = persistence.core.preparationTurn(for: AuthorFormat.key)
            second = Task {
                defer { _ = ended.names.withLock { $0.insert("second") } }
                return try await authors.load(2)
            }
            let waiting = await KV.eventually { turn.waitingCount == 1 }
            #expect(waiting, "the second use waits for the first's preparation")
        }

        func hasEnded(_ name: String) -> Bool { ended.names.withLock { $0.contains(name) } }
    }

    /// The second use, cancelled while the first prepares, throws `cancelled` at once (the
    /// writer slot still held), and the first prepares undisturbed once the slot is free.
    @Test func aUseCancelledWhileAnotherPreparesThrowsCancelled() async throws {
        let race = try await Race()
        defer { race.persistence.close() }
        race.second.cancel()
        let returned = await KV.eventually { race.hasEnded("second") }
        #expect(returned, "the cancelled use returned while the preparation it waited for still ran")
        #expect(!race.hasEnded("first"))
        race.persistence.writer.release()
        await #expect(throws: FolioError.cancelled) { try await race.second.value }
        #expect(try await race.first.value == nil)
        try await race.authors.persist(Author(id: 1, name: "Ann", born: 1970))
        #expect(try await race.authors.load(1)?.name == "Ann")
    }

    /// The first use, cancelled while it waits for the writer slot to prepare, throws
    /// `cancelled`; the second, next in line, takes its turn and prepares the datastore.
    @Test func aPreparerCancelledWhileItWaitsLeavesThePreparationToTheNext() async throws {
        let race = try await Race()
        defer { race.persistence.close() }
        race.first.cancel()
        let returned = await KV.eventually { race.hasEnded("first") }
        #expect(returned, "the cancelled preparer returned while the writer slot was still held")
        let takenOver = await KV.eventually {
            race.persistence.writer.waitingCount == 1
                && race.persistence.core.preparationTurn(for: AuthorFormat.key).waitingCount == 0
        }
        #expect(takenOver, "the second use now prepares, waiting for the writer slot")
        race.persistence.writer.release()
        await #expect(throws: FolioError.cancelled) { try await race.first.value }
        #expect(try await race.second.value == nil)
        try await race.authors.persist(Author(id: 1, name: "Ann", born: 1970))
        #expect(try await race.authors.load(1)?.name == "Ann")
        #expect(!race.persistence.writer.isHeld)
    }
}
