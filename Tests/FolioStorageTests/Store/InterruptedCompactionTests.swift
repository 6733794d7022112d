import Testing
import Synchronization
import FolioStorage
import FolioTestSupport

/// A compaction interrupted before its root switch leaves its copy, a file numbered above
/// the current one that no root slot names (Docs/Durability.md §3 step 8). The next writer
/// open reclaims it (a header-only file keeps its number taken); a read-only open never
/// touches it; a newer file that a slot names is kept.
@Suite struct InterruptedCompactionTests {
    static let path = "/stores/s"
    static let copy = "/stores/s/snapshots/0000000000000002.folio"

    /// 1,500 records of 1 KiB: the copy spans several 1 MiB write chunks.
    func fill(_ store: Store) throws {
        let value = [UInt8](repeating: 0x33, count: 1_000)
        try store.write { txn in
            for i in 0..<1_500 { try txn.put(value, for: Array("record-\(i)".utf8), in: "t") }
        }
    }

    func snapshotBytes(_ memory: MemoryFileSystem) throws -> [String: Int] {
        var sizes: [String: Int] = [:]
        for name in try memory.contentsOfDirectory("\(Self.path)/snapshots") {
            sizes[name] = memory.contents(of: "\(Self.path)/snapshots/\(name)")?.count ?? 0
        }
        return sizes
    }

    /// `complete`: the copy is whole and synced, the root switch fails (its slot write);
    /// otherwise the copy stops part-way (a full disk at its second chunk, after the header
    /// and the first) and cannot even be removed.
    @Test(arguments: [true, false])
    func anInterruptedCompactionsCopyIsReclaimedAtTheNextWriterOpen(complete: Bool) throws {
        let memory = try memoryFileSystem()
        let faults = FaultInjectingFileSystem(wrapping: memory, countedKinds: [.write])
        let store = try Store.open(at: Self.path, options: testOptions(faults))
        try fill(store)
        let generation = store.generation
        let live = try store.statistics().liveBytes
        if complete {
            faults.faultedPaths = { $0 == "\(Self.path)/root" }
            faults.plan = FaultPlan(failingCall: faults.callCount + 1)
        } else {
            faults.faultedPaths = { $0 == Self.copy }
            faults.plan = FaultPlan(failingCall: faults.callCount + 3, kind: .noSpace, persistence: .persistent)
        }
        #expect(throws: StorageError.self) { try store.compact() }
        store.close()
        faults.plan = nil
        faults.faultedPaths = nil
        let left = try #require(memory.contents(of: Self.copy)?.count, "the interrupted copy is on disk")
        #expect(left > 64 << 10, "a good part of the copy was written")

        // A read-only open deletes nothing.
        let reader = try Store.openReadOnly(at: Self.path, options: testOptions(memory))
        reader.close()
        #expect(memory.contents(of: Self.copy)?.count == left)

        let messages = Mutex<[String]>([])
        let writer = try Store.open(
            at: Self.path, options: testOptions(memory, log: { line in messages.withLock { $0.append(line) } }))
        defer { writer.close() }
        #expect(writer.generation == generation)
        #expect(memory.contents(of: Self.copy)?.count == 64, "reclaimed to its header, its number kept")
        #expect(
            messages.withLock { $0.contains { $0.contains("reclaiming 0000000000000002.folio") } },
            "\(messages.withLock { $0 })")
        // The space bound counts every snapshot file: the copy no longer adds the live size.
        let sizes = try snapshotBytes(memory)
        let total = sizes.values.reduce(0, +)
        #expect(UInt64(total) <= 2 * live + (4 << 20) + 64, "\(sizes)")
        #expect(try writer.read().count(in: "t") == 1_500)
        #expect(writer.verify().isClean)
        // A later compaction numbers its file above the reclaimed one.
        try writer.compact()
        #expect(writer.currentCommit.fileNumber == 3)
        #expect(writer.verify().isClean)
    }

    /// Once a compaction numbers its file above a reclaimed copy, the header-only file is
    /// an older file like any other, but an empty one: the next writer open keeps the file
    /// that compaction replaced for readers (the newest older file with pages) and removes
    /// the header-only one.
    @Test func aReclaimedCopyDoesNotDisplaceTheReplacedFile() throws {
        let memory = try memoryFileSystem()
        let faults = FaultInjectingFileSystem(wrapping: memory, countedKinds: [.write])
        var options = testOptions(faults)
        options.retention = SnapshotRetention(gracePeriod: .seconds(600), maximumRetainedBytes: .max)
        var store = try Store.open(at: Self.path, options: options)
        try fill(store)
        faults.faultedPaths = { $0 == "\(Self.path)/root" }
        faults.plan = FaultPlan(failingCall: faults.callCount + 1)
        #expect(throws: StorageError.self) { try store.compact() }
        store.close()
        faults.plan = nil
        faults.faultedPaths = nil
        store = try Store.open(at: Self.path, options: options)
        #expect(memory.contents(of: Self.copy)?.count == 64, "file 2 reclaimed")
        try store.compact()  // file 3 replaces file 1; file 2 is header-only below it
        #expect(store.currentCommit.fileNumber == 3)
        store.close()

        store = try Store.open(at: Self.path, options: options)
        defer { store.close() }
        let names = try memory.contentsOfDirectory("\(Self.path)/snapshots").sorted()
        #expect(
            names == ["0000000000000001.folio", "0000000000000003.folio"],
            "the replaced file 1 is kept for its grace period, the empty file 2 goes: \(names)")
        #expect(store.verify().isClean)
    }

    /// A newer file that a root slot names is not an orphan: here slot 0 names file 2 but
    /// its header is damaged, so the store opens at slot 1 (file 1); file 2 is kept whole.
    @Test func aNewerFileASlotNamesIsKept() throws {
        let memory = try memoryFileSystem()
        var options = testOptions(memory)
        options.retention = SnapshotRetention(gracePeriod: .seconds(600))
        let store = try Store.open(at: Self.path, options: options)
        try fill(store)
        let before = memory.contents(of: "\(Self.path)/root")!
        try store.compact()
        store.close()
        try putOlderRoot(from: before, intoSlotOneOf: "\(Self.path)/root", in: memory)
        var copy = memory.contents(of: Self.copy)!
        copy[20] ^= 0xFF  // the header's file number
        memory.setContents(copy, of: Self.copy)
        let messages = Mutex<[String]>([])
        options.log = { line in messages.withLock { $0.append(line) } }
        for _ in 0..<2 {
            let writer = try Store.open(at: Self.path, options: options)
            writer.close()
            #expect(memory.contents(of: Self.copy) == copy, "kept whole")
        }
        #expect(
            messages.withLock {
                $0.contains { $0.contains("keeping 0000000000000002.folio") && $0.contains("a root slot names it") }
            },
            "\(messages.withLock { $0 })")
    }
}
