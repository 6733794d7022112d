import Testing
import Foundation
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport

/// The key-value store when the disk fails and when stored bytes are damaged. A
/// persistence is opened over FolioTestSupport's fault-injecting file system the way
/// `Persistence(at:)` opens one over the POSIX one (the internal `PersistenceCore`, through
/// `@testable`: there is no public way to give a persistence another file system).
@Suite struct KeyValueFaultTests {
    /// A persistence over `fileSystem` at "/store", with `PersistenceOptions`' defaults.
    static func open(
        _ fileSystem: any FileSystem, durability: FolioStorage.Durability = .full
    ) throws -> Persistence<ReadWrite> {
        let options = KV.options(durability: durability)
        let store = try Store.open(at: "/store", options: options.storeOptions(fileSystem))
        return Persistence(
            core: PersistenceCore(
                store: store, durability: durability, recordCache: options.recordCache,
                valueCache: options.valueCache))
    }

    static let a = ValueKey<Int>("f/a", default: 0)
    static let b = ValueKey<KVPoint>("f/b", default: KVPoint(x: 0, label: ""))
    static let c = ValueKey<Int>("f/c", default: 0)

    /// Whether `error` is a storage error that says which operation failed.
    static func namesTheFailure(_ error: FolioError) -> Bool {
        guard case .storage(let storage) = error else { return false }
        let text = "\(storage)"
        return ["pwrite", "write", "fsync", "sync", "failed", "reopen"].contains { text.contains($0) }
    }

    /// Every write and sync fails from some point on (a disk gone bad): the values set stay
    /// visible, every flush throws a storage error naming what failed (never returns as if
    /// they were durable), and a perform after them fails rather than committing over them.
    @Test(arguments: [FolioStorage.Durability.full, .grouped(window: .milliseconds(5))])
    func aFailingDiskKeepsValuesVisibleAndEveryFlushThrows(durability: FolioStorage.Durability) async throws {
        let fileSystem = FaultInjectingFileSystem(wrapping: MemoryFileSystem(), countedKinds: [.write, .sync])
        let persistence = try Self.open(fileSystem, durability: durability)
        defer { persistence.close() }
        let values = persistence.values
        try values.set(1, for: Self.a)
        try await values.flush()

        fileSystem.plan = FaultPlan(failingCall: fileSystem.callCount + 1, kind: .io, persistence: .persistent)
        try values.set(2, for: Self.a)
        try values.set(KVPoint(x: 3, label: "three"), for: Self.b)
        #expect(values[Self.a] == 2)
        for attempt in 0..<3 {
            do {
                try await values.flush()
                Issue.record("flush \(attempt) returned although no write can succeed")
            } catch {
                #expect(Self.namesTheFailure(error), "flush \(attempt) threw \(error)")
            }
            #expect(values[Self.a] == 2, "attempt \(attempt)")
            #expect(values[Self.b] == KVPoint(x: 3, label: "three"), "attempt \(attempt)")
            #expect(try values.keys(withPrefix: "f/") == ["f/a", "f/b"])
        }
        #expect(fileSystem.injectedFaults > 0)
        // A later set is visible too, and its flush throws as well.
        try values.set(4, for: Self.c)
        #expect(values[Self.c] == 4)
        await #expect(throws: FolioError.self) { try await values.flush() }
    }

