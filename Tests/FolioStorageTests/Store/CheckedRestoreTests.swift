import Testing
import FolioTestSupport

@_spi(Testing) @testable import FolioStorage

/// `Store.restore(from:to:at:)` checks what it restores: every commit run's checksum and every
/// copied page's. With no generation asked for, damage makes it restore the newest generation
/// wholly before the damage, and say so; with one asked for, damage in it is an error naming
/// the file and offset, and nothing is left at the destination.
@Suite struct CheckedRestoreTests {
    /// A store whose generations 3 ... 10 each created a tree of their own ("t3" ... "t10"),
    /// which no later commit touches: every generation's pages stay live to the newest.
    struct Built {
        let fileSystem: MemoryFileSystem
        /// The contents at each generation.
        var models: [UInt64: TreeModel] = [:]
        /// Each generation's commit page.
        var commits: [UInt64: PageAddress] = [:]
        var newest: UInt64 = 0
        var snapshot = ""

        /// The bytes of generation `generation`'s run before its commit page.
        func run(_ generation: UInt64) -> Range<UInt64> {
            commits[generation - 1]!.end..<commits[generation]!.offset
        }
    }

    static let path = "/stores/s"

    static func build() throws -> Built {
        var built = Built(fileSystem: try memoryFileSystem())
        let store = try Store.open(at: path, options: testOptions(built.fileSystem))
        defer { store.close() }
        func record() throws {
            let root = try store.read().root
            built.models[root.record.generation] = try contents(of: store.read())
            built.commits[root.record.generation] = root.record.commitPage
            built.newest = root.record.generation
            built.snapshot = root.file.path
        }
        try record()
        try write(sampleModel(count: 400, seed: 3), to: store)
        try record()
        for generation in 3...10 {
            try store.write { txn in
                for key in 0..<40 {
                    try txn.put(bytes("value \(key) of \(generation)"), for: bytes("k\(key)"), in: "t\(generation)")
                }
            }
            try record()
        }
        return built
    }

    static func flipByte(at offset: UInt64, in path: String, _ fileSystem: MemoryFileSystem) throws {
        let file = try fileSystem.open(path, mode: .readWrite)
        defer { file.close() }
        let byte = try file.read(at: offset, count: 1)
        try file.write([byte[0] ^ 0x5A], at: offset)
    }

    /// The corruption `body` throws; nil if it throws something else or nothing.
    static func corruption(_ body: () throws(StorageError) -> Void) -> Corruption? {
        do {
            try body()
            return nil
        } catch {
            guard case .corruption(let damage) = error else { return nil }
            return damage
        }
    }

    /// Restores into `destination` and checks that it holds exactly `generation` of `built`.
    static func expectRestored(
        _ report: BackupReport, generation: UInt64, at destination: String, _ built: Built
    ) throws {
        #expect(report.generation == generation)
        let restored = try Store.openReadOnly(at: destination, options: testOptions(built.fileSystem))
        defer { restored.close() }
        #expect(restored.generation == generation)
        #expect(try contents(of: restored.read()) == built.models[generation])
        #expect(restored.verify().isClean)
    }

    @Test func anIntactStoreRestoresItsNewestGenerationAndChecksEveryRun() throws {
        let built = try Self.build()
        let report = try Store.restore(from: Self.path, to: "/stores/r", options: testOptions(built.fileSystem))
        try Self.expectRestored(report, generation: built.newest, at: "/stores/r", built)
        #expect(report.requested == nil && report.newest == built.newest && !report.fellBack)
        // Generations 2 ... 10 are transactions with a run checksum each.
        #expect(report.runsChecked == 9)
        #expect(report.bytesChecked >= built.commits[built.newest]!.end - 64)
    }

