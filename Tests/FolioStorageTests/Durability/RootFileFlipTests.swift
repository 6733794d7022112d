import Testing
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// A5, root file: every single-bit flip of both 128-byte root slots (format version 2:
/// slots at offsets 0 and 4096). A flip in the newest slot opens a reader at the other
/// slot, the generation before, exactly as committed, and says so in the log; a flip in
/// the older slot leaves the newest generation. Either way the damaged slot is reported as
/// corruption naming the root file, the slot's offset and both checksums (by the slot
/// decoder and by `verify`), and never read as data; and a writer opening the damaged
/// store follows the runs to the newest generation and rewrites the damaged slot.
@Suite struct RootFileFlipTests {
    @Test func everyBitOfBothRootSlots() throws {
        let workload = TransferWorkload(seed: 9, accounts: 12)
        let fileSystem = try memoryFileSystem()
        let driver = TransferDriver(workload)
        var store = try driver.open(options: testOptions(fileSystem))
        for _ in 0..<5 { try driver.commitNext(store) }
        store.close()
        // Reopened: the slot holding 5 transactions is the anchor; the sixth goes to the other.
        store = try driver.open(options: testOptions(fileSystem))
        try driver.commitNext(store)
        let current = store.generation
        store.close()
        let path = "/stores/s/root"
        let original = fileSystem.contents(of: path)!
        #expect(original.count == RootRecord.fileSize)
        let newest = try RootRecord.decodeSlot(original, slot: 0, file: path).generation == current ? 0 : 1
        #expect(try RootRecord.decodeSlot(original, slot: 1 - newest, file: path).generation == current - 1)
        var flips = 0
        for slot in 0..<2 {
            let base = RootRecord.slotOffset(slot, fileLength: original.count)
            for bit in 0..<(RootRecord.slotSize * 8) {
                var damaged = original
                damaged[base + bit / 8] ^= UInt8(1) << (bit % 8)
                fileSystem.setContents(damaged, of: path)
                let context = "root slot \(slot) bit \(bit)"
                // The decoder: a corruption error for the damaged slot, with both checksums.
                expectCorruption(file: path, offset: UInt64(base), context) {
                    "\(try RootRecord.decodeSlot(damaged, slot: slot, file: path))"
                }
                // A reader: the undamaged slot's generation, exactly as committed.
                let messages = Mutex<[String]>([])
                do {
                    let reader = try Store.openReadOnly(
                        at: "/stores/s",
                        options: testOptions(
                            fileSystem,
                            log: { line in
                                messages.withLock { $0.append(line) }
                            }))
                    let count = try workload.check(reader.read())
                    #expect(reader.generation == (slot == newest ? current - 1 : current), "\(context)")
                    #expect(count == (slot == newest ? 5 : 6), "\(context)")
                    #expect(
                        slot != newest || messages.withLock { $0.contains { $0.contains("is unusable") } },
                        "\(context): fallback not logged")
                    let report = reader.verify()
                    #expect(
                        report.problems.contains {
                            $0.file == path && $0.offset == UInt64(base) && $0.detail.contains("computed 0x")
                        },
                        "\(context): verify: \(report.problems.prefix(2))")
                    reader.close()
                    // A writer (every 16th flip: the rest is the same path): the newest
                    // generation, the damaged slot rewritten.
                    if bit % 16 == 0 {
                        let writer = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
                        #expect(writer.generation == current, "\(context)")
                        #expect(try workload.check(writer.read()) == 6, "\(context)")
                        #expect(writer.verify().isClean, "\(context)")
                        writer.close()
                    }
                } catch {
                    Issue.record("\(context): \(error)")
                }
                flips += 1
            }
        }
        fileSystem.setContents(original, of: path)
        let store2 = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        #expect(store2.verify().isClean)
        store2.close()
        print("durability A5: \(flips) root-slot bit flips, all reported")
    }
}
