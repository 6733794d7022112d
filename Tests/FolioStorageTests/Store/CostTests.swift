import Testing
@testable import FolioStorage
import FolioTestSupport

/// Cost follows the work, not the store's size (DESIGN.md invariant 4), measured by
/// counting file reads and page writes through the recording seam, never by timing.
@Suite struct CostTests {
    @Test func openingLookupAndCommitTouchFewPages() throws {
        let recording = RecordingFileSystem(wrapping: try memoryFileSystem())
        let path = "/stores/s"
        do {
            let store = try Store.open(at: path, options: testOptions(recording))
            let batch = 10_000
            for start in stride(from: 0, to: 100_000, by: batch) {
                try store.write { txn in
                    for i in start..<(start + batch) {
                        try txn.put(
                            Array(repeating: UInt8(i & 0xFF), count: 40), for: KeyEncoding.encode(Int64(i)),
                            in: "numbers")
                    }
                }
            }
            store.close()
        }
        // Open: info, root file, snapshot header, commit page.
        recording.reset()
        let store = try Store.open(at: path, options: testOptions(recording, cache: 0))
        let openReads = recording.statistics.reads
        #expect(openReads < 10, "opening a 100,000-key store read \(openReads) times")

        let depth = try store.read().descriptor(of: "numbers")!.depth
        #expect(depth >= 3)
        // A point lookup, with nothing cached, reads one page per level.
        let view = try store.read()
        _ = try view.count(in: "numbers")  // the catalog entry, read once per generation
        var rng = SplitMix64(seed: 1)
        for _ in 0..<50 {
            let before = store.ioStatistics
            let key = Int64.random(in: 0..<100_000, using: &rng)
            #expect(try view.get(KeyEncoding.encode(key), in: "numbers") != nil)
            let reads = store.ioStatistics.since(before).pagesRead
            // At least one page: with nothing cached a lookup must read (were reads of a
            // writer's pages not counted in ioStatistics, `<= depth` alone would hold at 0).
            #expect(reads >= 1 && reads <= depth, "lookup read \(reads) pages in a tree of depth \(depth)")
        }
        // A one-key commit writes the leaf-to-root path, the catalog's path and the commit
        // page, and one 128-byte root slot in place.
        let catalogDepth = 1
        for i in 0..<20 {
            let before = store.ioStatistics
            recording.reset()
            try store.write { try $0.put([1, 2, 3], for: KeyEncoding.encode(Int64(i * 4_999)), in: "numbers") }
            let written = store.ioStatistics.since(before)
            #expect(written.pagesWritten <= depth + catalogDepth + 1, "commit wrote \(written.pagesWritten) pages")
            let rootWrites = recording.operations.compactMap { operation -> Int? in
                if case .write(let path, _, let count) = operation, path.hasSuffix("/root") { return count }
                return nil
            }
            #expect(rootWrites == [128])
            #expect(written.bytesWritten < (depth + catalogDepth + 1) * StorageLimits.maximumPageSize)
        }
        #expect(store.verify().isClean)
        store.close()
    }
}