    @Test func aDamagedPageInTheNewestRunRestoresTheGenerationBefore() throws {
        let built = try Self.build()
        let run = built.run(built.newest)
        try Self.flipByte(at: run.lowerBound + 40, in: built.snapshot, built.fileSystem)
        let report = try Store.restore(from: Self.path, to: "/stores/r", options: testOptions(built.fileSystem))
        try Self.expectRestored(report, generation: built.newest - 1, at: "/stores/r", built)
        #expect(report.newest == built.newest)
        #expect(report.damage.count == 1)
        #expect(report.damage.first?.file == built.snapshot)
        #expect(report.damage.first?.offset == run.lowerBound)

        // Asked for by number, the damaged generation is an error naming the file and the
        // run, and the destination is not left behind; the one before restores.
        let damage = Self.corruption { () throws(StorageError) in
            _ = try Store.restore(
                from: Self.path, to: "/stores/explicit", at: built.newest, options: testOptions(built.fileSystem))
        }
        #expect(damage?.file == built.snapshot && damage?.offset == run.lowerBound)
        #expect(built.fileSystem.itemKind(at: "/stores/explicit") == nil)
        let older = try Store.restore(
            from: Self.path, to: "/stores/older", at: built.newest - 1, options: testOptions(built.fileSystem))
        try Self.expectRestored(older, generation: built.newest - 1, at: "/stores/older", built)
        #expect(older.requested == built.newest - 1 && !older.fellBack)
    }

    @Test func aDamagedCommitPageRestoresTheGenerationBefore() throws {
        let built = try Self.build()
        let commit = built.commits[built.newest]!
        try Self.flipByte(at: commit.offset + 30, in: built.snapshot, built.fileSystem)
        let report = try Store.restore(from: Self.path, to: "/stores/r", options: testOptions(built.fileSystem))
        try Self.expectRestored(report, generation: built.newest - 1, at: "/stores/r", built)
        #expect(report.damage.first?.offset == commit.offset)
    }

