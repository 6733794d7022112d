import Testing
import Foundation
@testable import FolioStorage
import FolioTestSupport

/// The `previous` link of a commit page (Docs/Format.md §1, §7): its file number alone says
/// whether there is one; a link that names a file but points into the snapshot header is
/// corrupt, and no reader reads a page there.
@Suite struct CommitLinkTests {
    let path = "/stores/s"
    var file: String { "\(path)/snapshots/0000000000000001.folio" }

    /// Rewrites the `previous` offset and length (bytes 80-91) of the commit page at
    /// `address`, resealing the page so that only the link is wrong.
    func setPreviousLink(
        offset: UInt64, length: UInt32, ofCommitAt address: PageAddress, in fileSystem: MemoryFileSystem
    ) {
        var bytes = fileSystem.contents(of: file)!
        let start = Int(address.offset)
        withUnsafeBytes(of: offset.littleEndian) { bytes.replaceSubrange((start + 80)..<(start + 88), with: $0) }
        withUnsafeBytes(of: length.littleEndian) { bytes.replaceSubrange((start + 88)..<(start + 92), with: $0) }
        let crc = bytes.withUnsafeBytes { buffer in
            PageHeader.checksum(buffer[(start + 4)..<(start + Int(address.length))], fileOffset: address.offset)
        }
        withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange(start..<(start + 4), with: $0) }
        fileSystem.setContents(bytes, of: file)
    }

    /// A store of two commits whose newest's `previous` link is set to `offset` and `length`;
    /// returns its file system and the newest commit's location.
    func storeWithPreviousLink(offset: UInt64, length: UInt32) throws -> (MemoryFileSystem, CommitLocation) {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        try store.write { try $0.put([1], for: [1], in: "t") }
        try store.write { try $0.put([2], for: [2], in: "t") }
        let newest = try store.read().commitLocation
        store.close()
        setPreviousLink(offset: offset, length: length, ofCommitAt: newest.address, in: fileSystem)
        return (fileSystem, newest)
    }

    @Test(arguments: [(UInt64(0), UInt32(0)), (0, 104), (40, 104), (63, 104), (64, 0), (64, 23)])
    func aLinkIntoTheHeaderIsCorruptAndNotFollowed(offset: UInt64, length: UInt32) throws {
        let (fileSystem, newest) = try storeWithPreviousLink(offset: offset, length: length)

        let reader = try Store.openReadOnly(at: path, options: testOptions(fileSystem))
        defer { reader.close() }
        // Replaying history reaches the damaged link: the error names the commit page that
        // holds it, not a page read at the link's offset.
        #expect {
            _ = try reader.commits(after: 1)
        } throws: { error in
            guard case StorageError.corruption(let corruption) = error else { return false }
            return corruption.offset == newest.address.offset && corruption.detail.contains("previous commit link")
        }
        let report = reader.verify()
        #expect(
            report.problems.contains {
                $0.offset == newest.address.offset && $0.detail.contains("previous commit link")
            },
            "\(report.problems)")
        #expect(
            !report.problems.contains { $0.offset < UInt64(SnapshotHeader.size) },
            "nothing is read in the header: \(report.problems)")
    }

    /// File number 0 is "none" whatever the other fields hold: the creation commit's
    /// offset and length are not interpreted.
    @Test func fileNumberZeroIsNoneWhateverTheOffset() throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        let creation = try store.read().commitLocation
        store.close()
        setPreviousLink(offset: 1234, length: 99, ofCommitAt: creation.address, in: fileSystem)
        let reader = try Store.openReadOnly(at: path, options: testOptions(fileSystem))
        defer { reader.close() }
        let commits = try reader.commits(after: 0)
        #expect(commits.map(\.generation) == [1])
        #expect(commits.first?.previous == nil)
    }

    /// A link whose page would end past the last file offset is damage the replay reports:
    /// reading ahead of it (the replay reads commit pages in blocks) must not trap.
    @Test func aLinkPastTheLastOffsetIsCorruptNotATrap() throws {
        let (fileSystem, _) = try storeWithPreviousLink(offset: UInt64.max - 50, length: 104)

        let reader = try Store.openReadOnly(at: path, options: testOptions(fileSystem))
        defer { reader.close() }
        #expect {
            _ = try reader.commits(after: 1)
        } throws: { error in
            if case StorageError.corruption = error { return true }
            if case StorageError.historyUnavailable = error { return true }
            return false
        }
    }
}
