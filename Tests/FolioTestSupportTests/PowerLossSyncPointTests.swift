import FolioStorage
import FolioTestSupport
import Synchronization
import Testing

/// Crash images taken at every sync point of a workload.
@Suite struct PowerLossSyncPointTests {
    private final class Collector: Sendable {
        let points = Mutex<[SyncPoint]>([])
        let roots = Mutex<[(point: Int, durable: [UInt8]?, random: [[UInt8]?])]>([])
    }

    @Test func imagesAtEverySyncPointOfAtomicReplaceShowAWholeVersion() throws {
        let fileSystem = PowerLossFileSystem()
        try fileSystem.createDirectory("/s")
        try fileSystem.syncDirectory("/")
        #expect(fileSystem.syncPoints == 1)

        let collector = Collector()
        fileSystem.onSyncPoint = { [weak fileSystem] point in
            guard let fileSystem else { return }
            collector.points.withLock { $0.append(point) }
            let durable = fileSystem.crashImage(mode: .durableOnly).contents(of: "/s/root")
            let random = (UInt64(0)..<8).map { fileSystem.crashImage(mode: .random, seed: $0).contents(of: "/s/root") }
            collector.roots.withLock { $0.append((point.number, durable, random)) }
        }

        let versions = (1...5).map { filled(UInt8($0), 500 + 100 * $0) }
        for (index, version) in versions.enumerated() {
            try replaceAtomically(fileSystem, directory: "/s", name: "root", with: version)
            // Once the replace has returned, no crash can lose it.
            for seed in UInt64(0)..<5 {
                #expect(fileSystem.crashImage(mode: .random, seed: seed).contents(of: "/s/root") == version)
            }
            #expect(fileSystem.crashImage(mode: .durableOnly).contents(of: "/s/root") == versions[index])
        }
        fileSystem.onSyncPoint = nil

        #expect(fileSystem.syncPoints == 11)
        let points = collector.points.withLock { $0 }
        #expect(
            points.map(\.description)
                == (0..<5).flatMap { generation in
                    ["#\(2 + 2 * generation) sync /s/root.tmp", "#\(3 + 2 * generation) syncdir /s"]
                })

        for (number, durable, random) in collector.roots.withLock({ $0 }) {
            // Observed just before sync point `number` took effect: the last complete replace
            // is durable, and a random crash shows it or (at a directory sync) the next one.
            let completed = (number - 2) / 2  // replaces finished before this point
            let previous: [UInt8]? = completed == 0 ? nil : versions[completed - 1]
            #expect(durable == previous, "sync point \(number)")
            for root in random {
                #expect(root == previous || (number % 2 == 1 && root == versions[completed]), "sync point \(number)")
            }
        }
    }

    @Test func syncPointsCountFileAndDirectorySyncsOnly() throws {
        let fileSystem = PowerLossFileSystem()
        let file = try fileSystem.open("/f", mode: .create)
        try file.write([1], at: 0)
        _ = try file.read(at: 0, count: 1)
        try fileSystem.rename("/f", to: "/g")
        #expect(fileSystem.syncPoints == 0)
        try file.sync()
        try fileSystem.syncDirectory("/")
        #expect(throws: StorageError.self) { try fileSystem.syncDirectory("/missing") }
        #expect(fileSystem.syncPoints == 2)
    }
}