    /// The page of generation 6's own tree is still live at the newest generation: every
    /// generation from 6 on is damaged, and 5 is the newest intact one.
    @Test func aDamagedPageOfAnOlderRunTheNewestStillUsesRestoresTheGenerationBeforeThatRun() throws {
        let built = try Self.build()
        let store = try Store.openReadOnly(at: Self.path, options: testOptions(built.fileSystem))
        let run = built.run(6)
        let live = try reachablePages(of: store).filter { run.contains($0.address.offset) && $0.kind == "leaf" }
        store.close()
        #expect(!live.isEmpty)
        try Self.flipByte(at: live[0].address.offset + 30, in: built.snapshot, built.fileSystem)
        let report = try Store.restore(from: Self.path, to: "/stores/r", options: testOptions(built.fileSystem))
        try Self.expectRestored(report, generation: 5, at: "/stores/r", built)
        #expect(report.damage.first?.offset == run.lowerBound)
        #expect(throws: StorageError.self) {
            try Store.restore(from: Self.path, to: "/stores/at8", at: 8, options: testOptions(built.fileSystem))
        }
        #expect(built.fileSystem.itemKind(at: "/stores/at8") == nil)
    }

    /// A page that is not the one written but passes its own checksum (what a torn copy
    /// over stale bytes of another history leaves) changes its run's checksum: the
    /// generations from that run on are not restored.
    @Test func aPageReplacedByAnotherValidPageFailsItsRun() throws {
        let built = try Self.build()
        let store = try Store.openReadOnly(at: Self.path, options: testOptions(built.fileSystem))
        let run = built.run(6)
        let live = try reachablePages(of: store).filter { run.contains($0.address.offset) && $0.kind == "leaf" }
        store.close()
        let address = try #require(live.first).address
        let file = try built.fileSystem.open(built.snapshot, mode: .readWrite)
        var page = try file.read(at: address.offset, count: Int(address.length))
        page[Int(address.length) - 1] ^= 0x01
        var sealed = withUnsafeBytes(of: address.offset.littleEndian) { CRC32C.update(0xFFFF_FFFF, $0) }
        sealed = ~page[4...].withUnsafeBytes { CRC32C.update(sealed, $0) }
        withUnsafeBytes(of: sealed.littleEndian) { page.replaceSubrange(0..<4, with: $0) }
        try file.write(page, at: address.offset)
        file.close()
        let report = try Store.restore(from: Self.path, to: "/stores/r", options: testOptions(built.fileSystem))
        try Self.expectRestored(report, generation: 5, at: "/stores/r", built)
        #expect(report.damage.first?.offset == run.lowerBound)
        #expect(report.damage.first?.detail.contains("run checksum") == true)
    }

    /// Damage inside a page no generation restored uses (generation 3's catalog leaf, which
    /// every later commit replaced) cannot change what is restored: the newest is.
    @Test func damageInADeadPageCostsNoGeneration() throws {
        let built = try Self.build()
        let store = try Store.openReadOnly(at: Self.path, options: testOptions(built.fileSystem))
        let live = Set(try reachablePages(of: store).map(\.address.offset))
        store.close()
        let file = try built.fileSystem.open(built.snapshot, mode: .readOnly)
        var offset = built.run(3).lowerBound
        var dead: UInt64?
        while offset < built.run(3).upperBound {
            let header = try file.read(at: offset, count: 24)
            if !live.contains(offset) { dead = offset }
            offset += UInt64(header.littleEndianUInt32(at: 8))
        }
        file.close()
        try Self.flipByte(at: try #require(dead) + 30, in: built.snapshot, built.fileSystem)
        let report = try Store.restore(from: Self.path, to: "/stores/r", options: testOptions(built.fileSystem))
        try Self.expectRestored(report, generation: built.newest, at: "/stores/r", built)
        #expect(!report.fellBack)
    }

    /// A file cut short inside generation 8's run: the store does not even open, and the
    /// restore gives generation 7, the newest the file still holds whole.
    @Test func aTruncatedFileRestoresTheNewestGenerationItStillHolds() throws {
        let built = try Self.build()
        let run = built.run(8)
        let cut = run.lowerBound + (run.upperBound - run.lowerBound) / 2
        let file = try built.fileSystem.open(built.snapshot, mode: .readWrite)
        try file.truncate(to: cut)
        file.close()
        #expect(throws: StorageError.self) {
            try Store.openReadOnly(at: Self.path, options: testOptions(built.fileSystem))
        }
        let report = try Store.restore(from: Self.path, to: "/stores/r", options: testOptions(built.fileSystem))
        try Self.expectRestored(report, generation: 7, at: "/stores/r", built)
        #expect(report.newest == built.newest)
        // The damage the open refused: the file's end.
        #expect(report.damage.map(\.offset) == [cut])
        #expect(report.damage.first?.file == built.snapshot)
        // A generation the cut did not reach restores when asked for; one it did is an error.
        let older = try Store.restore(from: Self.path, to: "/stores/at5", at: 5, options: testOptions(built.fileSystem))
        try Self.expectRestored(older, generation: 5, at: "/stores/at5", built)
        #expect(throws: StorageError.self) {
            try Store.restore(from: Self.path, to: "/stores/at9", at: 9, options: testOptions(built.fileSystem))
        }
        #expect(built.fileSystem.itemKind(at: "/stores/at9") == nil)
    }

    /// Pages before a compaction's commit (its copy) have no run checksum: a damaged one the
    /// newest generation uses is found while copying, no generation of that file lies
    /// before it, and the restore fails, leaving nothing behind (not even an empty directory
    /// it created), while an empty directory given to it stays.
    @Test func damageInACompactionsCopyFailsAndLeavesNothingBehind() throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: Self.path, options: testOptions(fileSystem))
        try write(sampleModel(count: 300, seed: 5), to: store)
        try store.compact()
        try store.write { try $0.put([1], for: [1], in: "after") }
        let root = try store.read().root
        let leaf = try reachablePages(of: store).first {
            $0.kind == "leaf" && $0.address.end <= root.record.previous!.address.offset
        }!
        store.close()
        try Self.flipByte(at: leaf.address.offset + 30, in: root.file.path, fileSystem)
        let damage = Self.corruption { () throws(StorageError) in
            _ = try Store.restore(from: Self.path, to: "/stores/new/r", options: testOptions(fileSystem))
        }
        #expect(damage?.file == root.file.path && damage?.offset == leaf.address.offset)
        #expect(fileSystem.itemKind(at: "/stores/new") == nil)
        try fileSystem.createDirectory("/stores/empty")
        #expect(throws: StorageError.self) {
            try Store.restore(from: Self.path, to: "/stores/empty", options: testOptions(fileSystem))
        }
        #expect(try fileSystem.contentsOfDirectory("/stores/empty").isEmpty)
    }
}
