import Testing
import Foundation
import Synchronization
import FolioStorage
import FolioTestSupport

/// Replication: a replica directory is a store at every published root, equal to the
/// source at that generation; it keeps the history the source keeps, follows compactions,
/// resumes after an interrupted shipment, and refuses another history.
@Suite struct ReplicationTests {
    /// Commits with compactions in between (the replaced files removed at once, so the
    /// replica must follow the chain into each new file and drop the old ones): after every
    /// shipment the replica opens at the source's generation with the source's contents,
    /// verifies clean, and holds no file the source has removed.
    @Test func aReplicaEqualsTheSourceAfterEveryShipment() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let replicaPath = directory.child("replica")
        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        let replicator = Replicator(source: path, to: DirectoryReplica(path: replicaPath))
        for round in 0..<12 {
            for step in 0..<(1 + round % 4) {
                try store.write { txn in
                    try txn.put(bytes("v\(round)-\(step)"), for: bytes("k\(round * 7 % 5)"), in: "t")
                    if step == 1 {
                        try txn.put([UInt8](repeating: UInt8(round), count: 5_000), for: bytes("big"), in: "u")
                    }
                }
            }
            if round % 3 == 2 { _ = try store.compact() }
            let report = try replicator.ship()
            #expect(report.generation == store.generation)
            let replica = try Store.openReadOnly(at: replicaPath, options: testOptions())
            defer { replica.close() }
            #expect(replica.generation == store.generation)
            #expect(try contents(of: replica.read()) == contents(of: store.read()), "round \(round)")
            #expect(replica.verify().isClean, "round \(round)")
            let sourceFiles = try snapshotNames(path)
            #expect(try snapshotNames(replicaPath) == sourceFiles, "round \(round)")
        }
        // Nothing new: nothing shipped.
        let again = try replicator.ship()
        #expect(!again.advanced && again.bytesShipped == 0)
        try replicator.close()
    }

    /// A fresh replica of a store that keeps replaced files (a long grace period) gets them
    /// all: it reads every generation the source still reads.
    @Test func aFreshReplicaHoldsTheHistoryTheSourceHolds() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let replicaPath = directory.child("replica")
        var options = testOptions()
        options.retention = SnapshotRetention(gracePeriod: .seconds(3600), maximumRetainedFiles: 8)
        let store = try Store.open(at: path, options: options)
        defer { store.close() }
        var states: [UInt64: TreeModel] = [:]
        for step in 0..<30 {
            try store.write { txn in try txn.put(bytes("value \(step)"), for: bytes("k\(step % 7)"), in: "t") }
            states[store.generation] = try contents(of: store.read())
            if step % 10 == 9 { _ = try store.compact() }
        }
        let replicator = Replicator(source: path, to: DirectoryReplica(path: replicaPath))
        try replicator.ship()
        try replicator.close()
        let replica = try Store.openReadOnly(at: replicaPath, options: testOptions())
        defer { replica.close() }
        #expect(try replica.oldestReadableGeneration() == store.oldestReadableGeneration())
        let oldest = try store.oldestReadableGeneration()
        #expect(oldest < 12, "the source's kept files hold more than one file's history")
        for (generation, model) in states where generation >= oldest {
            #expect(try contents(of: replica.read(at: generation)) == model, "generation \(generation)")
        }
        #expect(replica.verify().isClean)
    }

    /// A destination that fails part-way (out of space, unreachable) leaves the replica at
    /// the root it last published, and the next shipment completes it: whatever the
    /// interrupted one wrote past that root is written again.
    @Test func anInterruptedShipmentLeavesTheLastRootAndResumes() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let replicaPath = directory.child("replica")
        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        try write(sampleModel(count: 200, seed: 1), to: store)
        let failing = FailingDestination(DirectoryReplica(path: replicaPath))
        let replicator = Replicator(source: path, to: failing)
        try replicator.ship()
        let shipped = store.generation
        let shippedContents = try contents(of: store.read())
        for round in 0..<6 {
            try write(sampleModel(count: 300, seed: UInt64(10 + round), generation: round), to: store)
            if round == 3 { _ = try store.compact() }
            // A write fails part-way, or the sync before the root is published.
            failing.failAfter(round % 2 == 0 ? 0 : nil, failSync: round % 2 == 1)
            #expect(throws: StorageError.self) { try replicator.ship() }
            let replica = try Store.openReadOnly(at: replicaPath, options: testOptions())
            #expect(replica.generation >= shipped)
            if replica.generation == shipped { #expect(try contents(of: replica.read()) == shippedContents) }
            #expect(replica.verify().isClean, "round \(round)")
            replica.close()
        }
        failing.failAfter(nil, failSync: false)
        try replicator.ship()
        try expectReplica(at: replicaPath, equals: store)
    }

    /// A replicator killed mid-shipment leaves bytes past the replica's root (a torn run, a
    /// partly copied new file); a new replicator ships over them, and the replica verifies.
    @Test func tornBytesPastThePublishedRootAreSentAgain() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let replicaPath = directory.child("replica")
        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        try write(sampleModel(count: 100, seed: 3), to: store)
        let first = Replicator(source: path, to: DirectoryReplica(path: replicaPath))
        try first.ship()
        try first.close()
        // Garbage where the next run goes, and a half-written next file full of garbage.
        let number = try #require(snapshotNames(replicaPath).last)
        let current = FileHandle(forWritingAtPath: "\(replicaPath)/snapshots/\(number)")!
        current.seekToEndOfFile()
        current.write(Data(repeating: 0xA5, count: 10_000))
        try current.close()
        try store.write { txn in try txn.put(bytes("after"), for: bytes("x"), in: "t") }
        _ = try store.compact()
        try store.write { txn in try txn.put(bytes("after compaction"), for: bytes("y"), in: "t") }
        let nextName = try #require(snapshotNames(path).last)
        FileManager.default.createFile(
            atPath: "\(replicaPath)/snapshots/\(nextName)", contents: Data(repeating: 0x5A, count: 50_000))
        let second = Replicator(source: path, to: DirectoryReplica(path: replicaPath))
        try second.ship()
        try second.close()
        try expectReplica(at: replicaPath, equals: store)
    }

    /// A destination that holds a replica of another store, or of this store's other history
    /// (the store replaced by an older copy), is refused and left as it was.
    @Test func anotherHistoryIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let other = directory.child("other")
        let replicaPath = directory.child("replica")
        let saved = directory.child("saved")
        do {
            let store = try Store.open(at: path, options: testOptions())
            try store.write { txn in try txn.put(bytes("a"), for: bytes("a"), in: "t") }
            store.close()
            try FileManager.default.copyItem(atPath: path, toPath: saved)
            let reopened = try Store.open(at: path, options: testOptions())
            try reopened.write { txn in try txn.put(bytes("b"), for: bytes("b"), in: "t") }
            reopened.close()
            try Replicator(source: path, to: DirectoryReplica(path: replicaPath)).ship()
            let otherStore = try Store.open(at: other, options: testOptions())
            try otherStore.write { txn in try txn.put(bytes("c"), for: bytes("c"), in: "t") }
            otherStore.close()
        }
        let replicaGeneration = try Store.openReadOnly(at: replicaPath, options: testOptions()).generation
        // Another store.
        expectRefused(source: other, replica: replicaPath)
        // The same store, put back to an older copy and then written on: a different
        // commit at the replica's generation.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: saved, toPath: path)
        let restored = try Store.open(at: path, options: testOptions())
        try restored.write { txn in try txn.put(bytes("B"), for: bytes("b"), in: "t") }
        try restored.write { txn in try txn.put(bytes("C"), for: bytes("c"), in: "t") }
        restored.close()
        expectRefused(source: path, replica: replicaPath)
        // Another store created in the same second (the same info file), whose files are
        // numbered below the replica's: file numbers only grow along one history.
        let compacted = try Store.open(at: other, options: testOptions())
        _ = try compacted.compact()
        _ = try compacted.compact()
        compacted.close()
        let sameSecond = directory.child("same-second")
        let young = try Store.open(at: sameSecond, options: testOptions())
        try young.write { txn in try txn.put(bytes("d"), for: bytes("d"), in: "t") }
        young.close()
        let laterReplica = directory.child("later-replica")
        try Replicator(source: other, to: DirectoryReplica(path: laterReplica)).ship()
        try FileManager.default.removeItem(atPath: "\(sameSecond)/info")
        try FileManager.default.copyItem(atPath: "\(other)/info", toPath: "\(sameSecond)/info")
        expectRefused(source: sameSecond, replica: laterReplica)
        #expect(
            try Store.openReadOnly(at: laterReplica, options: testOptions()).read().get(bytes("c"), in: "t")
                == bytes("c"))

        let replica = try Store.openReadOnly(at: replicaPath, options: testOptions())
        defer { replica.close() }
        #expect(replica.generation == replicaGeneration)
        #expect(try replica.read().get(bytes("b"), in: "t") == bytes("b"))
    }

    /// The store put back to an older copy of its directory (the same info file, lower
    /// snapshot file numbers) and written on past the replica's generation, when the source
    /// no longer has the file of the replica's root: another history all the same, refused,
    /// and the replica left as it was (it may be the only copy of the history it holds).
    @Test func anotherHistoryWithoutTheReplicasFileIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let replicaPath = directory.child("replica")
        let saved = directory.child("saved")
        do {
            let store = try Store.open(at: path, options: testOptions())
            try store.write { txn in try txn.put(bytes("a"), for: bytes("a"), in: "t") }
            store.close()
            try FileManager.default.copyItem(atPath: path, toPath: saved)
            let reopened = try Store.open(at: path, options: testOptions())
            for step in 0..<3 {
                try reopened.write { txn in try txn.put(bytes("\(step)"), for: bytes("b"), in: "t") }
                _ = try reopened.compact()
            }
            reopened.close()
            try Replicator(source: path, to: DirectoryReplica(path: replicaPath)).ship()
        }
        let before = try Store.openReadOnly(at: replicaPath, options: testOptions())
        let replicaGeneration = before.generation
        before.close()
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: saved, toPath: path)
        let restored = try Store.open(at: path, options: testOptions())
        for step in 0..<10 {
            try restored.write { txn in try txn.put(bytes("other \(step)"), for: bytes("c"), in: "t") }
        }
        #expect(restored.generation > replicaGeneration)
        restored.close()
        expectRefused(source: path, replica: replicaPath)
        let replica = try Store.openReadOnly(at: replicaPath, options: testOptions())
        defer { replica.close() }
        #expect(replica.generation == replicaGeneration)
        #expect(try replica.read().get(bytes("b"), in: "t") == bytes("2"))
        #expect(try replica.read().get(bytes("c"), in: "t") == nil)
    }

    /// Timeline: a reader follows the replica → the replicator follows the source on its own
    /// thread → the source commits 40 times → the reader's observer has seen every
    /// generation up to the last, in order, none twice → stop ends the follower.
    @Test func aReplicaReaderFollowsAFollowingReplicator() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let replicaPath = directory.child("replica")
        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        try store.write { txn in try txn.put(bytes("0"), for: bytes("k"), in: "t") }
        let replicator = Replicator(source: path, to: DirectoryReplica(path: replicaPath))
        try replicator.ship()
        let replica = try Store.openReadOnly(at: replicaPath, options: testOptions())
        defer { replica.close() }
        let seen = Mutex<[UInt64]>([])
        let observation = replica.observe { event in
            if case .committed(let commits) = event { seen.withLock { $0 += commits.map(\.generation) } }
        }
        defer { observation.cancel() }
        try replica.startFollowing(pollInterval: .milliseconds(20))
        let following = Thread {
            try? replicator.follow(pollInterval: .milliseconds(20))
        }
        following.start()
        let start = replica.generation
        for step in 1...40 {
            try store.write { txn in try txn.put(bytes("\(step)"), for: bytes("k"), in: "t") }
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while seen.withLock({ $0.last }) != store.generation, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        replicator.stop()
        #expect(seen.withLock { $0 } == Array((start + 1)...store.generation))
        #expect(try replica.read().get(bytes("k"), in: "t") == bytes("40"))
    }

    /// A replicator killed after publishing a root past a compaction, before removing the
    /// file the compaction let go (crash point `replicate.afterPublish`; here a removal that
    /// fails) leaves that file in the replica; the next shipment removes it, even when the
    /// source has committed nothing since (`folio replicate --once` on a quiet store).
    @Test func aFileTheSourceLetGoIsRemovedWithNothingNewToShip() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let replicaPath = directory.child("replica")
        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        try write(sampleModel(count: 100, seed: 5), to: store)
        try Replicator(source: path, to: DirectoryReplica(path: replicaPath)).ship()
        _ = try store.compact()
        let failing = FailingDestination(DirectoryReplica(path: replicaPath))
        failing.failRemoval = true
        #expect(throws: StorageError.self) { try Replicator(source: path, to: failing).ship() }
        #expect(try Store.openReadOnly(at: replicaPath, options: testOptions()).generation == store.generation)
        #expect(try snapshotNames(replicaPath).count == 2)
        let report = try Replicator(source: path, to: DirectoryReplica(path: replicaPath)).ship()
        #expect(!report.advanced)
        #expect(try snapshotNames(replicaPath) == snapshotNames(path))
    }

    /// A sync of the replica that fails (the disk full or failing) poisons that handle, as
    /// the POSIX file system's does (a later fsync could succeed without the data). The
    /// replica keeps its last published root, and once the destination is healthy the next
    /// shipment, by the same replicator, completes: it writes through a new handle, from
    /// the published root on. The same for the root file's sync.
    @Test func aFailedSyncOfTheReplicaDoesNotStopLaterShipments() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let replicaPath = directory.child("replica")
        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        try write(sampleModel(count: 100, seed: 6), to: store)
        let fileSystem = PoisoningFileSystem(wrapping: POSIXFileSystem())
        let replicator = Replicator(source: path, to: DirectoryReplica(path: replicaPath, fileSystem: fileSystem))
        try replicator.ship()
        let shipped = store.generation
        try write(sampleModel(count: 150, seed: 7, generation: 1), to: store)
        fileSystem.failSyncs(1) { $0.hasSuffix(".folio") }
        #expect(throws: StorageError.self) { try replicator.ship() }
        #expect(try Store.openReadOnly(at: replicaPath, options: testOptions()).generation == shipped)
        try write(sampleModel(count: 160, seed: 8, generation: 2), to: store)
        try replicator.ship()
        // The root file is synced every 64 publishes (the anchor lag bound): that sync fails
        // once, and the publishes after it go on.
        fileSystem.failSyncs(1) { $0.hasSuffix("/root") }
        var failures = 0
        for step in 0..<70 {
            try store.write { txn in try txn.put(bytes("\(step)"), for: bytes("step"), in: "t") }
            do {
                try replicator.ship()
            } catch {
                failures += 1
            }
        }
        #expect(failures == 1)
        try replicator.ship()
        try replicator.close()
        try expectReplica(at: replicaPath, equals: store)
    }

    /// The replica at `path` opens at `store`'s generation, with its contents, and verifies.
    private func expectReplica(at path: String, equals store: Store) throws {
        let replica = try Store.openReadOnly(at: path, options: testOptions())
        defer { replica.close() }
        #expect(replica.generation == store.generation)
        #expect(try contents(of: replica.read()) == contents(of: store.read()))
        #expect(replica.verify().isClean)
    }

    /// Timeline: a replicator follows with a minimum interval of an hour → its first
    /// shipment → the source commits 30 times, and the replicator's wake-ups come → it ships
    /// nothing during the interval (a replicator that shipped each commit would have) →
    /// stop ends the pause at once → one shipment takes the replica to the last commit.
    @Test func aMinimumIntervalHoldsShipmentsBack() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let replicaPath = directory.child("replica")
        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        try store.write { txn in try txn.put(bytes("0"), for: bytes("k"), in: "t") }
        let replicator = Replicator(source: path, to: DirectoryReplica(path: replicaPath))
        let shipped = Mutex<[ReplicationReport]>([])
        let stopped = DispatchSemaphore(value: 0)
        let following = Thread {
            try? replicator.follow(pollInterval: .milliseconds(20), minimumInterval: .seconds(3_600)) { event in
                if case .shipped(let report) = event { shipped.withLock { $0.append(report) } }
            }
            stopped.signal()
        }
        following.start()
        let deadline = ContinuousClock.now + .seconds(60)
        while shipped.withLock({ $0.isEmpty }), ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.005) }
        let first = store.generation
        for step in 1...30 { try store.write { txn in try txn.put(bytes("\(step)"), for: bytes("k"), in: "t") } }
        Thread.sleep(forTimeInterval: 0.3)  // time for wake-ups a replicator with no interval would ship on
        #expect(shipped.withLock { $0.map(\.generation) } == [first])
        replicator.stop()
        #expect(stopped.wait(timeout: .now() + 60) == .success, "stop ends the pause")
        let last = try replicator.ship()
        #expect(last.fromGeneration == first && last.generation == store.generation)
        try replicator.close()
        try expectReplica(at: replicaPath, equals: store)
    }

    /// Shipping `source` to the replica at `replica` is refused as another history.
    private func expectRefused(source: String, replica: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sourceLocation: sourceLocation) {
            try Replicator(source: source, to: DirectoryReplica(path: replica)).ship()
        } throws: { error in
            if case .replicaDiverged = error as? StorageError { return true }
            return false
        }
    }

    private func snapshotNames(_ store: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "\(store)/snapshots").filter { $0.hasSuffix(".folio") }
            .sorted()
    }
}

