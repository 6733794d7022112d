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

extension FirstCommitTests {
    /// A damaged commit page on the way back along the chain sends the search to the page
    /// headers instead of stopping the shipment: damage to a commit page costs only its
    /// change record (Docs/Format.md §7), and a reader of the source still opens.
    @Test func aDamagedCommitPageOnTheChainDoesNotStopAShipment() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let replicaPath = directory.child("replica")
        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        for value in 0..<3 { try store.write { try $0.put([UInt8(value)], for: [1], in: "t") } }
        let replicator = Replicator(source: path, to: DirectoryReplica(path: replicaPath))
        defer { try? replicator.close() }
        try replicator.ship()
        _ = try store.compact()
        for value in 0..<4 { try store.write { try $0.put([UInt8(value)], for: [2], in: "t") } }

        // Flip a byte inside the commit page before the newest one.
        let root = try store.read().root
        let layout = StoreLayout(directory: path)
        let file = try #require(
            try ReplicationSession.openSourceFile(
                root.record.snapshotFile, layout: layout, fileSystem: POSIXFileSystem()))
        let newest = try CommitRecord.decode(
            try file.handle.read(
                at: root.record.commitPage.offset, count: try root.record.commitPage.byteCount(file: file.path)),
            address: root.record.commitPage, file: file.path)
        let damaged = try #require(newest.previous).address
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: file.path))
        let at = damaged.offset + UInt64(damaged.length) / 2
        try handle.seek(toOffset: at)
        let byte = try #require(try handle.read(upToCount: 1)).first!
        try handle.seek(toOffset: at)
        try handle.write(contentsOf: Data([byte ^ 0xFF]))
        try handle.close()

        let byChain = try ReplicationSession.firstCommit(
            in: file, before: root.record.committedLength, backFrom: root.record.commitPage)
        #expect(byChain == (try ReplicationSession.firstCommit(in: file, before: root.record.committedLength)))
        #expect(byChain.kind == .compaction)
        let report = try replicator.ship()
        #expect(report.generation == root.record.generation)
    }
}
