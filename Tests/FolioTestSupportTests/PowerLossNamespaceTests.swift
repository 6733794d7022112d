import FolioStorage
import FolioTestSupport
import Testing

/// Names across a power cut: what `syncDirectory` promises, and which creations, renames
/// and unlinks may be undone.
@Suite struct PowerLossNamespaceTests {
    /// The outcomes `probe` gives over `seeds` random images.
    private func randomOutcomes<T: Hashable>(
        _ fileSystem: PowerLossFileSystem, seeds: Range<UInt64> = 0..<60,
        _ probe: (MemoryFileSystem) -> T
    ) -> Set<T> {
        Set(seeds.map { probe(fileSystem.crashImage(mode: .random, seed: $0)) })
    }

    @Test func unsyncedRenameCanBeUndoneButADirectorySyncedOneNeverIs() throws {
        let fileSystem = PowerLossFileSystem()
        try fileSystem.createDirectory("/s")
        try fileSystem.syncDirectory("/")
        try replaceAtomically(fileSystem, directory: "/s", name: "root", with: filled(1, 64))

        let temporary = try fileSystem.open("/s/root.tmp", mode: .truncate)
        try temporary.write(filled(2, 64), at: 0)
        try temporary.sync()
        try fileSystem.rename("/s/root.tmp", to: "/s/root")

        let durable = fileSystem.crashImage(mode: .durableOnly)
        #expect(durable.contents(of: "/s/root") == filled(1, 64))
        #expect(durable.contents(of: "/s/root.tmp") == nil)  // its creation was not dir-synced either
        let everything = fileSystem.crashImage(mode: .everything)
        #expect(everything.contents(of: "/s/root") == filled(2, 64))
        #expect(everything.contents(of: "/s/root.tmp") == nil)
        #expect(randomOutcomes(fileSystem) { $0.contents(of: "/s/root") } == [filled(1, 64), filled(2, 64)])

        try fileSystem.syncDirectory("/s")
        #expect(fileSystem.pendingNamespaceOperations == 0)
        for mode in CrashMode.allCases {
            for seed in UInt64(0)..<30 {
                let image = fileSystem.crashImage(mode: mode, seed: seed)
                #expect(image.contents(of: "/s/root") == filled(2, 64))
                #expect(image.contents(of: "/s/root.tmp") == nil)
            }
        }
    }

    @Test func createdButNotDirectorySyncedFileCanVanish() throws {
        let fileSystem = PowerLossFileSystem()
        try writeFile(fileSystem, "/f", [1, 2, 3])  // data synced, name not
        #expect(fileSystem.pendingNamespaceOperations == 1)
        #expect(fileSystem.crashImage(mode: .durableOnly).itemKind(at: "/f") == nil)
        #expect(fileSystem.crashImage(mode: .everything).contents(of: "/f") == [1, 2, 3])
        #expect(randomOutcomes(fileSystem) { $0.contents(of: "/f") } == [nil, [1, 2, 3]])

        try fileSystem.syncDirectory("/")
        #expect(fileSystem.crashImage(mode: .durableOnly).contents(of: "/f") == [1, 2, 3])
    }

    @Test func unlinkedButNotDirectorySyncedFileCanReappear() throws {
        let fileSystem = PowerLossFileSystem()
        try writeFile(fileSystem, "/f", [4, 5])
        try fileSystem.syncDirectory("/")
        try fileSystem.remove("/f")
        #expect(fileSystem.itemKind(at: "/f") == nil)
        #expect(fileSystem.crashImage(mode: .durableOnly).contents(of: "/f") == [4, 5])
        #expect(fileSystem.crashImage(mode: .everything).itemKind(at: "/f") == nil)
        #expect(randomOutcomes(fileSystem) { $0.contents(of: "/f") } == [nil, [4, 5]])

        try fileSystem.syncDirectory("/")
        for seed in UInt64(0)..<20 {
            #expect(fileSystem.crashImage(mode: .random, seed: seed).itemKind(at: "/f") == nil)
        }
    }

    @Test func handleKeepsReadingAndWritingAnUnlinkedFile() throws {
        let fileSystem = PowerLossFileSystem()
        let file = try fileSystem.open("/f", mode: .create)
        try file.write([1, 2, 3], at: 0)
        try fileSystem.remove("/f")
        try fileSystem.syncDirectory("/")  // the name is durably gone
        #expect(try file.read(at: 0, count: 10) == [1, 2, 3])
        try file.write([9], at: 3)
        try file.sync()
        #expect(try file.readAll() == [1, 2, 3, 9])
        #expect(fileSystem.crashImage(mode: .everything).allPaths().files.isEmpty)
    }

    @Test func newDirectoryNeedsItsParentSynced() throws {
        let fileSystem = PowerLossFileSystem()
        try fileSystem.createDirectory("/d")
        try writeFile(fileSystem, "/d/f", [7])
        try fileSystem.syncDirectory("/d")  // the entry f is durable, the directory d is not
        var image = fileSystem.crashImage(mode: .durableOnly)
        #expect(image.itemKind(at: "/d") == nil && image.itemKind(at: "/d/f") == nil)

        try fileSystem.syncDirectory("/")
        image = fileSystem.crashImage(mode: .durableOnly)
        #expect(image.itemKind(at: "/d") == .directory)
        #expect(image.contents(of: "/d/f") == [7])
    }

    @Test func directorySyncCarriesTheOperationsItDependsOn() throws {
        let fileSystem = PowerLossFileSystem()
        try fileSystem.createDirectory("/x")
        try fileSystem.createDirectory("/y")
        try fileSystem.syncDirectory("/")
        try writeFile(fileSystem, "/x/f", [1])
        try writeFile(fileSystem, "/y/other", [2])
        try fileSystem.rename("/x/f", to: "/y/f")  // depends on the creation in /x
        try fileSystem.syncDirectory("/y")

        let image = fileSystem.crashImage(mode: .durableOnly)
        #expect(image.contents(of: "/y/f") == [1])
        #expect(image.contents(of: "/y/other") == [2])
        #expect(image.itemKind(at: "/x/f") == nil)
        #expect(fileSystem.pendingNamespaceOperations == 0)
    }

    @Test func directorySyncLeavesOtherDirectoriesPending() throws {
        let fileSystem = PowerLossFileSystem()
        try fileSystem.createDirectory("/x")
        try fileSystem.createDirectory("/y")
        try fileSystem.syncDirectory("/")
        try writeFile(fileSystem, "/x/a", [1])
        try writeFile(fileSystem, "/y/b", [2])
        try fileSystem.syncDirectory("/y")
        let image = fileSystem.crashImage(mode: .durableOnly)
        #expect(image.itemKind(at: "/x/a") == nil)
        #expect(image.contents(of: "/y/b") == [2])
        #expect(fileSystem.pendingNamespaceOperations == 1)
    }

    @Test func randomImagesKeepPendingOperationsInOrder() throws {
        // create f, rename f→g: an image may hold nothing, f, or g — never both.
        let fileSystem = PowerLossFileSystem()
        try writeFile(fileSystem, "/f", [1])
        try fileSystem.rename("/f", to: "/g")
        let outcomes = randomOutcomes(fileSystem) { $0.allPaths().files }
        #expect(outcomes == [[], ["/f"], ["/g"]])
    }
}
