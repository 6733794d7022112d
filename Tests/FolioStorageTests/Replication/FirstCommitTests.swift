import Testing
import Foundation
@testable import FolioStorage
import FolioTestSupport

/// Where a shipment meets a new file it finds the file's first commit back along the chain
/// when that is short, and by the page headers otherwise: both find the same commit.
@Suite struct FirstCommitTests {
    @Test func theChainAndThePageHeadersFindTheSameFirstCommit() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        for value in 0..<3 { try store.write { try $0.put([UInt8(value)], for: [1], in: "t") } }
        _ = try store.compact()
        let layout = StoreLayout(directory: path)
        // Few commits after the compaction (found along the chain), then more than the
        // chain walk reads (found by the page headers).
        for commits in [2, ReplicationSession.chainStepsToFirstCommit + 4] {
            for value in 0..<commits { try store.write { try $0.put([UInt8(value)], for: [2], in: "t") } }
            let root = try store.read().root
            let file = try #require(
                try ReplicationSession.openSourceFile(
                    root.record.snapshotFile, layout: layout, fileSystem: POSIXFileSystem()))
            let byHeaders = try ReplicationSession.firstCommit(in: file, before: root.record.committedLength)
            let byChain = try ReplicationSession.firstCommit(
                in: file, before: root.record.committedLength, backFrom: root.record.commitPage)
            #expect(byChain == byHeaders)
            #expect(byHeaders.kind == .compaction)
            #expect(root.record.generation - byHeaders.generation >= UInt64(commits))
        }
    }
}
