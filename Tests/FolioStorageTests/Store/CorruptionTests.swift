import Testing
@testable import FolioStorage
import FolioTestSupport

/// A damaged byte is reported as corruption naming file and offset, never returned as data.
@Suite struct CorruptionTests {
    /// A store with every page kind: leaves, branches, overflow pages, the catalog, commits.
    func makeStore(_ fileSystem: MemoryFileSystem) throws -> (Store, TreeModel) {
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem, cache: 0))
        let model = sampleModel(count: 800, seed: 11)
        try write(model, to: store)
        return (store, model)
    }

    /// Every byte of one page of each kind, changed to every one of 3 other values: the page
    /// fails its check (CRC-32C detects every error confined to 32 bits, so every one-byte
    /// change), with a corruption error, never a decoded page.
    @Test func everyByteOfEveryPageKindIsChecked() throws {
        let fileSystem = try memoryFileSystem()
        let (store, _) = try makeStore(fileSystem)
        let pages = try reachablePages(of: store)
        let file = fileSystem.contents(of: "/stores/s/snapshots/0000000000000001.folio")!
        var kindsSwept = Set<String>()
        var flips = 0
        for kind in ["leaf", "branch", "overflow", "commit"] {
            // The smallest page of the kind keeps the sweep fast; all bytes of it are swept.
            guard let page = pages.filter({ $0.kind == kind }).min(by: { $0.address.length < $1.address.length }) else {
                continue
            }
            let original = Array(file[Int(page.address.offset)..<Int(page.address.end)])
            try decodePage(original, at: page.address, kind: kind)
            for index in original.indices {
                for pattern: UInt8 in [0x01, 0x80, 0xFF] {
                    var damaged = original
                    damaged[index] ^= pattern
                    #expect(throws: StorageError.self, "\(kind) byte \(index) ^ \(pattern)") {
                        try decodePage(damaged, at: page.address, kind: kind)
                    }
                    flips += 1
                }
            }
            kindsSwept.insert(kind)
        }
        #expect(kindsSwept == ["leaf", "branch", "overflow", "commit"])
        #expect(flips > 3_000)
        store.close()
    }

    /// Through the public API: 300 random byte flips anywhere in the snapshot file. Reading
    /// the whole store either returns exactly the committed data (the flip hit a dead byte)
    /// or throws a corruption error naming the file; verify reports every flip that lands in
    /// a reachable page.
    @Test func randomFlipsNeverReturnWrongData() throws {
        let fileSystem = try memoryFileSystem()
        let (store, model) = try makeStore(fileSystem)
        try write(sampleModel(count: 50, seed: 12, generation: 1), to: store)  // some dead pages
        let expected = try contents(of: store.read())
        _ = model
        let pages = try reachablePages(of: store)
        let chain = try commitChain(of: store)
        store.close()
        let path = "/stores/s/snapshots/0000000000000001.folio"
        let file = fileSystem.contents(of: path)!
        var rng = SplitMix64(seed: 5)
        var detected = 0, harmless = 0
        for _ in 0..<300 {
            let offset = Int.random(in: 64..<file.count, using: &rng)
            var damaged = file
            damaged[offset] ^= UInt8.random(in: 1...255, using: &rng)
            fileSystem.setContents(damaged, of: path)
            let reachable = pages.contains { UInt64(offset) >= $0.address.offset && UInt64(offset) < $0.address.end }
            // The commit pages of the history and, in format version 2, the runs between them
            // (each commit page checksums its run): every byte from the oldest commit page in
            // the file to the committed end. Past it lie preallocated zeros, which nothing reads.
            let historyStart = chain.map(\.offset).min() ?? 0, historyEnd = chain.map(\.end).max() ?? 0
            let inHistory = UInt64(offset) >= historyStart && UInt64(offset) < historyEnd
            do {
                let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(fileSystem, cache: 0))
                let found = try contents(of: reader.read())
                #expect(found == expected, "flip at \(offset) returned different data")
                #expect(!reachable || found == expected)
                let report = reader.verify()
                // Verify also checks the commit pages of the history (the change records) and
                // the runs they checksum.
                #expect(
                    report.isClean == !(reachable || inHistory),
                    "flip at \(offset), reachable: \(reachable), \(report.problems.prefix(1))")
                if reachable { detected += 1 } else { harmless += 1 }
            } catch let error as StorageError {
                guard case .corruption(let corruption) = error else {
                    Issue.record("flip at \(offset): unexpected error \(error)")
                    continue
                }
                #expect(corruption.file == path || corruption.file.hasSuffix("/root"))
                #expect(reachable, "flip at \(offset) in a dead byte raised \(error)")
                detected += 1
            }
        }
        fileSystem.setContents(file, of: path)
        #expect(detected > 0 && harmless > 0)
    }
}