    /// One write or sync fails once (then the disk works): whatever flush does, nothing set
    /// is silently dropped: a flush that returns means the values are in the store (checked
    /// by reopening it), and the values stay visible meanwhile.
    @Test(arguments: 1...6)
    func aTransientFaultNeverDropsASetSilently(failingCallAfterSetup: Int) async throws {
        let memory = MemoryFileSystem()
        let fileSystem = FaultInjectingFileSystem(wrapping: memory, countedKinds: [.write, .sync])
        var flushed = false
        var expected = 0
        do {
            let persistence = try Self.open(fileSystem)
            defer { persistence.close() }
            let values = persistence.values
            try values.set(1, for: Self.a)
            try await values.flush()
            fileSystem.plan = FaultPlan(
                failingCall: fileSystem.callCount + failingCallAfterSetup, kind: .io, persistence: .transient)
            // Once a background commit's sync has failed, the store refuses every write
            // until reopened, and so do later sets, with that error (never accepted and
            // then dropped).
            var last = 1
            for n in 2...5 {
                do {
                    try values.set(n, for: Self.a)
                    try values.set(KVPoint(x: n, label: "\(n)"), for: Self.b)
                    last = n
                } catch {
                    #expect(Self.namesTheFailure(error), "set \(n) threw \(error)")
                    break
                }
                await Task.yield()
            }
            for attempt in 0..<3 where !flushed {
                do {
                    try await values.flush()
                    flushed = true
                } catch {
                    #expect(Self.namesTheFailure(error), "flush \(attempt) threw \(error)")
                }
                #expect(values[Self.a] == last)
            }
            expected = last
        }
        // Calls 1...6 after the setup are the first commits' writes and syncs: each fires
        // (a failed write is retried by the next flush; a failed sync poisons the store).
        #expect(fileSystem.injectedFaults == 1, "\(fileSystem.failedOperations)")
        guard flushed else { return }  // the store refused to go on: the failure was reported, not hidden
        fileSystem.plan = nil
        let reopened = try Self.open(fileSystem)
        defer { reopened.close() }
        #expect(
            reopened.values[Self.a] == expected,
            "a flush returned, but the reopened store has \(reopened.values[Self.a])")
        #expect(reopened.values[Self.b] == KVPoint(x: expected, label: "\(expected)"))
    }

    /// Damaged stored bytes (an unknown layout byte, an empty value, truncated JSON), written
    /// through the engine: reading such a key throws `.valueDecodingFailed` naming it, the
    /// subscript gives the default, the other keys still read, listing still works, and a
    /// set repairs the key.
    @Test func damagedStoredBytesAreATypedErrorNamingTheKeyAndOtherKeysStillRead() async throws {
        let path = KV.temporaryPath("damaged")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var persistence = try Persistence(at: path, options: KV.options())
        defer { persistence.close() }
        try persistence.values.set(1, for: Self.a)
        try persistence.values.set(KVPoint(x: 2, label: "two"), for: Self.b)
        try await persistence.values.flush()
        #expect(persistence.values[Self.a] == 1)  // cached now

        let damaged = [
            "f/layout": [UInt8(2)] + Array("5".utf8), "f/empty": [], "f/truncated": [UInt8(1)] + Array("{\"x\":".utf8),
            "f/a": [UInt8(0)] + Array("1".utf8),
        ]
        let transaction = try persistence.store.beginWrite()
        for (name, bytes) in damaged { _ = try transaction.put(bytes, for: Array(name.utf8), in: "folio/values") }
        try transaction.commit()

        for round in 0..<2 {
            let values = persistence.values
            for name in damaged.keys.sorted() {
                let key = ValueKey<Int>(name, default: -7)
                do {
                    let read = try values.value(for: key)
                    Issue.record("round \(round): \(name) read as \(read)")
                } catch {
                    guard case .valueDecodingFailed(let key, let type, let reason) = error else {
                        Issue.record("round \(round): \(name) threw \(error)")
                        continue
                    }
                    #expect(key == name)
                    #expect(type == "Swift.Int")
                    if name == "f/layout" { #expect(reason.contains("layout 2"), "\(reason)") }
                }
                #expect(values[key] == -7, "round \(round): the subscript gives the default for \(name)")
                #expect(try values.contains(key), "round \(round): \(name)")
            }
            #expect(values[Self.b] == KVPoint(x: 2, label: "two"), "round \(round)")
            #expect(try values.keys(withPrefix: "f/") == ["f/a", "f/b", "f/empty", "f/layout", "f/truncated"])
            persistence = try persistence.reopened()  // round 1: the same from the store, cold
        }
        // A set repairs the damaged key, now and after reopening.
        try persistence.values.set(10, for: Self.a)
        #expect(try persistence.values.value(for: Self.a) == 10)
        try await persistence.values.flush()
        persistence = try persistence.reopened()
        #expect(try persistence.values.value(for: Self.a) == 10)
    }

    /// A `perform` whose sync fails leaves the store refusing
    /// every later commit; a set after it must throw, not return and wait in memory for a
    /// commit that cannot happen.
    @Test func aSetAfterAPerformsFailedSyncThrows() async throws {
        let fileSystem = FaultInjectingFileSystem(wrapping: MemoryFileSystem(), countedKinds: [.sync])
        let persistence = try Self.open(fileSystem)
        defer { persistence.close() }
        try persistence.values.set(1, for: Self.a)
        try await persistence.values.flush()
        fileSystem.plan = FaultPlan(failingCall: fileSystem.callCount + 1, kind: .io, persistence: .persistent)
        await #expect(throws: (any Error).self) {
            try await persistence.perform { try persistence.values.set(2, for: Self.a) }
        }
        #expect(fileSystem.injectedFaults > 0)
        #expect(throws: FolioError.self) { try persistence.values.set(3, for: Self.c) }
        #expect(persistence.values[Self.c] == 0)
        await #expect(throws: FolioError.self) { try await persistence.values.flush() }
    }
}
