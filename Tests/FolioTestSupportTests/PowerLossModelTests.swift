import FolioStorage
import FolioTestSupport
import Testing

/// Whole-model properties, checked over seeded random workloads.
@Suite struct PowerLossModelTests {
    /// Every file (path → bytes) and directory reachable from `/`, through the seam only.
    private func tree(_ fileSystem: any FileSystem) throws -> [String: [UInt8]?] {
        var result: [String: [UInt8]?] = ["/": nil]
        var directories = ["/"]
        while let directory = directories.popLast() {
            for name in try fileSystem.contentsOfDirectory(directory) {
                let path = StoragePath.join(directory, name)
                if fileSystem.itemKind(at: path) == .directory {
                    result[path] = .some(nil)
                    directories.append(path)
                } else {
                    let file = try fileSystem.open(path, mode: .readOnly)
                    result[path] = .some(try file.readAll())
                    file.close()
                }
            }
        }
        return result
    }

    /// Random creates, writes, truncates, renames (within and across directories), removals,
    /// file syncs and directory syncs.
    private func randomStep(_ fileSystem: PowerLossFileSystem, _ rng: inout SplitMix64) throws {
        let directories = ["/", "/a", "/b"]
        func randomPath() -> String {
            StoragePath.join(directories.randomElement(using: &rng)!, "f\(Int.random(in: 0..<4, using: &rng))")
        }
        let path = randomPath()
        let exists = fileSystem.itemKind(at: path) == .file
        switch Int.random(in: 0..<7, using: &rng) {
        case 0, 1:
            let file = try fileSystem.open(path, mode: Bool.random(using: &rng) ? .create : .truncate)
            let bytes = (0..<Int.random(in: 1...1500, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            try file.write(bytes, at: UInt64(Int.random(in: 0..<2000, using: &rng)))
            if Bool.random(using: &rng) { try file.sync() }
            file.close()
        case 2 where exists:
            let file = try fileSystem.open(path, mode: .readWrite)
            try file.truncate(to: UInt64(Int.random(in: 0..<3000, using: &rng)))
            file.close()
        case 3 where exists:
            try fileSystem.rename(path, to: randomPath())
        case 4 where exists:
            try fileSystem.remove(path)
        case 5:
            try fileSystem.syncDirectory(directories.randomElement(using: &rng)!)
        case 6 where exists:
            let file = try fileSystem.open(path, mode: .readOnly)
            try file.sync()
            file.close()
        default:
            break
        }
    }

    @Test func everythingImageIsTheLiveViewAndFullSyncMakesEveryImageEqualIt() throws {
        for seed in UInt64(0)..<12 {
            var rng = SplitMix64(seed: seed)
            let fileSystem = PowerLossFileSystem()
            try fileSystem.createDirectory("/a")
            try fileSystem.createDirectory("/b")
            for _ in 0..<80 {
                try randomStep(fileSystem, &rng)
                #expect(try tree(fileSystem.crashImage(mode: .everything)) == tree(fileSystem), "seed \(seed)")
            }

            for (path, contents) in try tree(fileSystem) where contents != nil {
                let file = try fileSystem.open(path, mode: .readOnly)
                try file.sync()
                file.close()
            }
            for directory in ["/a", "/b", "/"] { try fileSystem.syncDirectory(directory) }
            #expect(fileSystem.pendingNamespaceOperations == 0, "seed \(seed)")

            let live = try tree(fileSystem)
            #expect(try tree(fileSystem.crashImage(mode: .durableOnly)) == live, "seed \(seed)")
            for imageSeed in UInt64(0)..<3 {
                #expect(try tree(fileSystem.crashImage(mode: .random, seed: imageSeed)) == live, "seed \(seed)")
            }
        }
    }

    @Test func randomImagesOnlyHoldNamesAndBytesThatExisted() throws {
        // Every name in a random image is one the running process had at some point: dropping
        // or reordering pending operations never invents a file or directory.
        var rng = SplitMix64(seed: 99)
        let fileSystem = PowerLossFileSystem()
        try fileSystem.createDirectory("/a")
        try fileSystem.createDirectory("/b")
        try fileSystem.syncDirectory("/")
        var issuedNames: Set<String> = ["/", "/a", "/b"]
        for _ in 0..<60 {
            try randomStep(fileSystem, &rng)
            issuedNames.formUnion(try tree(fileSystem).keys)
            for imageSeed in UInt64(0)..<4 {
                let image = fileSystem.crashImage(mode: .random, seed: rng.next() ^ imageSeed)
                let paths = image.allPaths()
                #expect(Set(paths.files + paths.directories).isSubset(of: issuedNames))
            }
        }
    }
}
