import Testing
@testable import FolioStorage
import FolioTestSupport

/// `RootSlots.reload()`: a writer that did not write the slots (another process did, while
/// this one held no lock) takes the anchor from their bytes. Whatever pair it finds, the
/// slot it writes next is never the only durable one, and the lag it counts is from a
/// durable slot.
@Suite struct RootSlotsReloadTests {
    /// A store's root file and a root record from it, to craft slot pairs from.
    struct Fixture {
        let memory: MemoryFileSystem
        let recording: RecordingFileSystem
        let layout = StoreLayout(directory: "/stores/s")
        let record: RootRecord

        init() throws {
            memory = try memoryFileSystem()
            let store = try Store.open(at: "/stores/s", options: testOptions(memory))
            for i in 0..<3 { try store.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
            store.close()
            let bytes = memory.contents(of: "/stores/s/root")!
            record = try (0..<2).compactMap { try? RootRecord.decodeSlot(bytes, slot: $0, file: "root") }
                .max { $0.generation < $1.generation }!
            recording = RecordingFileSystem(wrapping: memory)
        }

        /// The root record with another generation (and format version).
        func record(generation: UInt64, version: UInt32? = nil) -> RootRecord {
            var record = record
            record.generation = generation
            if let version { record.formatVersion = version }
            return record
        }

        /// Opens the slots as a writer does at open, then puts `slots` in the file as another
        /// writer would (nil: empty; `.some(nil)` is not used: a damaged slot is bytes).
        func slotsAfterAnotherWriter(_ contents: [[UInt8]?]) throws -> RootSlots {
            let slots = try RootSlots(layout: layout, fileSystem: recording, opened: record)
            var file = [UInt8](repeating: 0, count: RootRecord.fileSize)
            for (index, bytes) in contents.enumerated() {
                guard let bytes else { continue }
                file.replaceSubrange(
                    (index * RootRecord.slotStride)..<(index * RootRecord.slotStride + bytes.count), with: bytes)
            }
            memory.setContents(file, of: "/stores/s/root")
            recording.reset()
            return slots
        }

        func rootSyncs() -> Int { recording.statistics.syncs }

        /// The slot a write of a newer root goes to.
        func slotWritten(by slots: inout RootSlots, generation: UInt64) throws -> Int {
            let before = memory.contents(of: "/stores/s/root")!
            try slots.write(record(generation: generation))
            let after = memory.contents(of: "/stores/s/root")!
            let changed = (0..<2).filter { slot in
                let range = (slot * RootRecord.slotStride)..<(slot * RootRecord.slotStride + RootRecord.slotSize)
                return before[range] != after[range]
            }
            #expect(changed.count == 1)
            return changed.first ?? -1
        }
    }

    @Test func twoSlotsTheOlderIsTheAnchor() throws {
        let fixture = try Fixture()
        let g = fixture.record.generation
        for newerSlot in 0..<2 {
            var pair: [[UInt8]?] = [nil, nil]
            pair[newerSlot] = fixture.record(generation: g + 10).encodedSlot()
            pair[1 - newerSlot] = fixture.record(generation: g + 4).encodedSlot()
            var slots = try fixture.slotsAfterAnotherWriter(pair)
            let newest = try slots.reload()
            #expect(newest.generation == g + 10)
            #expect(slots.anchor == 1 - newerSlot && slots.anchorGeneration == g + 4)
            #expect(slots.unsyncedWrites == 1 && fixture.rootSyncs() == 0, "nothing synced: the older is durable")
            // The next write goes over the newer (perhaps unsynced) slot, never the older.
            #expect(try fixture.slotWritten(by: &slots, generation: g + 11) == newerSlot)
            // The lag counts from the older: 64 past it is due.
            #expect(!slots.syncIsDue(beforeWriting: g + 4 + 63))
            #expect(slots.syncIsDue(beforeWriting: g + 4 + 64))
        }
    }

    @Test func oneValidSlotIsTheAnchorWhetherTheOtherIsEmptyOrTorn() throws {
        let fixture = try Fixture()
        let g = fixture.record.generation
        var torn = fixture.record(generation: g + 9).encodedSlot()
        torn[40] ^= 0xFF
        for other in [nil, torn] as [[UInt8]?] {
            for validSlot in 0..<2 {
                var pair: [[UInt8]?] = [nil, nil]
                pair[validSlot] = fixture.record(generation: g + 7).encodedSlot()
                pair[1 - validSlot] = other
                var slots = try fixture.slotsAfterAnotherWriter(pair)
                #expect(try slots.reload().generation == g + 7)
                #expect(slots.anchor == validSlot && slots.anchorGeneration == g + 7 && slots.unsyncedWrites == 0)
                #expect(try fixture.slotWritten(by: &slots, generation: g + 8) == 1 - validSlot)
            }
        }
    }

    @Test func slotsOfOneGenerationEitherIsTheAnchor() throws {
        let fixture = try Fixture()
        let g = fixture.record.generation
        let slot = fixture.record(generation: g + 3).encodedSlot()
        var slots = try fixture.slotsAfterAnotherWriter([slot, slot])
        #expect(try slots.reload().generation == g + 3)
        #expect(slots.anchorGeneration == g + 3 && slots.unsyncedWrites == 0)
        #expect(try fixture.slotWritten(by: &slots, generation: g + 4) == 1 - slots.anchor)
    }

    /// A version 3 slot beside a version 2 one: it may be the store's only version 3 slot,
    /// not known durable, so the root file is synced first and it is the anchor.
    @Test func aNewerVersionSlotIsSyncedAndKept() throws {
        let fixture = try Fixture()
        let g = fixture.record.generation
        for newerSlot in 0..<2 {
            var pair: [[UInt8]?] = [nil, nil]
            pair[newerSlot] = fixture.record(generation: g + 6, version: 3).encodedSlot()
            pair[1 - newerSlot] = fixture.record(generation: g + 5, version: 2).encodedSlot()
            var slots = try fixture.slotsAfterAnotherWriter(pair)
            #expect(try slots.reload().formatVersion == 3)
            #expect(fixture.rootSyncs() == 1, "synced before anything is written")
            #expect(slots.anchor == newerSlot && slots.anchorGeneration == g + 6)
            #expect(slots.formatVersion == 3)
            #expect(try fixture.slotWritten(by: &slots, generation: g + 7) == 1 - newerSlot)
        }
    }

    @Test func noValidSlotIsCorruption() throws {
        let fixture = try Fixture()
        var torn = fixture.record.encodedSlot()
        torn[10] ^= 1
        var slots = try fixture.slotsAfterAnotherWriter([torn, nil])
        #expect { try slots.reload() } throws: { error in
            if case StorageError.corruption = error { return true }
            return false
        }
    }
}
