import Testing
import Foundation
import Synchronization
@_spi(Testing) @testable import FolioStorage
import FolioTestSupport

/// Which root slot a store opens at (Docs/Format.md §8 "Which slot is used"), and which slot
/// is the anchor when both hold the same generation (§8 "Writing", §17 step 8).
@Suite struct RootSlotChoiceTests {
    let path = "/stores/s"
    var root: String { "\(path)/root" }

    /// A store at generation 3, closed: slot 0 holds generation 1 (creation) and slot 1
    /// generation 3 (the lazy slot takes every commit's root until the root file is synced).
    func storeWithTwoSlots(_ fileSystem: MemoryFileSystem) throws {
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        try store.write { try $0.put([1], for: [1], in: "t") }
        try store.write { try $0.put([2], for: [2], in: "t") }
        store.close()
    }

    func slot(_ bytes: [UInt8], _ slot: Int) -> RootRecord? {
        try? RootRecord.decodeSlot(bytes, slot: slot, file: "root")
    }

    func openReadOnlyLogging(_ fileSystem: MemoryFileSystem) throws -> (Store, [String]) {
        let messages = Mutex<[String]>([])
        let store = try Store.openReadOnly(
            at: path, options: testOptions(fileSystem, log: { line in messages.withLock { $0.append(line) } }))
        return (store, messages.withLock { $0 })
    }

    /// Slot 0 is never empty: all zeros there is damage. The store opens at slot 1 and says
    /// so, verify reports the slot, and a writer's open rewrites it.
    @Test func anAllZeroSlotZeroIsDamagedNotEmpty() throws {
        let fileSystem = try memoryFileSystem()
        try storeWithTwoSlots(fileSystem)
        var bytes = fileSystem.contents(of: root)!
        bytes.replaceSubrange(0..<RootRecord.slotSize, with: [UInt8](repeating: 0, count: RootRecord.slotSize))
        fileSystem.setContents(bytes, of: root)

        let (reader, log) = try openReadOnlyLogging(fileSystem)
        #expect(reader.generation == 3)
        #expect(log.contains { $0.contains("unusable") && $0.contains("bad magic") }, "\(log)")
        #expect(reader.verify().problems.contains { $0.file == root && $0.offset == 0 }, "\(reader.verify().problems)")
        reader.close()

        let writer = try Store.open(at: path, options: testOptions(fileSystem))
        writer.close()
        #expect(slot(fileSystem.contents(of: root)!, 0)?.generation == 3, "the writer rewrote the damaged slot")
    }

