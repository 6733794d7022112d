import Testing
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// A5, root file: every single-bit flip of the 256-byte root file. A flip in slot 0 opens
/// the store at slot 1, the previous generation, exactly as committed, and says so in the
/// log; a flip in slot 1 leaves the current generation. Either way the damaged slot is
/// reported as corruption naming the root file, the slot's offset and both checksums
/// (by the slot decoder and by `verify`), and never read as data.
@Suite struct RootFileFlipTests {
    @Test func everyBitOfTheRootFile() throws {
        let workload = TransferWorkload(seed: 9, accounts: 12)
        let fileSystem = try memoryFileSystem()
        let driver = TransferDriver(workload)
        let store = try driver.open(options: testOptions(fileSystem))
        for _ in 0..<6 { try driver.commitNext(store) }
        let current = store.generation
        store.close()
        let path = "/stores/s/root"
        let original = fileSystem.contents(of: path)!
        #expect(original.count == 256)
        var flips = 0
        for bit in 0..<(256 * 8) {
            var damaged = original
            damaged[bit / 8] ^= UInt8(1) << (bit % 8)
            fileSystem.setContents(damaged, of: path)
            let slot = bit / (128 * 8)
            let context = "root file bit \(bit) (slot \(slot))"
            // The decoder: a corruption error for the damaged slot, with both checksums.
            expectCorruption(file: path, offset: UInt64(slot * 128), context) {
                "\(try RootRecord.decodeSlot(damaged, slot: slot, file: path))"
            }
            // The store: the undamaged slot's generation, exactly as committed.
            let messages = Mutex<[String]>([])
            do {
                let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(fileSystem, log: { line in
                    messages.withLock { $0.append(line) }
                }))
                let count = try workload.check(reader.read())
                #expect(reader.generation == (slot == 0 ? current - 1 : current), "\(context)")
                #expect(count == (slot == 0 ? 5 : 6), "\(context)")
                #expect(slot == 1 || messages.withLock { $0.contains { $0.contains("root slot 0") } }, "\(context): fallback not logged")
                let report = reader.verify()
                #expect(report.problems.contains { $0.file == path && $0.offset == UInt64(slot * 128) && $0.detail.contains("computed 0x") },
                        "\(context): verify: \(report.problems.prefix(2))")
                reader.close()
            } catch {
                Issue.record("\(context): \(error)")
            }
            flips += 1
        }
        fileSystem.setContents(original, of: path)
        let store2 = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        #expect(store2.verify().isClean)
        store2.close()
        print("durability A5: \(flips) root-file bit flips, all reported")
    }
}
