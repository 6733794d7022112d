import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage

/// The writer slot (`WriterGate`).
@Suite struct WriterGateTests {
    /// Counters shared by the tasks of a test.
    final class Tally: Sendable {
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let completed = Atomic<Int>(0)
        let queued = Atomic<Int>(0)
        let order = Mutex<[Int]>([])
    }

    /// One holder at a time, first come first served, and every waiter is woken exactly
    /// once: 8 tasks × 200 acquisitions, each recording entry and exit; the records never
    /// overlap and all 1,600 acquisitions complete (a lost wake-up would hang, a double
    /// grant would overlap).
    @Test func oneHolderAtATimeAndNoWaiterIsLost() async {
        let gate = WriterGate()
        let tally = Tally()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for round in 0..<200 {
                        await gate.acquire()
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
        }
        #expect(tally.overlaps.load(ordering: .relaxed) == 0)
        #expect(tally.completed.load(ordering: .relaxed) == 1_600)
    }

    /// Waiters are served in the order they asked: while the slot is held, five tasks queue
    /// one after another (each queued before the next starts); releasing hands the slot to
    /// them in that order.
    @Test func waitersAreServedInArrivalOrder() async {
        let gate = WriterGate()
        await gate.acquire()
        let tally = Tally()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<5 {
                group.addTask {
                    tally.queued.add(1, ordering: .sequentiallyConsistent)
                    await gate.acquire()
                    tally.order.withLock { $0.append(index) }
                    gate.release()
                }
                // The task has asked (counted) and had time to queue behind the holder.
                while tally.queued.load(ordering: .sequentiallyConsistent) <= index { await Task.yield() }
                try? await Task.sleep(for: .milliseconds(20))
            }
            gate.release()
        }
        #expect(tally.order.withLock { $0 } == [0, 1, 2, 3, 4])
    }
}
