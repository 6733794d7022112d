import Testing
import Foundation
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// Edge cases of the on-disk format that a reader written from Docs/Format.md alone must get
/// right: each test pins one of them.
@Suite struct FormatEdgeTests {
    let path = "/stores/s"

    /// A damaged current commit page costs its change record, not the generation: the store
    /// opens at the newest generation with all its data, and verify names the page.
    @Test func damagedCommitPageStillOpensTheCurrentGeneration() throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        let model = sampleModel(count: 200, seed: 1)
        try write(model, to: store)
        let commitPage = try store.read().commitLocation.address
        let generation = store.generation
        store.close()
        let file = "\(path)/snapshots/0000000000000001.folio"
        var bytes = fileSystem.contents(of: file)!
        bytes[Int(commitPage.offset) + 40] ^= 0x10
        fileSystem.setContents(bytes, of: file)
        let reader = try Store.openReadOnly(at: path, options: testOptions(fileSystem))
        #expect(reader.generation == generation)
        #expect(try contents(of: reader.read()) == model)
        #expect(throws: StorageError.self) { try reader.read().changes() }
        let report = reader.verify()
        #expect(report.problems.contains { $0.offset == commitPage.offset && $0.detail.contains("checksum") })
    }

    /// Closing the writer keeps replaced snapshot files for their grace period (a reader in
    /// another process may be opening one); with no grace they go at once.
    @Test func closingHonoursTheRetentionGracePeriod() throws {
        for (grace, expectedFiles) in [(Duration.seconds(60), 2), (.zero, 1)] {
            let fileSystem = try memoryFileSystem()
            var options = testOptions(fileSystem)
            options.retention = SnapshotRetention(gracePeriod: grace)
            let store = try Store.open(at: path, options: options)
            try write(sampleModel(count: 100, seed: 2), to: store)
            try store.compact()
            store.close()
            #expect(try fileSystem.contentsOfDirectory("\(path)/snapshots").count == expectedFiles, "grace \(grace)")
        }
    }

    /// After a compaction, slot 0 damaged: the writer opens at slot 1 (the old file) and
    /// keeps the compacted file rather than deleting it as an orphan; its next compaction
    /// writes a new file above it.
    @Test func fallbackAfterCompactionKeepsTheNewerFile() throws {
        let fileSystem = try memoryFileSystem()
        var options = testOptions(fileSystem)
        options.retention = SnapshotRetention(gracePeriod: .seconds(60))
        let store = try Store.open(at: path, options: options)
        try write(sampleModel(count: 100, seed: 3), to: store)
        let before = fileSystem.contents(of: "\(path)/root")!
        try store.compact()
        store.close()
        try putOlderRoot(from: before, intoSlotOneOf: "\(path)/root", in: fileSystem)
        var root = fileSystem.contents(of: "\(path)/root")!
        root[30] ^= 1
        fileSystem.setContents(root, of: "\(path)/root")
        let messages = Mutex<[String]>([])
        options.log = { line in messages.withLock { $0.append(line) } }
        let reopened = try Store.open(at: path, options: options)
        #expect(fileSystem.contents(of: "\(path)/snapshots/0000000000000002.folio") != nil)
        #expect(messages.withLock { $0.contains { $0.contains("keeping 0000000000000002.folio") } })
        try reopened.compact()
        #expect(fileSystem.contents(of: "\(path)/snapshots/0000000000000003.folio") != nil)
        #expect(reopened.verify().isClean)
        reopened.close()
    }

    /// The info file's format version must be a whole number from 1 to the supported
    /// version; anything else is refused with a clear error.
    @Test(arguments: ["true", "1.9", "0", "4294967297", "-1", "\"1\""])
    func malformedInfoVersionsAreRefused(version: String) throws {
        let fileSystem = try memoryFileSystem()
        try Store.open(at: path, options: testOptions(fileSystem)).close()
        fileSystem.setContents(
            Array("{\"format\":\"folio-store\",\"formatVersion\":\(version)}".utf8), of: "\(path)/info")
        #expect {
            _ = try Store.openReadOnly(at: path, options: testOptions(fileSystem))
        } throws: { error in
            if case StorageError.notAStore = error { return true }
            return false
        }
    }

    @Test func newerFormatVersionsAreRefused() throws {
        let fileSystem = try memoryFileSystem()
        try Store.open(at: path, options: testOptions(fileSystem)).close()
        fileSystem.setContents(Array("{\"format\":\"folio-store\",\"formatVersion\":4}".utf8), of: "\(path)/info")
        #expect(throws: StorageError.unsupportedFormatVersion(path: path, found: 4, supported: 3)) {
            _ = try Store.open(at: path, options: testOptions(fileSystem))
        }
    }

    /// Only the names the engine writes count as snapshot files: a stray upper-case or
    /// signed name is left alone and does not stop a writer from opening.
    @Test func strayFileNamesInSnapshotsAreIgnored() throws {
        let fileSystem = try memoryFileSystem()
        try Store.open(at: path, options: testOptions(fileSystem)).close()
        for name in ["000000000000000A.folio", "+00000000000000a.folio", "notes.txt"] {
            fileSystem.setContents([1, 2, 3], of: "\(path)/snapshots/\(name)")
        }
        #expect(StoreLayout.snapshotNumber(fromName: "000000000000000a.folio") == 10)
        #expect(StoreLayout.snapshotNumber(fromName: "000000000000000A.folio") == nil)
        #expect(StoreLayout.snapshotNumber(fromName: "+00000000000000a.folio") == nil)
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        try store.write { try $0.put([1], for: [1], in: "t") }
        try store.compact()
        store.close()
        #expect(fileSystem.contents(of: "\(path)/snapshots/000000000000000A.folio") == [1, 2, 3])
    }

    /// Tree names are compared as bytes, like the catalog stores them: two canonically
    /// equivalent spellings, equal as Swift strings, are two different trees everywhere.
    @Test func canonicallyEquivalentTreeNamesAreDistinct() throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        let composed = "caf\u{e9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed)
        try store.write { txn in
            try txn.put([1], for: [1], in: composed)
            try txn.put([2], for: [2], in: decomposed)
            #expect(try txn.count(in: composed) == 1)
            #expect(try txn.count(in: decomposed) == 1)
            #expect(try txn.treeNames().count == 2)
        }
        let view = try store.read()
        #expect(try view.get([1], in: composed) == [1])
        #expect(try view.get([1], in: decomposed) == nil)
        #expect(try view.get([2], in: decomposed) == [2])
        #expect(try view.trees().count == 2)
        #expect(store.verify().isClean)
        store.close()
    }
}

