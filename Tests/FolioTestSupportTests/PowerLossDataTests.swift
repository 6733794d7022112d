import FolioStorage
import FolioTestSupport
import Testing

/// File contents across a power cut: what `sync()` promises, and how unsynced writes may
/// vanish, reorder or tear.
@Suite struct PowerLossDataTests {
    /// A file at `path` with `bytes`, its data and name both durable.
    private func durableFile(_ path: String, _ bytes: [UInt8]) throws -> PowerLossFileSystem {
        let fileSystem = PowerLossFileSystem()
        try writeFile(fileSystem, path, bytes)
        try fileSystem.syncDirectory("/")
        return fileSystem
    }

    @Test func syncedWriteSurvivesEveryImage() throws {
        let synced = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let fileSystem = try durableFile("/f", synced)
        let file = try fileSystem.open("/f", mode: .readWrite)
        try file.write(filled(9, 3000), at: 4096)  // unsynced, after the synced bytes

        for mode in CrashMode.allCases {
            for seed in UInt64(0)..<50 {
                let bytes = try #require(fileSystem.crashImage(mode: mode, seed: seed).contents(of: "/f"))
                #expect(Array(bytes.prefix(4096)) == synced, "\(mode) seed \(seed)")
            }
        }
    }

    @Test func unsyncedWriteIsAbsentFromDurableOnlyAndPresentInEverything() throws {
        let fileSystem = try durableFile("/f", filled(1, 1024))
        let file = try fileSystem.open("/f", mode: .readWrite)
        try file.write(filled(2, 100), at: 0)
        try file.write(filled(3, 100), at: 2048)
        #expect(fileSystem.pendingDataOperations == 2)
        #expect(fileSystem.pendingWriteBytes == 200)

        #expect(fileSystem.crashImage(mode: .durableOnly).contents(of: "/f") == filled(1, 1024))
        let everything = fileSystem.crashImage(mode: .everything).contents(of: "/f")
        #expect(everything == fileSystem.contents(of: "/f"))
        #expect(everything == filled(2, 100) + filled(1, 924) + filled(0, 1024) + filled(3, 100))

        try file.sync()
        #expect(fileSystem.pendingDataOperations == 0 && fileSystem.pendingWriteBytes == 0)
        #expect(fileSystem.crashImage(mode: .durableOnly).contents(of: "/f") == everything)
    }

    @Test func tornWritesShowOnlyWholeSectorsOfOldOrNewData() throws {
        let old = filled(0xAA, 4096)
        let fileSystem = try durableFile("/f", old)
        let file = try fileSystem.open("/f", mode: .readWrite)
        // Unaligned on both ends: touches sectors 0...6.
        try file.write((0..<3000).map { UInt8(truncatingIfNeeded: $0 % 100) }, at: 300)
        let new = try #require(fileSystem.contents(of: "/f"))

        var outcomes: Set<Int> = []  // number of sectors showing new data
        for seed in UInt64(0)..<300 {
            let bytes = try #require(fileSystem.crashImage(mode: .random, seed: seed).contents(of: "/f"))
            #expect(bytes.count == 4096)
            var newSectors = 0
            for sector in 0..<8 {
                let range = (sector * 512)..<((sector + 1) * 512)
                if bytes[range] == new[range] && bytes[range] != old[range] {
                    newSectors += 1
                } else if bytes[range] != old[range] {
                    Issue.record("seed \(seed): sector \(sector) is neither old nor new")
                }
            }
            outcomes.insert(newSectors)
        }
        #expect(outcomes.contains(0))  // dropped
        #expect(outcomes.contains(7))  // whole
        #expect(!outcomes.isDisjoint(with: 1...6))  // torn
    }

    @Test func tornExtendingWriteEndsAtASectorBoundary() throws {
        let old = filled(0xAA, 1000)
        let fileSystem = try durableFile("/f", old)
        let file = try fileSystem.open("/f", mode: .readWrite)
        try file.write(filled(0xBB, 2000), at: 1000)
        let new = try #require(fileSystem.contents(of: "/f"))
        var lengths: Set<Int> = []
        for seed in UInt64(0)..<200 {
            let bytes = try #require(fileSystem.crashImage(mode: .random, seed: seed).contents(of: "/f"))
            #expect(bytes.count == 1000 || bytes.count == 3000 || bytes.count % 512 == 0, "seed \(seed)")
            lengths.insert(bytes.count)
            let padded = old + filled(0, max(0, bytes.count - old.count))
            for start in stride(from: 0, to: bytes.count, by: 512) {
                let range = start..<min(start + 512, bytes.count)
                #expect(bytes[range] == padded[range] || bytes[range] == new[range], "seed \(seed) @\(start)")
            }
        }
        #expect(lengths.contains(1000) && lengths.contains(3000) && lengths.count > 2)
    }

