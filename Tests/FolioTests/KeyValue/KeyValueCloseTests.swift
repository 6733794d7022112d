import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage

/// `Persistence.close()` and values set outside transactions: close takes its turn for the
/// writer slot (an `AsyncGate`) behind the writers already waiting, blocked, never polling,
/// and commits what is still queued; if the slot does not come within its bound, it leaves
/// the queue and logs that the values are lost. The test holds the writer slot, as a
/// transaction would. Deadlines only turn a hang into a failure.
@Suite struct KeyValueCloseTests {
    /// What a thread running `close()` left behind.
    final class Closing: Sendable {
        let done = Atomic<Bool>(false)
        let reopened = Mutex<Persistence<ReadWrite>?>(nil)
        let log = Mutex<[String]>([])
    }

    /// A set waits in the queue, its background commit waiting for the slot the test holds.
    /// Close queues behind that commit (the slot's queue shows both) and returns only once
    /// the test lets the slot go; the value is then in the store.
    @Test func closeWaitsItsTurnForTheWriterSlotAndCommitsTheQueuedValues() async throws {
        let persistence = Persistence.inMemory(options: KV.options())
        persistence.core.valuesCloseWait.store(600_000, ordering: .relaxed)  // only the release ends the wait
        let key = ValueKey<Int>("c/queued", default: 0)
        try await persistence.writer.acquire()
        try persistence.values.set(7, for: key)
        let commitWaits = await KV.eventually { persistence.writer.waitingCount == 1 }
        #expect(commitWaits, "the background commit waits for the slot")

        let closing = Closing()
        Thread {
            closing.reopened.withLock { $0 = try? persistence.reopened() }  // close, then open again
            closing.done.store(true, ordering: .releasing)
        }.start()
        let closeWaits = await KV.eventually { persistence.writer.waitingCount == 2 }
        #expect(closeWaits, "close queued for the slot behind the background commit")
        let returnedEarly = closing.done.load(ordering: .acquiring)
        #expect(!returnedEarly, "close waits while the slot is held")

        persistence.writer.release()
        let closed = await KV.eventually { closing.done.load(ordering: .acquiring) }
        #expect(closed)
        let reopened = try #require(closing.reopened.withLock { $0 })
        defer { reopened.close() }
        #expect(reopened.values[key] == 7, "committed before the store closed")
        #expect(!persistence.writer.isHeld && persistence.writer.waitingCount == 0)
    }

    /// The slot stays held (by a transaction that does not end): close waits its bound (made
    /// short here), leaves the queue, logs that the queued values are lost, and closes the
    /// store; the background commit still waiting is the only one left in the queue.
    @Test func closeLeavesTheQueueAtItsBoundWhenTheSlotStaysHeld() async throws {
        let closing = Closing()
        var options = KV.options()
        options.log = { message in closing.log.withLock { $0.append(message) } }
        let persistence = Persistence.inMemory(options: options)
        persistence.core.valuesCloseWait.store(50, ordering: .relaxed)
        let key = ValueKey<Int>("c/lost", default: 0)
        try await persistence.writer.acquire()
        try persistence.values.set(7, for: key)
        let commitWaits = await KV.eventually { persistence.writer.waitingCount == 1 }
        #expect(commitWaits)

        Thread {
            persistence.close()
            closing.done.store(true, ordering: .releasing)
        }.start()
        let closed = await KV.eventually { closing.done.load(ordering: .acquiring) }
        #expect(closed, "close returned although the slot stayed held")
        let lost = closing.log.withLock { $0.contains { $0.contains("values set and not yet committed are lost") } }
        #expect(lost, "\(closing.log.withLock { $0 })")
        #expect(persistence.writer.waitingCount == 1, "close left the queue at its deadline")
        #expect(throws: FolioError.self) { try persistence.values.set(8, for: key) }
        persistence.writer.release()
    }
}
