import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage

/// The writer slot (an `AsyncGate`).
@Suite struct WriterGateTests {
    /// Counters shared by the tasks of a test.
    final class Tally: Sendable {
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let completed = Atomic<Int>(0)
        /// Set to let racing tasks go.
        let start = Atomic<Bool>(false)
        /// Transactions whose body has started.
        let entered = Atomic<Int>(0)
        let order = Mutex<[Int]>([])
    }

    /// One holder at a time, first come first served, and every waiter is woken exactly
    /// once: 8 tasks × 200 acquisitions, each recording entry and exit; the records never
    /// overlap and all 1,600 acquisitions complete (a lost wake-up would hang, a double
    /// grant would overlap).
    @Test func oneHolderAtATimeAndNoWaiterIsLost() async throws {
        let gate = AsyncGate()
        let tally = Tally()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for round in 0..<200 {
                        try await gate.acquire()
                        if tally.inside.add(1, ordering: .sequentiallyConsistent).newValue != 1 {
                            tally.overlaps.add(1, ordering: .relaxed)
                        }
                        if round % 7 == 0 { await Task.yield() }  // hold it across a suspension
                        tally.inside.subtract(1, ordering: .sequentiallyConsistent)
                        tally.completed.add(1, ordering: .relaxed)
                        gate.release()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(tally.overlaps.load(ordering: .relaxed) == 0)
        #expect(tally.completed.load(ordering: .relaxed) == 1_600)
    }

    /// Waiters are served in the order they asked: while the slot is held, five tasks queue
    /// one after another (each in the queue before the next starts); releasing hands the
    /// slot to them in that order.
    @Test func waitersAreServedInArrivalOrder() async throws {
        let gate = AsyncGate()
        try await gate.acquire()
        let tally = Tally()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<5 {
                group.addTask {
                    try await gate.acquire()
                    tally.order.withLock { $0.append(index) }
                    gate.release()
                }
                // The task has queued behind the holder (and the ones before it).
                await Self.waitUntilQueued(index + 1, on: gate)
            }
            gate.release()
            try await group.waitForAll()
        }
        #expect(tally.order.withLock { $0 } == [0, 1, 2, 3, 4])
    }

    /// A task that waits for the slot, gives it back at once if it gets it, and says
    /// whether it did (false: its wait was cancelled).
    static func waiter(on gate: AsyncGate) -> Task<Bool, Never> {
        Task {
            do throws(CancellationError) {
                try await gate.acquire()
            } catch {
                return false
            }
            gate.release()
            return true
        }
    }

    /// Returns once `count` writers wait on `gate` (polls the queue: an outcome, not a time).
    static func waitUntilQueued(_ count: Int, on gate: AsyncGate) async {
        while gate.waitingCount < count { await Task.yield() }
    }

    /// The same, for a persistence's writers' turns.
    static func waitUntilQueued(_ count: Int, on turns: WriterTurns) async {
        while turns.waitingCount < count { await Task.yield() }
    }

    /// A waiter whose task is cancelled leaves the queue with `CancellationError`, and the
    /// writer queued behind it still gets the slot when the holder gives it back.
    @Test func aCancelledWaiterLeavesTheQueueAndTheNextStillGetsTheSlot() async throws {
        let gate = AsyncGate()
        try await gate.acquire()
        let first = Self.waiter(on: gate)
        await Self.waitUntilQueued(1, on: gate)
        let second = Self.waiter(on: gate)
        await Self.waitUntilQueued(2, on: gate)

        first.cancel()
        #expect(await first.value == false, "the cancelled waiter did not get the slot")
        #expect(gate.waitingCount == 1, "and left the queue")
        #expect(gate.isHeld, "the holder keeps the slot")

        gate.release()
        #expect(await second.value == true, "the next waiter gets the slot")
        #expect(!gate.isHeld && gate.waitingCount == 0)
    }