/// A destination that fails its n-th write (or its next sync) from when it is armed, as a
/// full disk or a lost mount would.
final class FailingDestination: ReplicaDestination, @unchecked Sendable {
    let inner: DirectoryReplica
    private let lock = NSLock()
    private var writesLeft: Int?
    private var failSync = false
    private let removal = Mutex(false)
    /// Makes every removal of a snapshot file fail, as a replicator killed just before it
    /// would leave the file.
    var failRemoval: Bool {
        get { removal.withLock { $0 } }
        set { removal.withLock { $0 = newValue } }
    }

    init(_ inner: DirectoryReplica) { self.inner = inner }
    var name: String { inner.name }

    func failAfter(_ writes: Int?, failSync: Bool) {
        lock.withLock {
            writesLeft = writes
            self.failSync = failSync
        }
    }

    private func fail(_ operation: String) -> StorageError {
        .io(operation: operation, path: inner.path, code: 28)  // ENOSPC
    }

    func holdings() throws(StorageError) -> ReplicaHoldings? { try inner.holdings() }
    func begin(info: [UInt8]) throws(StorageError) { try inner.begin(info: info) }
    func write(_ bytes: [UInt8], toSnapshot number: UInt64, at offset: UInt64) throws(StorageError) {
        let failing = lock.withLock { () -> Bool in
            guard let left = writesLeft else { return false }
            if left == 0 { return true }
            writesLeft = left - 1
            return false
        }
        if failing {
            // Half the bytes reach the file first, as a write cut short would leave them.
            try inner.write(Array(bytes.prefix(bytes.count / 2)), toSnapshot: number, at: offset)
            throw fail("write")
        }
        try inner.write(bytes, toSnapshot: number, at: offset)
    }
    func synchronize() throws(StorageError) {
        if lock.withLock({ failSync }) { throw fail("sync") }
        try inner.synchronize()
    }
    func publish(rootSlot: [UInt8], generation: UInt64) throws(StorageError) {
        try inner.publish(rootSlot: rootSlot, generation: generation)
    }
    func makePublishedRootDurable() throws(StorageError) { try inner.makePublishedRootDurable() }
    func removeSnapshot(_ number: UInt64) throws(StorageError) {
        if failRemoval { throw fail("remove") }
        try inner.removeSnapshot(number)
    }
    func finish() throws(StorageError) { try inner.finish() }
}

