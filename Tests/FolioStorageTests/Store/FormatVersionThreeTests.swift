import Testing
import Foundation
@_spi(Testing) @testable import FolioStorage
import FolioTestSupport

/// Format version 3 (Docs/Format.md §18.2): a store becomes version 3 at its first commit
/// that records a tree wholesale, whose slot is synced before the commit returns; until
/// then it stays version 2, readable by builds that read version 2 only. Recovery from
/// version 2 slots follows no run that records a tree wholesale, as a version 2 reader
/// would not; from a version 3 slot it does.
@Suite struct FormatVersionThreeTests {
    let path = "/stores/s"
    var rootPath: String { "\(path)/root" }

    func options(_ fileSystem: any FileSystem, limit: Int = 4) -> StoreOptions {
        var options = testOptions(fileSystem)
        options.changeRecordKeyLimit = limit
        return options
    }

    /// The versions the two slots say (nil: empty or damaged).
    func slotVersions(_ fileSystem: MemoryFileSystem) -> [UInt32?] {
        let bytes = fileSystem.contents(of: rootPath)!
        return (0..<2).map { try? RootRecord.decodeSlot(bytes, slot: $0, file: "root").formatVersion }
    }

    /// Sets both slots' version bytes to `version` (checksums recomputed).
    func setSlotVersions(_ fileSystem: MemoryFileSystem, to version: UInt32) {
        var bytes = fileSystem.contents(of: rootPath)!
        for base in [0, RootRecord.slotStride] where bytes[base..<(base + 8)].elementsEqual(RootRecord.magic) {
            withUnsafeBytes(of: version.littleEndian) { bytes.replaceSubrange((base + 8)..<(base + 12), with: $0) }
            let crc = CRC32C.checksum(Array(bytes[base..<(base + 124)]))
            withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange((base + 124)..<(base + 128), with: $0) }
        }
        fileSystem.setContents(bytes, of: rootPath)
    }

    func headerVersion(_ fileSystem: MemoryFileSystem, file: UInt64) -> UInt32 {
        fileSystem.contents(of: "\(path)/snapshots/\(StoreLayout.snapshotName(file))")!.littleEndianUInt32(at: 8)
    }

    func writeMany(_ store: Store, _ count: Int, tree: String = "big", value: UInt8 = 1) throws {
        try store.write { txn in
            for number in 0..<count { try txn.put([value], for: bytes("k\(1_000 + number)"), in: tree) }
        }
    }

    @Test func aStoreStaysVersionTwoUntilACommitRecordsATreeWholesale() throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: path, options: options(fileSystem))
        try writeMany(store, 4)
        try store.compact()
        try writeMany(store, 3, value: 2)
        #expect(slotVersions(fileSystem) == [2, 2])
        #expect(headerVersion(fileSystem, file: 2) == 2, "a compaction of a version 2 store writes version 2")
        #expect(try store.describe().rootFormatVersion == 2)
        let before = store.generation

        // The first wholesale commit: its slot says 3 and is the anchor (synced) at once.
        try writeMany(store, 5, value: 3)
        #expect(try store.read().changes().isChangedWholesale("big"))
        let versions = slotVersions(fileSystem)
        #expect(versions.contains(3) && versions.contains(2), "\(versions)")
        #expect(try store.describe().rootFormatVersion == 3)
        #expect(try store.describe().formatVersion == 2, "the info file records the version the store was created as")
        #expect(try store.commits(after: before).map { $0.changes.isChangedWholesale("big") } == [true])
        // From then on every slot says 3, wholesale or not.
        try writeMany(store, 1, value: 4)
        #expect(slotVersions(fileSystem) == [3, 3])
        try store.compact()
        #expect(headerVersion(fileSystem, file: 3) == 3)
        #expect(store.verify().isClean)
        let generation = store.generation
        store.close()

        let reader = try Store.openReadOnly(at: path, options: options(fileSystem))
        #expect(reader.generation == generation)
        #expect(try reader.describe().rootFormatVersion == 3)
        #expect(reader.verify().isClean)
        reader.close()
    }

    /// Only a power cut before the upgrade's slot sync could take the commit back, and the
    /// commit returns after that sync: with every unsynced write lost right after it
    /// returns, the store still opens at the wholesale commit, as version 3.
    @Test func theUpgradingCommitSurvivesAPowerCutRightAfterItReturns() throws {
        let power = try powerLossFileSystem()
        let store = try Store.open(at: path, options: options(power))
        try writeMany(store, 2)
        try writeMany(store, 6, value: 2)
        let generation = store.generation
        let expected = try contents(of: store.read())
        let image = power.crashImage(mode: .durableOnly)
        store.close()
        let reopened = try Store.open(at: path, options: options(image))
        #expect(reopened.generation == generation)
        #expect(try contents(of: reopened.read()) == expected)
        #expect(try reopened.describe().rootFormatVersion == 3)
        #expect(reopened.verify().isClean)
        reopened.close()
    }

    /// A crash after a wholesale commit's run is synced and before its version 3 slot is:
    /// the slots say 2, and a writer's recovery does not follow that run (a version 2
    /// build's would not either), so the store stays version 2 at the generation before.
    /// With a version 3 slot at the same place, the same run is followed.
    @Test func recoveryFollowsAWholesaleRunOnlyFromAVersionThreeStore() throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: path, options: options(fileSystem))
        try writeMany(store, 2)
        let rootBefore = fileSystem.contents(of: rootPath)!
        let before = store.generation
        let contentsBefore = try contents(of: store.read())
        try writeMany(store, 6, value: 2)
        try writeMany(store, 1, value: 3)  // a run after it, complete but cut off with it
        let after = store.generation
        let contentsAfter = try contents(of: store.read())
        store.close()

        let snapshotPath = "\(path)/snapshots/\(StoreLayout.snapshotName(1))"
        let snapshot = fileSystem.contents(of: snapshotPath)!
        fileSystem.setContents(rootBefore, of: rootPath)
        #expect(slotVersions(fileSystem) == [2, 2])
        let writer = try Store.open(at: path, options: options(fileSystem))
        #expect(writer.generation == before, "no run recording a tree wholesale follows a version 2 slot")
        #expect(try contents(of: writer.read()) == contentsBefore)
        #expect(try writer.describe().rootFormatVersion == 2)
        #expect(writer.verify().isClean)
        // The next commit writes over the abandoned run; the store goes on as version 2.
        try writeMany(writer, 1, value: 9)
        #expect(writer.verify().isClean)
        writer.close()
        #expect(slotVersions(fileSystem) == [2, 2])

        fileSystem.setContents(snapshot, of: snapshotPath)
        fileSystem.setContents(rootBefore, of: rootPath)
        setSlotVersions(fileSystem, to: 3)
        let upgraded = try Store.open(at: path, options: options(fileSystem))
        #expect(upgraded.generation == after)
        #expect(try contents(of: upgraded.read()) == contentsAfter)
        #expect(upgraded.verify().isClean)
        upgraded.close()
    }

    /// A commit page recording a tree wholesale in a store whose slots say 2 is a problem
    /// the verifier reports: a version 2 reader would take the page as corrupt.
    @Test func theVerifierReportsAWholesaleCommitUnderVersionTwoSlots() throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: path, options: options(fileSystem))
        try writeMany(store, 6)
        store.close()
        setSlotVersions(fileSystem, to: 2)
        let reader = try Store.openReadOnly(at: path, options: options(fileSystem))
        let problems = reader.verify().problems
        #expect(problems.contains { $0.description.contains("changed wholesale") }, "\(problems)")
        reader.close()
    }

    /// A version 1 store's first commit upgrades it to version 2; if that commit records a
    /// tree wholesale, on to 3. Both slots' upgrades hold, and the store verifies clean.
    @Test(arguments: ["v1", "v2"])
    func aFixtureStoreBecomesVersionThreeAtItsFirstWholesaleCommit(version: String) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let copy = directory.child("store")
        try FileManager.default.copyItem(atPath: FixtureTests.fixture(version), toPath: copy)
        var options = testOptions()
        options.changeRecordKeyLimit = 4
        let store = try Store.open(at: copy, options: options)
        let before = store.generation
        try store.write { txn in
            for number in 0..<10 { try txn.put([1], for: bytes("k\(number)"), in: "numbers") }
        }
        #expect(try store.describe().rootFormatVersion == 3)
        #expect(store.verify().isClean)
        let expected = try contents(of: store.read())
        store.close()
        let reopened = try Store.open(at: copy, options: options)
        #expect(try contents(of: reopened.read()) == expected)
        #expect(try reopened.commits(after: before).map { $0.changes.isChangedWholesale("numbers") } == [true])
        #expect(reopened.verify().isClean)
        reopened.close()
    }
}
