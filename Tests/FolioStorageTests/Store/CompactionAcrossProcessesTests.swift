import Foundation
import Synchronization
import Testing
import FolioStorage
import FolioTestSupport

/// A value shared with a `@Sendable` hook or log.
private final class Shared<Value>: Sendable {
    private let value: Mutex<Value>
    init(_ value: sending Value) { self.value = Mutex(value) }
    func withLock<Result>(_ body: (inout sending Value) -> sending Result) -> sending Result { value.withLock(body) }
}

/// A compaction copies without the store's lock, so other processes write during its copy;
/// one process compacts a store at a time (the compaction lock), and a copy cut short is
/// reclaimed by a later writer open (Docs/Durability.md §1.3 and §1.6). Written as
/// timelines, with `folio-torture` as the other process and the copy held at the end of its
/// first pass (`onCompactionPass`, or `folio-torture compact --hold`), so that what happens
/// "during the copy" happens there deterministically.
@Suite(.serialized) struct CompactionAcrossProcessesTests {
    static let keys = 12_000

    /// A store of ``keys`` keys of 150 bytes (about 2.5 MiB), with the first half written
    /// twice (dead bytes to compact away).
    /// Creates the store at `path` with ``fill(_:)``'s contents, and closes it.
    static func createFilled(at path: String) throws {
        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        try fill(store)
    }

    static func fill(_ store: Store) throws {
        for round in 0..<2 {
            for batch in stride(from: 0, to: round == 0 ? keys : keys / 2, by: 2_000) {
                try store.write { transaction in
                    for i in batch..<(batch + 2_000) {
                        let value = Array(repeating: UInt8(round + 1), count: 150)
                        try transaction.put(value, for: Array("k\(i)".utf8), in: "data")
                    }
                }
            }
        }
    }

    /// Checks the bulk data and that every acknowledged key of an `acked-writer` is there.
    static func check(_ view: ReadView, acks: some Sequence<Int>) throws {
        #expect(try view.count(in: "data") == UInt64(keys))
        #expect(try view.get(Array("k0".utf8), in: "data") == Array(repeating: 2, count: 150))
        #expect(try view.get(Array("k\(keys - 1)".utf8), in: "data") == Array(repeating: 1, count: 150))
        for i in acks {
            #expect(try view.get(Array("a\(i)".utf8), in: "acks") == Array(String(i).utf8), "ack \(i)")
        }
    }

