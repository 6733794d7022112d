import Testing
import Synchronization
import FolioStorage
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
        let store = try Store.open(at: "/stores/s", options: testOptions(faulty, durability: .grouped(window: .seconds(3600))))
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
}