/// A file system whose next syncs of chosen files fail as POSIX's do: the failed handle is
/// poisoned, every later write or sync on it throws ``StorageError/needsReopen(path:cause:)``.
final class PoisoningFileSystem: ForwardingFileSystem {
    let wrapped: any FileSystem
    private let plan = Mutex<(count: Int, paths: @Sendable (String) -> Bool)>((0, { _ in false }))

    init(wrapping fileSystem: any FileSystem) { wrapped = fileSystem }

    /// Fails the next `count` syncs of files whose path `paths` accepts.
    func failSyncs(_ count: Int, of paths: @escaping @Sendable (String) -> Bool) {
        plan.withLock { $0 = (count, paths) }
    }

    /// Whether this sync of `path` fails (and uses up one of the planned failures).
    fileprivate func syncFails(_ path: String) -> Bool {
        plan.withLock { plan in
            guard plan.count > 0, plan.paths(path) else { return false }
            plan.count -= 1
            return true
        }
    }

    func open(_ path: String, mode: FileOpenMode) throws(StorageError) -> any StorageFile {
        PoisonableFile(wrapping: try wrapped.open(path, mode: mode), owner: self)
    }
}

private final class PoisonableFile: StorageFile, @unchecked Sendable {
    // Unchecked: `poisoned` is under its mutex; the rest is immutable.
    private let wrapped: any StorageFile
    private let owner: PoisoningFileSystem
    private let poisoned = Mutex(false)

    init(wrapping file: any StorageFile, owner: PoisoningFileSystem) {
        wrapped = file
        self.owner = owner
    }

    var path: String { wrapped.path }

    private func admit() throws(StorageError) {
        if poisoned.withLock({ $0 }) { throw .needsReopen(path: path, cause: "fsync failed (injected)") }
    }

    private func syncing(_ body: () throws(StorageError) -> Void) throws(StorageError) {
        try admit()
        if owner.syncFails(path) {
            poisoned.withLock { $0 = true }
            throw .io(operation: "fsync", path: path, code: 5)  // EIO
        }
        try body()
    }

    func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
        try wrapped.read(at: offset, count: count)
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        try admit()
        try wrapped.write(bytes, at: offset)
    }
    func sync() throws(StorageError) { try syncing { () throws(StorageError) in try wrapped.sync() } }
    func syncData() throws(StorageError) { try syncing { () throws(StorageError) in try wrapped.syncData() } }
    func truncate(to length: UInt64) throws(StorageError) {
        try admit()
        try wrapped.truncate(to: length)
    }
    func size() throws(StorageError) -> UInt64 { try wrapped.size() }
    func identity() throws(StorageError) -> FileIdentity { try wrapped.identity() }
    func close() { wrapped.close() }
}