    /// The acknowledgements of an `acked-writer`: (i, generation) of each "ack" line.
    static func acks(_ output: [String]) -> [(Int, UInt64)] {
        output.compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[0] == "ack", let i = Int(parts[1]), let g = UInt64(parts[2]) else {
                return nil
            }
            return (i, g)
        }
    }

    /// The snapshot files of the store at `path`: number and size.
    static func snapshotFiles(_ path: String) throws -> [(number: UInt64, size: UInt64)] {
        let directory = path + "/snapshots"
        return try FileManager.default.contentsOfDirectory(atPath: directory).compactMap { name in
            guard name.hasSuffix(".folio"), let number = UInt64(name.dropLast(6), radix: 16) else { return nil }
            let size = try FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? UInt64
            return (number, size ?? 0)
        }.sorted { $0.number < $1.number }
    }

    /// Timeline: this process fills a store and compacts it → at the end of the first
    /// background pass (copy made, this process holding no lock of the store) a child
    /// `acked-writer` opens the store and commits five transactions, each acknowledged, with
    /// a busy timeout of 2 s, and exits → only then does the copy go on (the hook returns) →
    /// the catch-up adopts the child's commits and switches. The result holds every commit;
    /// the compaction's generation is the one after the child's last; `verify` is clean, here
    /// and in a fresh read-only open. With a compaction that held the lock for its whole run,
    /// the child's first commit waits 2 s and fails: the hook would see it exit with an error.
    @Test func anotherProcessCommitsDuringTheCopy() throws {
        let directory = TemporaryDirectory("folio-compaction-across")
        defer { directory.remove() }
        let path = directory.child("store")
        let tool = try ProjectExecutable.path("folio-torture")
        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        try Self.fill(store)
        let copied = store.generation
        let child = Shared<(output: [String], status: Int32?, errors: String, holdsLock: Bool)>(([], nil, "", true))
        store.onCompactionPass { pass in
            guard pass == 1 else { return }
            let holds = store.holdsWriterLock
            do {
                let writer = try ChildProcess(tool, ["acked-writer", path, "0", "5", "--busy-timeout-ms", "2000"])
                _ = try? writer.waitForLine(timeout: 30) { $0.hasPrefix("done") }
                let status = try writer.wait(timeout: 30)
                child.withLock { $0 = (writer.output, status, writer.errorOutput, holds) }
            } catch {
                child.withLock { $0.errors = "\(error)" }
            }
        }
        let report = try store.compact()
        let (output, status, errors, heldLock) = child.withLock { $0 }
        #expect(!heldLock, "the copy ran without the store's lock")
        #expect(status == 0, "the child: \(errors)")
        let acks = Self.acks(output)
        #expect(acks.map(\.0) == Array(0..<5), "\(output)")
        // Acknowledged before the copy went on, on the generation the copy began at.
        #expect(output.first == "open \(copied)")
        let last = acks.last?.1 ?? 0
        #expect(acks.map(\.1) == Array((copied + 1)...(copied + 5)))
        #expect(report.generation == last + 1, "the compaction comes after the child's commits")
        #expect(store.generation == report.generation)
        try Self.check(store.read(), acks: 0..<5)
        #expect(store.verify().isClean)
        // The compaction's file is the store's only file: the replaced one went (no grace).
        let files = try Self.snapshotFiles(path)
        #expect(files.count == 1, "\(files)")
        #expect(report.bytesAfter < report.bytesBefore)
        let reader = try Store.openReadOnly(at: path, options: testOptions())
        defer { reader.close() }
        #expect(reader.generation == report.generation)
        try Self.check(reader.read(), acks: 0..<5)
        #expect(reader.verify().isClean)
    }

    /// Timeline: a child compacts and is held in its copy → this process opens the store for
    /// writing (its open leaves the child's file, above the current one, alone: the child is
    /// copying into it) → commits → its `compact()` waits 300 ms for the compaction lock and
    /// throws `lockedByAnotherWriter` naming `compaction.lock` → an automatic compaction
    /// started by its commits skips, logging no failure → the child goes on and compacts,
    /// catching up on this process's commits → this process catches up, then compacts too.
    /// Never corrupt: `verify` clean after each step, and every commit kept.
    @Test func oneProcessCompactsAtATime() throws {
        let directory = TemporaryDirectory("folio-compaction-exclusion")
        defer { directory.remove() }
        let path = directory.child("store")
        let tool = try ProjectExecutable.path("folio-torture")
        try Self.createFilled(at: path)
        let compactor = try ChildProcess(tool, ["compact", path, "--hold", "--busy-timeout-ms", "5000"])
        defer { if compactor.isRunning { compactor.kill() } }
        let copiedLine = try compactor.waitForLine(timeout: 60) { $0.hasPrefix("copied") || $0.hasPrefix("locked") }
        #expect(copiedLine.hasPrefix("copied"))
        let copyFile = try #require(Self.snapshotFiles(path).last)
        #expect(copyFile.number == 2 && copyFile.size > 1 << 20, "the child's copy: \(copyFile)")

        let logged = Shared<[String]>([])
        var options = testOptions(log: { line in logged.withLock { $0.append(line) } })
        options.busyTimeout = .milliseconds(300)
        options.autoCompaction = AutoCompaction(slackBytes: 0, deadToLiveRatio: 0.01)
        let store = try Store.open(at: path, options: options)
        defer { store.close() }
        #expect(try Self.snapshotFiles(path).last?.size == copyFile.size, "an open leaves a copy in progress alone")
        for i in 0..<5 {
            try store.write { transaction in
                try transaction.put(Array(String(i).utf8), for: Array("a\(i)".utf8), in: "acks")
            }
        }
        store.waitForCompaction()
        #expect(try Self.snapshotFiles(path).map(\.number) == [1, 2], "the automatic compaction skipped")
        #expect(!logged.withLock { $0 }.contains { $0.contains("automatic compaction") }, "\(logged.withLock { $0 })")
        let start = ContinuousClock.now
        #expect(throws: StorageError.lockedByAnotherWriter(path: "\(path)/compaction.lock")) {
            try store.compact()
        }
        #expect(ContinuousClock.now - start >= .milliseconds(300), "compact() waited the busy timeout")
        #expect(store.verify().isClean)

        compactor.send("go")
        let done = try compactor.waitForLine(timeout: 60) { $0.hasPrefix("compacted") || $0.hasPrefix("locked") }
        #expect(try compactor.wait() == 0, "\(compactor.errorOutput)")
        let generation = try #require(UInt64(done.split(separator: " ").last ?? ""))
        #expect(done.hasPrefix("compacted"))
        try store.catchUpWithOtherWriters()
        #expect(store.generation == generation, "the child's compaction came after this process's commits")
        try Self.check(store.read(), acks: 0..<5)
        #expect(store.verify().isClean)
        let report = try store.compact()
        #expect(report.generation == generation + 1)
        try Self.check(store.read(), acks: 0..<5)
        #expect(store.verify().isClean)
    }

    /// Timeline: this process has the store open for writing → a child compacts and is held
    /// in its copy → this process commits five transactions → the child is killed (`kill -9`)
    /// mid-copy → this process commits five more, and compacts (the dead child's lock went
    /// with it) → closed; a read-only open verifies clean and holds every commit → a writer
    /// open reclaims the dead child's copy (a 64-byte header keeps its number) and verifies
    /// clean.
    @Test func aCompactionKilledMidCopyIsReclaimedByALaterOpen() throws {
        let directory = TemporaryDirectory("folio-compaction-killed")
        defer { directory.remove() }
        let path = directory.child("store")
        let tool = try ProjectExecutable.path("folio-torture")
        var options = testOptions()
        options.busyTimeout = .seconds(5)
        let store = try Store.open(at: path, options: options)
        try Self.fill(store)
        let compactor = try ChildProcess(tool, ["compact", path, "--hold", "--busy-timeout-ms", "5000"])
        let line = try compactor.waitForLine(timeout: 60) { $0.hasPrefix("copied") || $0.hasPrefix("locked") }
        #expect(line.hasPrefix("copied"))
        for i in 0..<5 {
            try store.write { transaction in
                try transaction.put(Array(String(i).utf8), for: Array("a\(i)".utf8), in: "acks")
            }
        }
        compactor.kill()
        #expect(try compactor.wait() == -SIGKILL)
        let abandoned = try #require(Self.snapshotFiles(path).last)
        #expect(abandoned.number == 2 && abandoned.size > 1 << 20, "the dead child's copy: \(abandoned)")
        for i in 5..<10 {
            try store.write { transaction in
                try transaction.put(Array(String(i).utf8), for: Array("a\(i)".utf8), in: "acks")
            }
        }
        let report = try store.compact()
        #expect(try Self.snapshotFiles(path).map(\.number) == [2, 3], "a new number above the abandoned copy")
        try Self.check(store.read(), acks: 0..<10)
        store.close()

        let reader = try Store.openReadOnly(at: path, options: testOptions())
        #expect(reader.generation == report.generation)
        try Self.check(reader.read(), acks: 0..<10)
        #expect(reader.verify().isClean)
        reader.close()
        let reopened = try Store.open(at: path, options: testOptions())
        defer { reopened.close() }
        // The abandoned copy is below the current file now: an older file, retired at open.
        let files = try Self.snapshotFiles(path)
        #expect(!files.contains { $0.number == 2 && $0.size > 64 }, "the abandoned copy is reclaimed: \(files)")
        try Self.check(reopened.read(), acks: 0..<10)
        #expect(reopened.verify().isClean)
    }

    /// Timeline: a child compaction is killed mid-copy while this process has no writer open
    /// → a writer open (nobody compacting now) reclaims the abandoned copy, leaving its
    /// 64-byte header, and the store verifies clean with everything in it.
    @Test func aCopyLeftByAKilledCompactionIsReclaimedAtTheNextOpen() throws {
        let directory = TemporaryDirectory("folio-compaction-reclaimed")
        defer { directory.remove() }
        let path = directory.child("store")
        let tool = try ProjectExecutable.path("folio-torture")
        try Self.createFilled(at: path)
        let compactor = try ChildProcess(tool, ["compact", path, "--hold"])
        let line = try compactor.waitForLine(timeout: 60) { $0.hasPrefix("copied") || $0.hasPrefix("locked") }
        #expect(line.hasPrefix("copied"))
        let writer = try ChildProcess(tool, ["acked-writer", path, "0", "3"])
        #expect(try writer.wait() == 0, "\(writer.errorOutput)")
        compactor.kill()
        #expect(try compactor.wait() == -SIGKILL)
        #expect(try Self.snapshotFiles(path).last.map { $0.number == 2 && $0.size > 1 << 20 } == true)
        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        #expect(try Self.snapshotFiles(path).map(\.size).last == 64, "reclaimed to its header")
        try Self.check(store.read(), acks: 0..<3)
        #expect(store.verify().isClean)
    }
}
