import Testing
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// Opening after a crash (format version 2): recovery follows complete runs past the
/// root slots and stops at the first incomplete one; nothing is truncated; a damaged newest
/// slot opens at the other and follows the runs from there, and says so.
@Suite struct RecoveryTests {
    /// A store at generation G whose snapshot file also holds the run of generation G+1,
    /// written and synced but never named by a root slot (a writer killed between its sync
    /// and its slot write), cut at 200 random offsets from G's committed end to the file's
    /// end (preallocated zeros included). A read-only open stays at G (it takes slots only);
    /// a writer opens at G+1 exactly when the cut keeps the whole run, at G otherwise, with
    /// nothing truncated, and can commit again.
    @Test func tornRunsOpenAtTheLastCompleteRun() throws {
        let fileSystem = try memoryFileSystem()
        let path = "/stores/s"
        let committedModel = sampleModel(count: 600, seed: 1)
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        try write(committedModel, to: store)
        let committedGeneration = store.generation
        let rootBytes = fileSystem.contents(of: "\(path)/root")!
        let snapshot = "\(path)/snapshots/0000000000000001.folio"
        let committedLength = Int(store.currentCommit.address.end)
        try write(sampleModel(count: 400, seed: 2, generation: 1), to: store)  // the run of the "lost" commit
        let runEnd = Int(store.currentCommit.address.end)
        let laterModel = try contents(of: store.read())
        store.close()
        let fullFile = fileSystem.contents(of: snapshot)!
        #expect(runEnd > committedLength + 1000 && fullFile.count >= runEnd)

        var rng = SplitMix64(seed: 99)
        var recoveredRuns = 0
        for round in 0..<200 {
            let cut =
                round == 0
                ? fullFile.count
                : round == 1
                    ? runEnd - 1
                    : Int.random(in: committedLength...fullFile.count, using: &rng)
            fileSystem.setContents(Array(fullFile[..<cut]), of: snapshot)
            fileSystem.setContents(rootBytes, of: "\(path)/root")
            // Read-only first: it takes the slots, ignores the tail and writes nothing.
            let reader = try Store.openReadOnly(at: path, options: testOptions(fileSystem))
            #expect(reader.generation == committedGeneration)
            #expect(try contents(of: reader.read()) == committedModel, "round \(round), cut at \(cut)")
            #expect(fileSystem.contents(of: snapshot)!.count == cut)
            reader.close()
            // A writer follows the run if it is whole, truncates nothing, and can commit again.
            let messages = Mutex<[String]>([])
            let writer = try Store.open(
                at: path, options: testOptions(fileSystem, log: { line in messages.withLock { $0.append(line) } }))
            let whole = cut >= runEnd
            if whole { recoveredRuns += 1 }
            #expect(writer.generation == committedGeneration + (whole ? 1 : 0), "round \(round), cut at \(cut)")
            #expect(
                try contents(of: writer.read()) == (whole ? laterModel : committedModel),
                "round \(round), cut at \(cut)")
            #expect(whole == messages.withLock { $0.contains { $0.contains("recovered 1 commits past root slot") } })
            #expect(fileSystem.contents(of: snapshot)!.count >= cut)
            if round % 20 == 0 {
                try writer.write { try $0.put([1, 2, 3], for: [9], in: "after") }
                #expect(writer.verify().isClean)
            }
            writer.close()
        }
        #expect(recoveredRuns > 0 && recoveredRuns < 200)
    }

    /// A run left in the tail by an earlier writer never counts after the run that replaced
    /// it, even when everything but the chain says it follows: a writer commits G+1 and G+2
    /// and dies before naming them in a slot, with G+1's run torn; the next writer commits
    /// its own G+1 over it, byte for byte the same length, so the old G+2 starts right where
    /// the new G+1 ends, has the next generation and names the new G+1's commit page (same
    /// offset and length) as its previous. Only its checksum, seeded with the old G+1's
    /// chain value, tells it apart, and recovery stops before it.
    @Test func staleRunsInAReusedTailNeverChain() throws {
        let fileSystem = try memoryFileSystem()
        let path = "/stores/s"
        let snapshot = "\(path)/snapshots/0000000000000001.folio"
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        try write(sampleModel(count: 200, seed: 5), to: store)
        let base = store.generation
        let rootAtBase = fileSystem.contents(of: "\(path)/root")!
        try store.write { try $0.put([UInt8](repeating: 0xAA, count: 100), for: [1], in: "t") }
        let oldFirst = store.currentCommit
        try store.write { try $0.put([2], for: [2], in: "t") }
        store.close()

        // The old G+1 torn (its commit page's last byte), the slots back at G.
        var torn = fileSystem.contents(of: snapshot)!
        torn[Int(oldFirst.address.end) - 1] ^= 0xFF
        fileSystem.setContents(torn, of: snapshot)
        fileSystem.setContents(rootAtBase, of: "\(path)/root")
        let second = try Store.open(at: path, options: testOptions(fileSystem))
        #expect(second.generation == base)
        try second.write { try $0.put([UInt8](repeating: 0xBB, count: 100), for: [1], in: "t") }
        #expect(second.currentCommit == oldFirst, "the new G+1's commit page is where the old one was")
        let expected = try contents(of: second.read())
        second.close()

        // The slots back at G once more: recovery takes the new G+1 and stops at the old G+2.
        fileSystem.setContents(rootAtBase, of: "\(path)/root")
        let third = try Store.open(at: path, options: testOptions(fileSystem))
        #expect(third.generation == base + 1)
        #expect(try contents(of: third.read()) == expected)
        #expect(try third.read().get([2], in: "t") == nil)
        #expect(third.verify().isClean)
        third.close()
    }

    /// The newest root slot damaged (any byte): a read-only open takes the other slot, an
    /// older generation, and says so; a writer starts there too and follows the runs forward
    /// to the newest generation, losing nothing, and rewrites the damaged slot. Both slots
    /// damaged: a corruption error naming the root file.
    @Test func damagedNewestSlotFallsBackAndRecoveryFollowsTheRuns() throws {
        let fileSystem = try memoryFileSystem()
        let path = "/stores/s"
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        try write(sampleModel(count: 300, seed: 3), to: store)
        try store.write { try $0.put(Array("later".utf8), for: Array("zzz".utf8), in: "first") }
        let newestGeneration = store.generation
        let final = try contents(of: store.read())
        store.close()
        let root = fileSystem.contents(of: "\(path)/root")!
        let slots = (0..<2).map { try? RootRecord.decodeSlot(root, slot: $0, file: "root") }
        let newest = slots[0]?.generation == newestGeneration ? 0 : 1
        #expect(slots[newest]?.generation == newestGeneration)
        let olderGeneration = try #require(slots[1 - newest]?.generation)
        #expect(olderGeneration < newestGeneration)
        let slotStart = RootRecord.slotOffset(newest, fileLength: root.count)
        for offset in slotStart..<(slotStart + RootRecord.slotSize) {
            var damaged = root
            damaged[offset] ^= 0x40
            fileSystem.setContents(damaged, of: "\(path)/root")
            let messages = Mutex<[String]>([])
            let log: @Sendable (String) -> Void = { line in messages.withLock { $0.append(line) } }
            let reader = try Store.openReadOnly(at: path, options: testOptions(fileSystem, log: log))
            #expect(reader.generation == olderGeneration, "flip at \(offset)")
            #expect(messages.withLock { $0.contains { $0.contains("is unusable") } })
            reader.close()
            let writer = try Store.open(at: path, options: testOptions(fileSystem, log: log))
            #expect(writer.generation == newestGeneration, "flip at \(offset)")
            #expect(try contents(of: writer.read()) == final)
            #expect(writer.verify().isClean, "the damaged slot is rewritten")
            writer.close()
        }
        var bothDamaged = root
        bothDamaged[20] ^= 1
        bothDamaged[RootRecord.slotStride + 20] ^= 1
        fileSystem.setContents(bothDamaged, of: "\(path)/root")
        #expect {
            _ = try Store.openReadOnly(at: path, options: testOptions(fileSystem))
        } throws: { error in
            guard case StorageError.corruption(let corruption) = error else { return false }
            return corruption.file.hasSuffix("/root")
        }
    }
}
