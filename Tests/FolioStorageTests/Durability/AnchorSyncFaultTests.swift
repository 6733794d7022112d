import Testing
@testable import FolioStorage
import FolioTestSupport

/// The root file sync that keeps the anchor lag bound runs before the slot write that
/// would reach it (Docs/Durability.md §1 step 4). When that sync fails, the commit's run is
/// durable already: the commit is acknowledged, the store is poisoned without writing the
/// slot, and the reopen recovers the commit from the anchor by following its run.
@Suite struct AnchorSyncFaultTests {
    @Test func aFailedSyncBeforeTheSlotWritePoisonsAndLosesNothing() throws {
        let memory = try memoryFileSystem()
        let faulty = FaultInjectingFileSystem(wrapping: memory, countedKinds: [.sync])
        faulty.faultedPaths = { $0 == "/stores/s/root" }
        let store = try Store.open(at: "/stores/s", options: testOptions(faulty))
        let opened = store.generation
        for i in 0..<63 { try store.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        // The next root sync is the one before the 64th slot write past the open's anchor.
        faulty.plan = FaultPlan(failingCall: faulty.callCount + 1, persistence: .persistent)
        try store.write { try $0.put([64], for: [64], in: "t") }
        #expect(store.generation == opened + 64, "the commit is acknowledged: its run is durable")
        #expect(faulty.injectedFaults == 1)
        #expect { try store.write { try $0.put([65], for: [65], in: "t") } } throws: { error in
            if case StorageError.needsReopen = error { return true }
            return false
        }
        // The slot was not written: the root file still names the 63rd commit at the newest.
        let bytes = memory.contents(of: "/stores/s/root")!
        let newest = (0..<2).compactMap { try? RootRecord.decodeSlot(bytes, slot: $0, file: "root").generation }.max()
        #expect(newest == opened + 63)
        store.close()

        faulty.plan = nil
        let reopened = try Store.open(at: "/stores/s", options: testOptions(memory))
        #expect(reopened.generation == opened + 64, "recovery follows the durable run past the slot")
        #expect(try reopened.read().get([64], in: "t") == [64])
        #expect(reopened.verify().isClean)
        reopened.close()
    }
}
