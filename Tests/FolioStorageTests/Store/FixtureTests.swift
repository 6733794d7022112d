import Testing
import Foundation
@testable import FolioStorage
import FolioTestSupport

/// Stores written by each format version, committed under Fixtures/v<N>/engine-basic. Every
/// later version of Folio must keep reading them exactly (and writing to a copy of them).
/// `FOLIO_WRITE_FIXTURES=1 swift test --filter "FolioStorageTests\.FixtureTests"` writes the
/// current version's again (a looser filter also runs the Folio-level fixture writers, which
/// write Fixtures/v2); never do that for a released format version (Fixtures/v1 and v2 are
/// frozen).
///
/// The version 3 fixture holds the same contents, written with a change record key limit
/// of 100: its first two commits (in the file the compaction replaced) and the commit of
/// generation 5, which rewrites every number with its own value in the current file, record
/// "numbers" wholesale; generation 6 lists its one key.
@Suite(.serialized) struct FixtureTests {
    static func fixture(_ version: String) -> String {
        ProjectExecutable.packageRoot() + "/Fixtures/\(version)/engine-basic"
    }
    static let versions = ["v1", "v2", "v3"]
    /// The wholesale commit the version 3 fixture adds before its last.
    static func extraCommits(_ version: String) -> UInt64 { version == "v3" ? 1 : 0 }

    static func blob(_ i: Int, _ length: Int) -> [UInt8] { (0..<length).map { UInt8(($0 * 7 + i) % 256) } }

    /// What the fixture holds, built the way the fixture was written.
    static func expectedModel() -> TreeModel {
        var model = TreeModel()
        for i in 0..<2_000 where i % 7 != 0 {
            model.put(Array("n\(i)".utf8), for: KeyEncoding.encode(Int64(i)), in: "numbers")
        }
        model.put(Array("after".utf8), for: KeyEncoding.encode(Int64(1_000_000)), in: "numbers")
        for i in 0..<3 { model.put(blob(i, i == 1 ? 100 : 5_000), for: Array("b\(i)".utf8), in: "blobs") }
        return model
    }

    static func writeFixture(at path: String) throws {
        var options = testOptions()
        options.changeRecordKeyLimit = 100
        let store = try Store.open(at: path, options: options)
        try store.write { txn in
            for i in 0..<2_000 { try txn.put(Array("n\(i)".utf8), for: KeyEncoding.encode(Int64(i)), in: "numbers") }
            for i in 0..<3 { try txn.put(blob(i, 5_000), for: Array("b\(i)".utf8), in: "blobs") }
            for i in 0..<10 { try txn.put([UInt8(i)], for: [UInt8(i)], in: "temporary") }
        }
        try store.write { txn in
            for i in stride(from: 0, to: 2_000, by: 7) { try txn.remove(KeyEncoding.encode(Int64(i)), from: "numbers") }
            try txn.dropTree("temporary")
            try txn.put(blob(1, 100), for: Array("b1".utf8), in: "blobs")
        }
        try store.compact()
        try store.write { txn in
            for i in 0..<2_000 where i % 7 != 0 {
                try txn.put(Array("n\(i)".utf8), for: KeyEncoding.encode(Int64(i)), in: "numbers")
            }
        }
        try store.write { try $0.put(Array("after".utf8), for: KeyEncoding.encode(Int64(1_000_000)), in: "numbers") }
        store.close()
    }

    @Test func writesFixtureWhenAsked() throws {
        guard ProcessInfo.processInfo.environment["FOLIO_WRITE_FIXTURES"] == "1" else { return }
        let fixture = Self.fixture("v3")
        try? FileManager.default.removeItem(atPath: fixture)
        try Self.writeFixture(at: fixture)
        try? FileManager.default.removeItem(atPath: fixture + "/lock")
    }

    @Test(arguments: versions)
    func fixtureReadsExactly(version: String) throws {
        // Read-only, in place: reading writes nothing, so the fixture stays untouched.
        let store = try Store.openReadOnly(at: Self.fixture(version), options: testOptions())
        let extra = Self.extraCommits(version)
        #expect(store.generation == 5 + extra)
        #expect(try store.describe().rootFormatVersion == (version == "v3" ? 3 : version == "v2" ? 2 : 1))
        let view = try store.read()
        #expect(try view.trees().map(\.name) == ["blobs", "numbers"])
        #expect(try contents(of: view) == Self.expectedModel())
        #expect(
            try view.changes()
                == ChangeRecord(trees: [
                    .init(
                        tree: "numbers",
                        entries: [
                            .init(key: KeyEncoding.encode(Int64(1_000_000)), kind: .created)
                        ])
                ]))
        if extra > 0 {
            // The wholesale commit, read back from its commit page.
            let commits = try store.commits(after: 4)
            #expect(commits.map(\.generation) == [5, 6])
            #expect(commits.first?.changes == ChangeRecord(trees: [.wholesale("numbers")]))
        }
        let report = store.verify()
        #expect(report.isClean, "\(report.problems)")
        #expect(report.commitsChecked == 2 + Int(extra))  // the compaction and the commits after it
    }

    @Test(arguments: versions)
    func fixtureAcceptsWrites(version: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let copy = directory.child("store")
        try FileManager.default.copyItem(atPath: Self.fixture(version), toPath: copy)
        let store = try Store.open(at: copy, options: testOptions())
        try store.write { try $0.put([1], for: [1], in: "new") }
        // The first commit leaves a version 2 root file, whichever version wrote the store,
        // and the store's version is what it was (at least 2): a commit recording nothing
        // wholesale upgrades nothing more.
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy + "/root")).count == RootRecord.fileSize)
        #expect(try store.describe().rootFormatVersion == (version == "v3" ? 3 : 2))
        try store.compact()
        var model = Self.expectedModel()
        model.put([1], for: [1], in: "new")
        #expect(try contents(of: store.read()) == model)
        #expect(store.verify().isClean)
        store.close()
    }

    /// A version 1 store's first commit upgrades its root file (by rename, with the v1 root
    /// in slot 0) and seeds its run with the version 1 commit page's checksum. With the
    /// slot that commit wrote lost (zeroed, as after a power cut before the root file's
    /// sync), a writer still finds the commit by following the run from the upgraded slot.
    @Test func aVersionOneStoresFirstRunIsFoundFromItsUpgradedRoot() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let copy = directory.child("store")
        try FileManager.default.copyItem(atPath: Self.fixture("v1"), toPath: copy)
        let store = try Store.open(at: copy, options: testOptions())
        try store.write { try $0.put([1], for: [1], in: "new") }
        let generation = store.generation
        let expected = try contents(of: store.read())
        store.close()
        let rootPath = copy + "/root"
        var root = [UInt8](try Data(contentsOf: URL(fileURLWithPath: rootPath)))
        #expect(try RootRecord.decodeSlot(root, slot: 0, file: rootPath).generation == generation - 1)
        #expect(try RootRecord.decodeSlot(root, slot: 1, file: rootPath).generation == generation)
        for index in RootRecord.slotStride..<(RootRecord.slotStride + RootRecord.slotSize) { root[index] = 0 }
        try Data(root).write(to: URL(fileURLWithPath: rootPath))
        let reader = try Store.openReadOnly(at: copy, options: testOptions())
        #expect(reader.generation == generation - 1, "a reader takes the slots only")
        reader.close()
        let writer = try Store.open(at: copy, options: testOptions())
        #expect(writer.generation == generation)
        #expect(try contents(of: writer.read()) == expected)
        #expect(writer.verify().isClean)
        writer.close()
    }
}