    /// A cancellation that races with the slot being handed to the waiter never leaks the
    /// slot: whichever wins, once the waiter is done the slot is free and nobody waits
    /// (a leak would leave it held; a double resume would trap).
    @Test func aCancellationRacingAGrantNeverLeaksTheSlot() async throws {
        let gate = AsyncGate()
        var outcomes: [Bool: Int] = [:]
        for round in 0..<400 {
            try await gate.acquire()
            let waiter = Self.waiter(on: gate)
            await Self.waitUntilQueued(1, on: gate)
            // Release and cancel on two tasks let go at the same instant; the canceller
            // first yields a varying number of times, so that every interleaving occurs:
            // cancelled in the queue, granted then cancelled before it runs, granted and running.
            let race = Tally()
            let canceller = Task.detached {
                while !race.start.load(ordering: .acquiring) {}
                for _ in 0..<(round % 4) { await Task.yield() }
                waiter.cancel()
            }
            let releaser = Task.detached {
                while !race.start.load(ordering: .acquiring) {}
                gate.release()
            }
            race.start.store(true, ordering: .releasing)
            await canceller.value
            await releaser.value
            outcomes[await waiter.value, default: 0] += 1
            #expect(!gate.isHeld, "round \(round): the slot is free")
            #expect(gate.waitingCount == 0, "round \(round): nobody waits")
        }
        #expect(outcomes.values.reduce(0, +) == 400)
        try await gate.acquire()
        #expect(gate.isHeld, "the slot is still usable")
        gate.release()
    }

    /// Cancellation does not reach a transaction that already holds the slot: it commits,
    /// or fails, as its body decides.
    @Test func aTransactionHoldingTheSlotIsNotAffectedByCancellation() async throws {
        struct Refusal: Error {}
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        let tally = Tally()

        let committing = Task {
            try await persistence.perform {
                tally.entered.add(1, ordering: .sequentiallyConsistent)
                while !Task.isCancelled { await Task.yield() }
                try await authors.persist(Author(id: 1, name: "Ann", born: 1970))
            }
        }
        while tally.entered.load(ordering: .sequentiallyConsistent) < 1 { await Task.yield() }
        committing.cancel()
        try await committing.value
        #expect(try await authors.load(1) == Author(id: 1, name: "Ann", born: 1970), "committed")

        let failing = Task {
            try await persistence.perform {
                tally.entered.add(1, ordering: .sequentiallyConsistent)
                while !Task.isCancelled { await Task.yield() }
                try await authors.persist(Author(id: 2, name: "Bo", born: 1980))
                throw Refusal()
            }
        }
        while tally.entered.load(ordering: .sequentiallyConsistent) < 2 { await Task.yield() }
        failing.cancel()
        await #expect(throws: Refusal.self, "fails with its body's error") { try await failing.value }
        #expect(try await authors.load(2) == nil, "rolled back")
        #expect(!persistence.writer.isHeld)
    }

    /// A datastore write waiting for the slot throws `FolioError.cancelled` when its task is
    /// cancelled, and changes nothing; `perform` throws `CancellationError`. (`compact` does
    /// not wait for the slot: CompactionBesideWritesTests.)
    @Test func waitingWritesThrowCancelledInTheirOwnErrorType() async throws {
        let persistence = Persistence.inMemory()
        let authors = persistence.datastore(for: AuthorFormat.self)
        try await authors.persist(Author(id: 1, name: "Ann", born: 1970))  // prepared: no background preparation
        try await persistence.writer.acquire()

        let persist = Task { try await authors.persist(Author(id: 2, name: "Bo", born: 1980)) }
        await Self.waitUntilQueued(1, on: persistence.writer)
        let perform = Task {
            try await persistence.perform { try await authors.persist(Author(id: 3, name: "Cy", born: 1990)) }
        }
        await Self.waitUntilQueued(2, on: persistence.writer)

        persist.cancel()
        perform.cancel()
        await #expect(throws: FolioError.cancelled) { try await persist.value }
        await #expect(throws: CancellationError.self) { try await perform.value }
        #expect(persistence.writer.waitingCount == 0)
        persistence.writer.release()
        #expect(try await authors.load(2) == nil)
        #expect(try await authors.load(3) == nil)
        #expect(!persistence.writer.isHeld)
    }
}