/// Replaced snapshot files do not pile up under short-lived writers (each `folio compact`
/// is one): an opening writer keeps only the newest replaced file.
@Suite struct RetentionTests {
    @Test func shortLivedWritersLeaveAtMostTwoFiles() throws {
        let fileSystem = try memoryFileSystem()
        var options = testOptions(fileSystem)
        options.retention = SnapshotRetention(gracePeriod: .seconds(3600))
        for round in 0..<5 {
            let store = try Store.open(at: "/stores/s", options: options)
            try store.write { try $0.put([UInt8(round)], for: [UInt8(round)], in: "t") }
            try store.compact()
            store.close()
        }
        let store = try Store.open(at: "/stores/s", options: options)
        let files = try fileSystem.contentsOfDirectory("/stores/s/snapshots")
        #expect(files == ["0000000000000005.folio", "0000000000000006.folio"])
        #expect(try store.read().count(in: "t") == 5)
        #expect(store.verify().isClean)
        store.close()
    }

    /// One writer compacting faster than the grace period (a bulk load) keeps at most the
    /// retention's number of replaced files, the newest ones: the file root slot 1 names
    /// stays, so the fallback root still opens.
    @Test func quickCompactionsKeepAtMostTheRetainedFileLimit() throws {
        for limit in [1, 2, 3] {
            let fileSystem = try memoryFileSystem()
            var options = testOptions(fileSystem)
            options.retention = SnapshotRetention(gracePeriod: .seconds(3600), maximumRetainedFiles: limit)
            let store = try Store.open(at: "/stores/s", options: options)
            for round in 0..<6 {
                try store.write { try $0.put([UInt8(round)], for: [UInt8(round)], in: "t") }
                try store.compact()
                let numbers = try fileSystem.contentsOfDirectory("/stores/s/snapshots").compactMap(
                    StoreLayout.snapshotNumber(fromName:)
                ).sorted()
                let current = UInt64(round + 2)
                let kept = UInt64(max(1, Int(current) - limit))...current
                #expect(numbers == Array(kept), "limit \(limit), round \(round)")
            }
            #expect(store.verify().isClean)
            store.close()
            // Either slot damaged, the other opens: the slot that names the replaced file
            // (the last commit before the compaction) names a file that was kept.
            let root = fileSystem.contents(of: "/stores/s/root")!
            for slot in 0..<2 {
                var damaged = root
                damaged[RootRecord.slotOffset(slot, fileLength: root.count) + 30] ^= 1
                fileSystem.setContents(damaged, of: "/stores/s/root")
                let reopened = try Store.openReadOnly(at: "/stores/s", options: options)
                #expect(try reopened.read().count(in: "t") == 6, "both slots hold the last transaction")
                let problems = reopened.verify().problems
                #expect(
                    problems.count == 1 && problems.allSatisfy { "\($0)".contains("root slot \(slot)") },
                    "only the damage done: \(problems)")
                reopened.close()
            }
        }
    }
}
