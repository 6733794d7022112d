import Foundation
import Synchronization
import Testing
import FolioStorage
import FolioTestSupport

/// Automatic compaction relative to live bytes, its backoff after failures, and retention
/// bounded by bytes. Sizes are read from the file system.
@Suite struct SpaceBoundTests {
    static let slack: UInt64 = 256 << 10

    static func options(
        _ fileSystem: any FileSystem = POSIXFileSystem(), retainedBytes: UInt64 = 0,
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) -> StoreOptions {
        StoreOptions(
            fileSystem: fileSystem, autoCompaction: AutoCompaction(slackBytes: slack, deadToLiveRatio: 1),
            retention: SnapshotRetention(
                gracePeriod: .seconds(3600), maximumRetainedFiles: 8,
                maximumRetainedBytes: retainedBytes),
            log: log)
    }

    /// Sizes of the snapshot files on disk, by file name.
    static func snapshotSizes(_ store: String) throws -> [String: UInt64] {
        let directory = "\(store)/snapshots"
        var sizes: [String: UInt64] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasSuffix(".folio") {
            let attributes = try FileManager.default.attributesOfItem(atPath: "\(directory)/\(name)")
            sizes[name] = (attributes[.size] as? NSNumber)?.uint64Value ?? 0
        }
        return sizes
    }

    static func fileName(_ number: UInt64) -> String {
        let hex = String(number, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + ".folio"
    }

    /// 400 records, then 1,500 single-record commits: after every commit, once the
    /// compaction it started in the background (if any) has finished, the current file
    /// is at most twice its live bytes plus the slack (and the header), and every other
    /// file on disk is the one root slot 1 names, gone after the next commit (a retention
    /// byte limit of 0, however long the grace period).
    @Test func manySmallCommitsStayWithinTheBound() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let store = try Store.open(at: path, options: Self.options())
        defer { store.close() }
        let value = [UInt8](repeating: 0x5A, count: 150)
        try store.write { txn in
            for i in 0..<400 { try txn.put(value, for: Array("record-\(i)".utf8), in: "records") }
        }
        var compactions = 0
        var previousFile = store.currentCommit.fileNumber
        var largestFile: UInt64 = 0
        for round in 0..<1_500 {
            try store.write { txn in
                try txn.put(value + Array("\(round)".utf8), for: Array("record-\(round * 7 % 400)".utf8), in: "records")
            }
            store.waitForCompaction()
            let statistics = try store.statistics()
            let current = store.currentCommit.fileNumber
            let sizes = try Self.snapshotSizes(path)
            let currentBytes = try #require(sizes[Self.fileName(current)])
            largestFile = max(largestFile, currentBytes)
            // The bound: dead <= live + slack after every commit, in committed bytes; the
            // file on disk also holds the zeros preallocated past them (an eighth of the
            // committed length, at least 64 KiB: Docs/Format.md §3).
            let bound = 2 * statistics.liveBytes + Self.slack + 64
            #expect(statistics.currentFileBytes <= bound, "round \(round)")
            #expect(currentBytes <= bound + max(64 << 10, statistics.currentFileBytes / 8) + 16 << 10, "round \(round)")
            let others = sizes.filter { $0.key != Self.fileName(current) }
            if current != previousFile { compactions += 1 }
            // Replaced files beyond the byte limit go at once, the one just replaced included:
            // compaction writes its root into both slots, so no slot needs it (format 2).
            #expect(others.isEmpty, "round \(round): replaced files beyond the byte limit go")
            previousFile = current
        }
        // The dead bytes did pile up and were reclaimed many times, not once.
        #expect(compactions >= 5)
        #expect(largestFile > Self.slack)
        #expect(try store.verify().isClean)
    }