    @Test func unsyncedTruncateIsKeptOrDropped() throws {
        let fileSystem = try durableFile("/f", filled(5, 1000))
        let file = try fileSystem.open("/f", mode: .readWrite)
        try file.truncate(to: 10)
        #expect(try file.size() == 10)
        #expect(fileSystem.crashImage(mode: .durableOnly).contents(of: "/f")?.count == 1000)
        #expect(fileSystem.crashImage(mode: .everything).contents(of: "/f") == filled(5, 10))
        let lengths = Set(
            (UInt64(0)..<40).map { fileSystem.crashImage(mode: .random, seed: $0).contents(of: "/f")?.count })
        #expect(lengths == [10, 1000])
    }

    @Test func unsyncedMutationsMayBeReordered() throws {
        // Write 512..<612 (one sector, so it cannot tear), then truncate to 562. Only a
        // reordering (truncate first, then the write) can leave a 612-byte file.
        let fileSystem = try durableFile("/f", filled(5, 1000))
        let file = try fileSystem.open("/f", mode: .readWrite)
        try file.write(filled(6, 100), at: 512)
        try file.truncate(to: 562)
        // Each outcome as (length, number of new bytes).
        let outcomes = Set(
            (UInt64(0)..<80).map { seed -> [Int] in
                let bytes = fileSystem.crashImage(mode: .random, seed: seed).contents(of: "/f") ?? []
                return [bytes.count, bytes.filter { $0 == 6 }.count]
            })
        #expect(
            outcomes == [
                [1000, 0], [1000, 100],  // truncate dropped; write dropped or kept
                [562, 0], [562, 50],  // truncate kept; write dropped, or kept before the truncate
                [612, 100],  // reordered: truncate, then write
            ])
    }

    @Test func openingForTruncationIsAPendingTruncate() throws {
        let fileSystem = try durableFile("/f", filled(5, 100))
        try writeFile(fileSystem, "/f", [1, 2], sync: false)
        #expect(fileSystem.contents(of: "/f") == [1, 2])
        #expect(fileSystem.crashImage(mode: .durableOnly).contents(of: "/f") == filled(5, 100))
        // Truncate kept or dropped, write kept or dropped, in either order.
        let outcomes = Set((UInt64(0)..<60).map { fileSystem.crashImage(mode: .random, seed: $0).contents(of: "/f") })
        #expect(outcomes == [filled(5, 100), [1, 2] + filled(5, 98), [], [1, 2]])
    }

    @Test func syncCoversOnlyItsOwnFile() throws {
        let fileSystem = PowerLossFileSystem()
        let a = try fileSystem.open("/a", mode: .create), b = try fileSystem.open("/b", mode: .create)
        try fileSystem.syncDirectory("/")
        try a.write([1], at: 0)
        try b.write([2], at: 0)
        try a.sync()
        let image = fileSystem.crashImage(mode: .durableOnly)
        #expect(image.contents(of: "/a") == [1])
        #expect(image.contents(of: "/b") == [])
    }

    @Test func aSeedReproducesItsImage() throws {
        let fileSystem = try durableFile("/f", filled(1, 4096))
        let file = try fileSystem.open("/f", mode: .readWrite)
        for index in 0..<8 { try file.write(filled(UInt8(index + 2), 700), at: UInt64(index * 450)) }
        try fileSystem.rename("/f", to: "/g")
        let images = (UInt64(0)..<20).map { seed in
            let image = fileSystem.crashImage(mode: .random, seed: seed)
            return [image.contents(of: "/f"), image.contents(of: "/g")]
        }
        for seed in UInt64(0)..<20 {
            let image = fileSystem.crashImage(mode: .random, seed: seed)
            #expect([image.contents(of: "/f"), image.contents(of: "/g")] == images[Int(seed)])
        }
        #expect(Set(images).count > 10)
    }
}
