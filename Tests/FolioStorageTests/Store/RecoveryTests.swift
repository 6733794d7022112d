import Testing
import Synchronization
import FolioStorage
import FolioTestSupport

/// Opening after a crash: bytes past the committed length are ignored and truncated; a
/// damaged current root slot opens at the previous root, and says so.
@Suite struct RecoveryTests {
    /// A store at generation G whose snapshot file also holds the pages of an uncommitted
    /// generation G+1 (as if the writer died before replacing the root), truncated at 200
    /// random offsets between G's committed end and the file's end: every open is at G with
    /// all its data, the tail is discarded, and the next commit works.
    @Test func truncatedTailsOpenAtTheLastCommit() throws {
        let fileSystem = try memoryFileSystem()
        let path = "/stores/s"
        let committedModel = sampleModel(count: 600, seed: 1)
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        try write(committedModel, to: store)
        let committedGeneration = store.generation
        let rootBytes = fileSystem.contents(of: "\(path)/root")!
        let snapshot = "\(path)/snapshots/0000000000000001.folio"
        let committedLength = fileSystem.contents(of: snapshot)!.count
        try write(sampleModel(count: 400, seed: 2, generation: 1), to: store)  // pages of the "lost" commit
        store.close()
        let fullFile = fileSystem.contents(of: snapshot)!
        #expect(fullFile.count > committedLength + 1000)

        var rng = SplitMix64(seed: 99)
        for round in 0..<200 {
            let cut = round == 0 ? fullFile.count : Int.random(in: committedLength...fullFile.count, using: &rng)
            fileSystem.setContents(Array(fullFile[..<cut]), of: snapshot)
            fileSystem.setContents(rootBytes, of: "\(path)/root")
            // Read-only first: it ignores the tail and writes nothing.
            let reader = try Store.openReadOnly(at: path, options: testOptions(fileSystem))
            #expect(reader.generation == committedGeneration)
            #expect(try contents(of: reader.read()) == committedModel, "round \(round), cut at \(cut)")
            #expect(fileSystem.contents(of: snapshot)!.count == cut)
            reader.close()
            // A writer truncates the tail and can commit again.
            let messages = Mutex<[String]>([])
            let writer = try Store.open(at: path, options: testOptions(fileSystem, log: { line in messages.withLock { $0.append(line) } }))
            #expect(fileSystem.contents(of: snapshot)!.count == committedLength)
            #expect(cut == committedLength || messages.withLock { $0.contains { $0.contains("past the last commit") } })
            #expect(try contents(of: writer.read()) == committedModel)
            if round % 20 == 0 {
                try writer.write { try $0.put([1, 2, 3], for: [9], in: "after") }
                #expect(writer.verify().isClean)
            }
            writer.close()
        }
    }

    /// Slot 0 damaged (any byte): opens at slot 1, the previous generation, with all its
    /// data, and the log says so. Both slots damaged: a corruption error naming the root file.
    @Test func damagedRootSlotFallsBackToThePreviousRoot() throws {
        let fileSystem = try memoryFileSystem()
        let path = "/stores/s"
        let first = sampleModel(count: 300, seed: 3)
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        try write(first, to: store)
        let firstGeneration = store.generation
        try store.write { try $0.put(Array("later".utf8), for: Array("zzz".utf8), in: "first") }
        store.close()
        let root = fileSystem.contents(of: "\(path)/root")!
        for offset in stride(from: 0, to: 128, by: 1) {
            var damaged = root
            damaged[offset] ^= 0x40
            fileSystem.setContents(damaged, of: "\(path)/root")
            let messages = Mutex<[String]>([])
            let reopened = try Store.openReadOnly(at: path, options: testOptions(fileSystem, log: { line in
                messages.withLock { $0.append(line) }
            }))
            #expect(reopened.generation == firstGeneration, "flip at \(offset)")
            #expect(try contents(of: reopened.read()) == first)
            #expect(messages.withLock { $0.contains { $0.contains("root slot 0") && $0.contains("previous root") } })
        }
        var bothDamaged = root
        bothDamaged[20] ^= 1
        bothDamaged[128 + 20] ^= 1
        fileSystem.setContents(bothDamaged, of: "\(path)/root")
        #expect {
            _ = try Store.openReadOnly(at: path, options: testOptions(fileSystem))
        } throws: { error in
            guard case StorageError.corruption(let corruption) = error else { return false }
            return corruption.file.hasSuffix("/root")
        }
    }
}
