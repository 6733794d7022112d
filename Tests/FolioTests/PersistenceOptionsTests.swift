import Testing
import FolioStorage
@testable import Folio

/// What a persistence's options hand to its store: each engine option the persistence
/// documents reaches the engine (a dropped one would leave only its documentation).
@Suite struct PersistenceOptionsTests {
    @Test func everyEngineOptionReachesTheStore() {
        var options = PersistenceOptions(durability: .grouped(window: .milliseconds(7)), cacheCapacity: 1 << 20)
        options.busyTimeout = .seconds(3)
        options.transactionSpillBytes = 1 << 16
        options.changeRecordKeyLimit = 99
        let store = options.storeOptions(MemoryFileSystem(), createIfMissing: false)
        #expect(store.busyTimeout == .seconds(3))
        #expect(store.transactionSpillBytes == 1 << 16)
        #expect(store.changeRecordKeyLimit == 99)
        #expect(store.durability == .grouped(window: .milliseconds(7)))
        #expect(store.cacheCapacity == 1 << 20)
        #expect(store.createIfMissing == false)
    }

    /// An app and its extensions saving at the same moment take turns by default: the
    /// persistence waits for another process's turn, where the engine alone does not.
    @Test func aPersistenceWaitsForAnotherProcesssTurnByDefault() {
        #expect(PersistenceOptions().busyTimeout == .seconds(5))
        #expect(PersistenceOptions().storeOptions(MemoryFileSystem()).busyTimeout == .seconds(5))
        #expect(StoreOptions().busyTimeout == .zero)
    }
}
