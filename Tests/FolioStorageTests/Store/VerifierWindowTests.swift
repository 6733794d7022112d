import Testing
@testable import FolioStorage
import FolioTestSupport

/// Verification checks overlap in bounded windows of extents (invariant 5) and still finds
/// overlapping and unaccounted pages, whatever the window size.
@Suite struct VerifierWindowTests {
    private func sampleStore() throws -> Store {
        let store = try Store.open(at: "/stores/s", options: testOptions(try memoryFileSystem()))
        try store.write { txn in
            for i in 0..<600 {
                try txn.put([UInt8](repeating: UInt8(i & 0xFF), count: 60), for: KeyEncoding.encode(Int64(i)), in: "t")
            }
            try txn.put([UInt8](repeating: 7, count: 5_000), for: bytes("big"), in: "blobs")
        }
        try store.write { txn in
            for i in stride(from: 0, to: 600, by: 7) { try txn.remove(KeyEncoding.encode(Int64(i)), from: "t") }
        }
        return store
    }

    private func problems(
        _ store: Store, _ record: RootRecord, capacity: Int
    ) throws -> (problems: [String], pages: Int) {
        let root = try store.read().root
        var verifier = TreeVerifier(pages: root.pages, total: record.liveBytes, progress: nil, extentCapacity: capacity)
        verifier.checkTrees(record)
        return (verifier.problems.map(\.detail), verifier.pagesChecked)
    }

    static let capacities = [1, 2, 3, 5, 64, 1 << 16]

    @Test(arguments: capacities) func aSoundStoreIsCleanInEveryWindowSize(capacity: Int) throws {
        let store = try sampleStore()
        defer { store.close() }
        let record = try store.read().root.record
        let (found, pages) = try problems(store, record, capacity: capacity)
        #expect(found.isEmpty, "\(found)")
        #expect(pages > 10)
    }

    /// The commit page made to point at a reachable leaf: two reachable pages at one
    /// offset, which may fall anywhere relative to a window boundary.
    @Test(arguments: capacities) func overlappingPagesAreFound(capacity: Int) throws {
        let store = try sampleStore()
        defer { store.close() }
        var record = try store.read().root.record
        let leaves = try probedPages(of: store).filter { $0.kind == "leaf" }.map(\.address)
        for leaf in [leaves.first!, leaves[leaves.count / 2], leaves.last!] {
            record.commitPage = leaf
            let (found, _) = try problems(store, record, capacity: capacity)
            #expect(found.contains { $0.contains("overlaps another reachable page") }, "capacity \(capacity): \(found)")
        }
    }

    /// Live bytes the reachable pages do not account for (an unreachable page counted as
    /// live) are reported.
    @Test(arguments: capacities) func unaccountedLiveBytesAreFound(capacity: Int) throws {
        let store = try sampleStore()
        defer { store.close() }
        var record = try store.read().root.record
        record.liveBytes += 100
        let (found, _) = try problems(store, record, capacity: capacity)
        #expect(found.contains { $0.contains("live bytes") }, "\(found)")
    }

    @Test func aWindowKeepsTheSmallestPositionsAfterItsStart() {
        var window = ExtentWindow(capacity: 3, after: ExtentWindow.Position(offset: 20, visit: 1))
        for offset: UInt64 in [50, 10, 20, 40, 20, 30, 60, 25] { window.add(offset: offset, length: 1) }
        // (20, visit 2) and (20, visit 4) are after (20, visit 1); 10 is before it.
        #expect(window.sorted().map(\.offset) == [20, 20, 25])
        #expect(window.visits == 8)
    }
}
