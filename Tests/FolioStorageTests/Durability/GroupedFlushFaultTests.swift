import Testing
import Synchronization
import FolioStorage
import FolioTestSupport

/// Grouped durability acknowledges commits through the commit observers once a flush has
/// made them durable. A flush that fails without poisoning the store (writing `root.tmp`,
/// step 3 of Docs/Durability.md §1) leaves them pending, not forgotten: the flush that
/// later makes them durable acknowledges them, each exactly once, in order.
@Suite struct GroupedFlushFaultTests {
    @Test(arguments: [1, 2, 3])
    func aFailedFlushKeepsItsCommitsForTheNextOne(failingStep: Int) throws {
        // Flush calls: 1 fsync the snapshot file (poisons), 2 open root.tmp, 3 write root.tmp.
        let faulty = FaultInjectingFileSystem(wrapping: try memoryFileSystem())
        let store = try Store.open(at: "/stores/s", options: testOptions(faulty, durability: .grouped(window: .seconds(3600))))
        let acknowledged = Mutex<[UInt64]>([])
        let observation = store.observe { event in
            guard case .committed(let notifications) = event else { return }
            acknowledged.withLock { $0 += notifications.map(\.generation) }
        }
        var generations: [UInt64] = []
        for i in 0..<3 {
            try store.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") }
            generations.append(store.generation)
        }
        faulty.plan = FaultPlan(failingCall: faulty.callCount + failingStep)
        #expect(throws: StorageError.self) { try store.flush() }
        #expect(acknowledged.withLock { $0 }.isEmpty, "nothing is acknowledged before it is durable")
        if failingStep == 1 {
            // A failed fsync poisons the store: the commits were never durable, never acknowledged.
            #expect { try store.flush() } throws: { error in
                if case StorageError.needsReopen = error { return true }
                return false
            }
            #expect(acknowledged.withLock { $0 }.isEmpty)
        } else {
            try store.write { try $0.put([9], for: [9], in: "t") }
            generations.append(store.generation)
            try store.flush()
            #expect(acknowledged.withLock { $0 } == generations)
        }
        observation.cancel()
        #expect(store.verify().isClean)
        store.close()
    }
}
