import Testing
@testable import FolioStorage
import FolioTestSupport

/// A reader that reads a root slot while the writer rewrites it in place can find it torn
/// (a bad checksum) although nothing is damaged; the other slot is older. `refresh()` must
/// not step back to it: the reader keeps the generation it has, and moves on once the slot
/// reads whole again (Docs/Format.md §8, "torn reads").
@Suite struct TornSlotReadTests {
    @Test func aTornNewestSlotNeverMovesAReaderBack() throws {
        let memory = try memoryFileSystem()
        let writer = try Store.open(at: "/stores/s", options: testOptions(memory))
        for i in 0..<5 { try writer.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(memory))
        let seen = reader.generation
        #expect(seen == writer.generation)
        let root = try #require(memory.contents(of: "/stores/s/root"))
        let newest = (0..<2).max { slot, other in
            ((try? RootRecord.decodeSlot(root, slot: slot, file: "root").generation) ?? 0)
                < ((try? RootRecord.decodeSlot(root, slot: other, file: "root").generation) ?? 0)
        }!
        // The newest slot as a read overlapping its rewrite can see it: half old, half new.
        var torn = root
        let start = RootRecord.slotOffset(newest, fileLength: root.count)
        for index in (start + 64)..<(start + 128) { torn[index] ^= 0x5A }
        memory.setContents(torn, of: "/stores/s/root")
        #expect(
            try Store.openReadOnly(at: "/stores/s", options: testOptions(memory)).generation < seen,
            "a fresh open takes the other, older slot")
        #expect(try reader.refresh() == false)
        #expect(reader.generation == seen, "the reader did not step back")
        #expect(try reader.read().get([4], in: "t") == [4])
        // The write completes: the reader moves forward as usual.
        memory.setContents(root, of: "/stores/s/root")
        try writer.write { try $0.put([9], for: [9], in: "t") }
        #expect(try reader.refresh())
        #expect(reader.generation == writer.generation)
        reader.close()
        writer.close()
    }
}