    /// Retention by bytes keeps replaced files within the limit (oldest go first) and by
    /// count as before; the grace period still applies below both.
    @Test func retentionByBytesKeepsNewestWithinTheLimit() throws {
        let fileSystem = try memoryFileSystem()
        let store = try Store.open(at: "/stores/s", options: Self.options(fileSystem, retainedBytes: 1 << 20))
        defer { store.close() }
        let big = [UInt8](repeating: 1, count: 2_000)
        // Each compaction replaces a file of about 200-600 KiB: the limit holds 1 or 2.
        for round in 0..<6 {
            try store.write { txn in
                for i in 0..<100 { try txn.put(big + [UInt8(round)], for: Array("k\(i)".utf8), in: "t") }
            }
            try store.compact()
            try store.write { try $0.put([UInt8(round)], for: [0], in: "t") }  // slot 1 moves on
            let current = store.currentCommit.fileNumber
            var retained: UInt64 = 0
            for name in try fileSystem.contentsOfDirectory("/stores/s/snapshots") where name != Self.fileName(current) {
                let handle = try fileSystem.open("/stores/s/snapshots/\(name)", mode: .readOnly)
                retained += try handle.size()
                handle.close()
            }
            #expect(retained <= 1 << 20, "round \(round)")
            if round > 0 { #expect(retained > 0, "files within the limit stay for the grace period") }
        }
    }

    /// A compaction that keeps failing (ENOSPC on the new snapshot file, persistent) is not
    /// retried on every commit: the attempts back off, doubling; commits keep working; the
    /// failure is logged once; after a success the backoff starts over.
    @Test func failingCompactionBacksOff() throws {
        let memory = try memoryFileSystem()
        let fileSystem = FaultInjectingFileSystem(wrapping: memory)
        let logged = Mutex<[String]>([])
        let store = try Store.open(
            at: "/stores/s", options: Self.options(fileSystem, log: { line in logged.withLock { $0.append(line) } }))
        defer { store.close() }
        let value = [UInt8](repeating: 7, count: 150)
        try store.write { txn in
            for i in 0..<400 { try txn.put(value, for: Array("record-\(i)".utf8), in: "records") }
        }
        /// Fails, from now on, every mutating call on a snapshot file other than the current one.
        func breakCompaction() {
            let current = "/stores/s/snapshots/" + Self.fileName(store.currentCommit.fileNumber)
            fileSystem.faultedPaths = { $0.hasPrefix("/stores/s/snapshots/") && $0 != current }
            fileSystem.plan = FaultPlan(failingCall: fileSystem.callCount + 1, kind: .noSpace, persistence: .persistent)
        }
        func attempts() -> Int {
            fileSystem.failedOperations.filter { if case .open = $0 { return true } else { return false } }.count
        }
        breakCompaction()
        let file = store.currentCommit.fileNumber
        var commitsPastTheLimit = 0
        for round in 0..<1_500 {
            try store.write { txn in
                try txn.put(value + Array("\(round)".utf8), for: Array("record-\(round * 7 % 400)".utf8), in: "records")
            }
            store.waitForCompaction()
            let statistics = try store.statistics()
            if statistics.deadBytes > statistics.liveBytes + Self.slack { commitsPastTheLimit += 1 }
        }
        #expect(store.currentCommit.fileNumber == file, "every compaction failed")
        // Without backoff every one of these commits would have tried; with it, one
        // attempt per doubling margin (1 MiB, 2 MiB, 4 MiB, ... of further dead bytes).
        #expect(commitsPastTheLimit > 500)
        #expect(attempts() >= 2, "it does retry")
        #expect(attempts() <= 6)
        #expect(logged.withLock { $0.filter { $0.contains("failed:") } }.count == 1)
        // The fault clears: the next attempt due succeeds, and the backoff starts over.
        fileSystem.plan = nil
        fileSystem.faultedPaths = nil
        var round = 0
        while store.currentCommit.fileNumber == file && round < 3_000 {
            try store.write { try $0.put(value, for: Array("record-\(round % 400)".utf8), in: "records") }
            store.waitForCompaction()
            round += 1
        }
        #expect(store.currentCommit.fileNumber != file, "compaction resumed")
        fileSystem.reset()
        breakCompaction()
        var firstRetry = 0
        for round in 0..<400 where attempts() == 0 {
            try store.write { try $0.put(value + [1], for: Array("record-\(round % 400)".utf8), in: "records") }
            store.waitForCompaction()
            firstRetry = round
        }
        #expect(attempts() == 1, "after a success the first failure comes at the normal limit")
        #expect(firstRetry < 200)
        #expect(
            logged.withLock { $0.filter { $0.contains("failed:") } }.count == 2, "a new run of failures is logged again"
        )
        #expect(try store.verify().isClean)
    }
}