    /// A root file cut short: a slot it does not wholly hold is damaged, not empty.
    @Test func aCutShortRootFileHasDamagedSlots() throws {
        let fileSystem = try memoryFileSystem()
        try storeWithTwoSlots(fileSystem)
        let whole = fileSystem.contents(of: root)!
        // Slot 1 (the newer) cut: the store opens at slot 0 and says why.
        fileSystem.setContents(Array(whole[..<4150]), of: root)
        let (reader, log) = try openReadOnlyLogging(fileSystem)
        #expect(reader.generation == 1)
        #expect(log.contains { $0.contains("unusable") && $0.contains("4150 bytes") }, "\(log)")
        reader.close()
        // A writer follows the runs to generation 3 and writes the whole root file again.
        let writer = try Store.open(at: path, options: testOptions(fileSystem))
        #expect(writer.generation == 3)
        writer.close()
        #expect(fileSystem.contents(of: root)!.count == RootRecord.fileSize)
        // Slot 0 cut too: the error says so, rather than "no usable root slot".
        fileSystem.setContents(Array(whole[..<100]), of: root)
        #expect {
            _ = try Store.openReadOnly(at: path, options: testOptions(fileSystem))
        } throws: { error in
            guard case StorageError.corruption(let corruption) = error else { return false }
            return corruption.detail.contains("root slot 0: root file has only 100 bytes")
        }
    }

    /// The layout fixes the slots' version: a version 2 slot in a 256-byte root file (a
    /// version 2 root file cut to 256 bytes) is damage, not a version 1 root to be opened
    /// without following its runs; so is a version 1 slot in a version 2 layout.
    @Test func aSlotOfTheOtherLayoutsVersionIsDamaged() throws {
        let fileSystem = try memoryFileSystem()
        try storeWithTwoSlots(fileSystem)
        let whole = fileSystem.contents(of: root)!
        var cut = Array(whole[..<RootRecord.versionOneFileSize])
        cut.replaceSubrange(
            RootRecord.slotSize..<(2 * RootRecord.slotSize), with: [UInt8](repeating: 0, count: RootRecord.slotSize))
        fileSystem.setContents(cut, of: root)
        #expect {
            _ = try Store.open(at: path, options: testOptions(fileSystem))
        } throws: { error in
            guard case StorageError.corruption(let corruption) = error else { return false }
            return corruption.detail.contains("format version 2 in a version 1 root file")
        }

        // The version 1 fixture's root file, padded to the version 2 length.
        let fixture = ProjectExecutable.packageRoot() + "/Fixtures/v1/engine-basic/root"
        let versionOne = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixture)))
        #expect(versionOne.count == RootRecord.versionOneFileSize)
        let padded = versionOne + [UInt8](repeating: 0, count: RootRecord.fileSize - versionOne.count)
        #expect(throws: StorageError.self) { _ = try RootRecord.decodeSlot(padded, slot: 0, file: "root") }
        #expect(try RootRecord.decodeSlot(versionOne, slot: 0, file: "root").generation == 5)
    }

    /// A newer version in either slot refuses the store, even in the slot that holds the
    /// lower generation and would not be used.
    @Test func aNewerVersionInTheOlderSlotRefusesTheStore() throws {
        let fileSystem = try memoryFileSystem()
        try storeWithTwoSlots(fileSystem)
        var bytes = fileSystem.contents(of: root)!
        #expect(slot(bytes, 0)?.generation == 1 && slot(bytes, 1)?.generation == 3)
        bytes[8] = 4
        let crc = CRC32C.checksum(Array(bytes[0..<124]))
        withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange(124..<128, with: $0) }
        fileSystem.setContents(bytes, of: root)
        #expect(throws: StorageError.unsupportedFormatVersion(path: root, found: 4, supported: 3)) {
            _ = try Store.openReadOnly(at: path, options: testOptions(fileSystem))
        }
    }

    /// The second candidate's file shorter than its committed length stops the open with a
    /// corruption error naming that file, as for the first candidate.
    @Test func aShortFileOfTheSecondCandidateStopsTheOpen() throws {
        let fileSystem = try memoryFileSystem()
        var options = testOptions(fileSystem)
        options.retention = SnapshotRetention(gracePeriod: .seconds(60))
        let store = try Store.open(at: path, options: options)
        try write(sampleModel(count: 100, seed: 3), to: store)
        let before = fileSystem.contents(of: root)!
        try store.compact()
        store.close()
        try putOlderRoot(from: before, intoSlotOneOf: root, in: fileSystem)
        // Slot 0's file (2) has a damaged header: unusable; slot 1's file (1) is cut short.
        let second = "\(path)/snapshots/0000000000000002.folio"
        var header = fileSystem.contents(of: second)!
        header[0] ^= 0xFF
        fileSystem.setContents(header, of: second)
        let first = "\(path)/snapshots/0000000000000001.folio"
        let older = try #require(slot(fileSystem.contents(of: root)!, 1))
        fileSystem.setContents(Array(fileSystem.contents(of: first)![..<Int(older.committedLength - 1)]), of: first)
        #expect {
            _ = try Store.openReadOnly(at: path, options: testOptions(fileSystem))
        } throws: { error in
            guard case StorageError.corruption(let corruption) = error else { return false }
            return corruption.file == first && corruption.detail.contains("root slot 1 says")
        }
    }

    /// After a compaction both slots hold the same root. The writer that compacted takes the
    /// slot it wrote last as the anchor; a store opened later opens at slot 0 and takes it
    /// as the anchor. Either way the next root goes into the other slot.
    @Test func equalSlotsOpenAtSlotZeroAndTheNextRootGoesToTheOther() throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        try store.write { try $0.put([1], for: [1], in: "t") }  // slot 1: generation 2
        try store.compact()  // generation 3: slot 0 (step 7), then slot 1 (step 8)
        var bytes = fileSystem.contents(of: root)!
        #expect(slot(bytes, 0) == slot(bytes, 1) && slot(bytes, 0)?.generation == 3)
        try store.write { try $0.put([2], for: [2], in: "t") }
        bytes = fileSystem.contents(of: root)!
        #expect(slot(bytes, 0)?.generation == 4 && slot(bytes, 1)?.generation == 3, "the step-8 slot was the anchor")
        try store.compact()  // generation 5 into slot 1 then slot 0
        store.close()

        let reopened = try Store.open(at: path, options: testOptions(fileSystem))
        #expect(try reopened.read().root.slot == 0)
        try reopened.write { try $0.put([3], for: [3], in: "t") }
        bytes = fileSystem.contents(of: root)!
        #expect(slot(bytes, 0)?.generation == 5 && slot(bytes, 1)?.generation == 6)
        reopened.close()
        let reader = try Store.openReadOnly(at: path, options: testOptions(fileSystem))
        #expect(try reader.read().root.slot == 1)
        reader.close()
    }
}
