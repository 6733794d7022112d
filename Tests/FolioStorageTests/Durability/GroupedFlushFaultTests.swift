import Testing
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// Grouped durability acknowledges commits through the commit observers once a flush has
/// made them durable. A flush has two steps in format version 2 (Docs/Durability.md §1.2):
/// fdatasync the snapshot file, then write the newest root into the free slot. Either
/// failing poisons the store: after a failed sync the kernel may have dropped the pages,
/// and after a failed slot write only recovery can tell which root is the newest. Nothing
/// is acknowledged; the store refuses further commits until reopened, and the reopened
/// store (whose recovery follows the runs that reached the disk) opens at a generation
/// between the last acknowledged and the last attempted, and verifies clean.
@Suite struct GroupedFlushFaultTests {
    @Test(arguments: [1, 2])
    func aFailedFlushPoisonsAndAcknowledgesNothing(failingStep: Int) throws {
        let faulty = FaultInjectingFileSystem(wrapping: try memoryFileSystem())
        let store = try Store.open(
            at: "/stores/s", options: testOptions(faulty, durability: .grouped(window: .seconds(3600))))
        let acknowledged = Mutex<[UInt64]>([])
        let observation = store.observe { event in
            guard case .committed(let notifications) = event else { return }
            acknowledged.withLock { $0 += notifications.map(\.generation) }
        }
        let before = store.generation
        for i in 0..<3 { try store.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        let attempted = store.generation
        faulty.plan = FaultPlan(failingCall: faulty.callCount + failingStep)
        #expect(throws: StorageError.self) { try store.flush() }
        #expect(acknowledged.withLock { $0 }.isEmpty, "nothing is acknowledged before it is durable")
        #expect { try store.flush() } throws: { error in
            if case StorageError.needsReopen = error { return true }
            return false
        }
        #expect(acknowledged.withLock { $0 }.isEmpty)
        observation.cancel()
        store.close()
        faulty.plan = nil
        let reopened = try Store.open(at: "/stores/s", options: testOptions(faulty))
        #expect(reopened.generation >= before && reopened.generation <= attempted)
        if failingStep == 2 {
            #expect(reopened.generation == attempted, "the runs were synced before the slot write failed")
        }
        #expect(reopened.verify().isClean)
        reopened.close()
    }

    /// The flush the grouped window schedules by itself: when its sync fails, the store is
    /// poisoned, and the flush is not scheduled again (a poisoned store must not be flushed:
    /// never retry a sync). The failed sync throws the I/O error, not `needsReopen`, so the
    /// decision must look at the store's state, not at the error.
    @Test func aScheduledFlushWhoseSyncFailedIsNotRetried() async throws {
        let faulty = FaultInjectingFileSystem(wrapping: try memoryFileSystem(), countedKinds: [.sync])
        let messages = Mutex<[String]>([])
        let options = testOptions(
            faulty, durability: .grouped(window: .milliseconds(5)),
            log: { line in messages.withLock { $0.append(line) } })
        let store = try Store.open(at: "/stores/s", options: options)
        defer { store.close() }
        faulty.plan = FaultPlan(failingCall: faulty.callCount + 1)
        try store.write { try $0.put([1], for: [1], in: "t") }
        // The window's flush runs on its own; wait (bounded, holding no thread) for its log line.
        var failure: String?
        for _ in 0..<10_000 where failure == nil {
            failure = messages.withLock { $0.first { $0.contains("grouped commit flush failed") } }
            if failure == nil { try await Task.sleep(for: .milliseconds(1)) }
        }
        guard let failure else {
            Issue.record("the scheduled flush never failed: \(messages.withLock { $0 })")
            return
        }
        #expect(!failure.contains("retrying"), "a poisoned store's flush is not retried: \(failure)")
        #expect(store.state.withLock { $0.writer?.flushScheduled } == false, "no flush scheduled after the failure")
        #expect(faulty.injectedFaults == 1)
        #expect(throws: StorageError.self) { try store.write { try $0.put([2], for: [2], in: "t") } }
    }
}
