import Testing
@testable import FolioStorage
import FolioTestSupport

/// The root file sync that keeps the anchor lag bound runs before the slot write that
/// would reach it (Docs/Durability.md §1 step 4). When that sync fails, the commit fails as
/// a failed slot write fails it: the store is poisoned, the slot is never written, and the
/// reopen, following the synced runs from the anchor, may find the commit (last
/// acknowledged <= recovered <= last attempted).
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
        #expect(throws: StorageError.self) { try store.write { try $0.put([64], for: [64], in: "t") } }
        #expect(faulty.injectedFaults == 1)
        #expect { try store.write { try $0.put([65], for: [65], in: "t") } } throws: { error in
            if case StorageError.needsReopen = error { return true }
            return false
        }
        // The slot was not written: the root file still names the 63rd commit at the newest.
        let bytes = memory.contents(of: "/stores/s/root")!
        let newest = (0..<2).compactMap { try? RootRecord.decodeSlot(bytes, slot: $0, file: "root").generation }.max()
        #expect(newest == opened + 63)
        #expect(
            store.verify().isClean,
            "the poisoned store's own view of its root file matches the file (no slot it did not write)")
        store.close()

        faulty.plan = nil
        let reopened = try Store.open(at: "/stores/s", options: testOptions(memory))
        #expect(reopened.generation == opened + 64, "recovery follows the durable run past the slot")
        #expect(try reopened.read().get([64], in: "t") == [64])
        #expect(reopened.verify().isClean)
        reopened.close()
    }

    /// The commit that raises the store to format version 3 is acknowledged only once its
    /// version 3 slot is durable (Docs/Format.md §18.2). When the root file sync before its
    /// slot write fails, it fails: the reopen, from version 2 slots, does not follow its run.
    @Test func anUpgradingCommitWhoseSyncBeforeTheSlotFailsIsNotAcknowledged() throws {
        let memory = try memoryFileSystem()
        let faulty = FaultInjectingFileSystem(wrapping: memory, countedKinds: [.sync])
        faulty.faultedPaths = { $0 == "/stores/s/root" }
        var options = testOptions(faulty)
        options.changeRecordKeyLimit = 1
        let store = try Store.open(at: "/stores/s", options: options)
        let opened = store.generation
        for i in 0..<63 { try store.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        #expect(try store.describe().rootFormatVersion == 2)
        faulty.plan = FaultPlan(failingCall: faulty.callCount + 1, persistence: .persistent)
        // Two keys of one tree, over the limit of 1: recorded wholesale, so version 3.
        #expect(throws: StorageError.self) {
            try store.write { txn in
                try txn.put([1], for: [200], in: "t")
                try txn.put([2], for: [201], in: "t")
            }
        }
        store.close()

        faulty.plan = nil
        let reopened = try Store.open(at: "/stores/s", options: testOptions(memory))
        #expect(reopened.generation == opened + 63)
        #expect(try reopened.read().get([200], in: "t") == nil)
        #expect(reopened.verify().isClean)
        reopened.close()
    }
}
