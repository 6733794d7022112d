import Testing
import Foundation
@testable import FolioStorage
import FolioTestSupport

/// `Store.read(at:)`: a past generation found along the commit chain, read as it was; the
/// walk is remembered, joined by later walks, carried across a compaction while the
/// replaced file is kept, and never mixed with another history.
@Suite struct PastGenerationReadsTests {
    let path = "/stores/s"

    /// One commit per key: key `i` is written at the `i`-th commit after `start`, with a
    /// value that names it.
    func commit(_ range: Range<Int>, into store: Store) throws {
        for i in range {
            try store.write { try $0.put(Array("v\(i)".utf8), for: [UInt8(i >> 8), UInt8(i & 0xFF)], in: "t") }
        }
    }

    /// The view holds exactly the keys written by `count` commits, each with its value.
    func expectKeys(_ view: ReadView, _ count: Int) throws {
        #expect(try view.count(in: "t") == UInt64(count), "generation \(view.generation)")
        for i in [0, count - 1, count, count + 1] where i >= 0 {
            let value = try view.get([UInt8(i >> 8), UInt8(i & 0xFF)], in: "t")
            #expect(value == (i < count ? Array("v\(i)".utf8) : nil), "key \(i) at generation \(view.generation)")
        }
    }

    @Test func pastGenerationsReadAsTheyWereInAnyOrder() throws {
        let store = try Store.open(at: path, options: testOptions(try memoryFileSystem()))
        defer { store.close() }
        let start = store.generation
        try commit(0..<60, into: store)
        var rng = SplitMix64(seed: 7)
        var written = 60
        for round in 0..<200 {
            if round % 25 == 24 {
                try commit(written..<(written + 5), into: store)
                written += 5
            }
            let count = Int(rng.next() % UInt64(written + 1))
            let view = try store.read(at: start + UInt64(count))
            #expect(view.generation == start + UInt64(count))
            try expectKeys(view, count)
        }
    }

    /// The first read of a generation walks the chain down to it (its commit pages read in
    /// blocks); reading it, or any generation the walk passed, again reads no commit page.
    @Test func aWalkIsRememberedAndJoined() throws {
        let store = try Store.open(at: path, options: testOptions(try memoryFileSystem()))
        defer { store.close() }
        let start = store.generation
        try commit(0..<300, into: store)
        var before = store.ioStatistics
        _ = try store.read(at: start + 100)
        #expect(store.ioStatistics.since(before).pagesRead < 40, "200 commit pages read in blocks")
        before = store.ioStatistics
        for count in [100, 150, 299, 120] { _ = try store.read(at: start + UInt64(count)) }
        #expect(store.ioStatistics.since(before).pagesRead == 0)
        // Newer commits: a read walks down to what was found, and older ones go on from there.
        try commit(300..<310, into: store)
        try expectKeys(try store.read(at: start + 305), 305)
        try expectKeys(try store.read(at: start + 10), 10)
        before = store.ioStatistics
        for count in [10, 50, 200, 309] { _ = try store.read(at: start + UInt64(count)) }
        #expect(store.ioStatistics.since(before).pagesRead == 0)
        #expect(try store.oldestReadableGeneration() == 1)
    }

    /// Across a compaction: the chain goes on into the replaced file while it is kept; once
    /// it is gone, the compaction's generation is the oldest, and older ones are a typed error.
    @Test func theReplacedFileHoldsTheGenerationsBeforeACompaction() throws {
        let memory = try memoryFileSystem()
        var options = testOptions(memory)
        options.retention = SnapshotRetention(gracePeriod: .seconds(600))
        let store = try Store.open(at: path, options: options)
        let start = store.generation
        try commit(0..<20, into: store)
        try store.compact()
        let compaction = store.generation
        try commit(20..<30, into: store)
        try expectKeys(try store.read(at: start + 5), 5)
        try expectKeys(try store.read(at: compaction), 20)
        #expect(try store.oldestReadableGeneration() == 1)
        store.close()

        // Reopened with no grace period: the open keeps the newest replaced file for a fresh
        // grace period of zero, and the next compaction's check removes it.
        options.retention = SnapshotRetention(gracePeriod: .zero)
        let reopened = try Store.open(at: path, options: options)
        defer { reopened.close() }
        try reopened.compact()
        let second = reopened.generation
        try commit(30..<32, into: reopened)
        #expect(throws: StorageError.generationUnavailable(requested: start + 5, oldest: second, newest: second + 2)) {
            try reopened.read(at: start + 5)
        }
        #expect(try reopened.oldestReadableGeneration() == second)
        try expectKeys(try reopened.read(at: second + 1), 31)
        #expect(throws: StorageError.generationUnavailable(requested: second + 3, oldest: second, newest: second + 2)) {
            try reopened.read(at: second + 3)
        }
    }

    /// A reader that walked one history, then adopted another (the writer fell back to an
    /// older root and committed again, with the same generations): its reads of past
    /// generations see the new history, never what the first walk found.
    @Test func anotherHistoryIsWalkedAfresh() throws {
        let memory = try memoryFileSystem()
        var writerOptions = testOptions(memory)
        writerOptions.retention = SnapshotRetention(gracePeriod: .seconds(600))
        var writer = try Store.open(at: path, options: writerOptions)
        try commit(0..<3, into: writer)
        let beforeCompaction = memory.contents(of: "\(path)/root")!
        let older = writer.generation
        try writer.compact()
        try commit(3..<8, into: writer)
        let followed = writer.generation

        let reader = try Store.openReadOnly(at: path, options: testOptions(memory))
        defer { reader.close() }
        #expect(try reader.read(at: followed - 1).get([0, 6], in: "t") == Array("v6".utf8))
        writer.close()

        try putOlderRoot(from: beforeCompaction, intoSlotOneOf: "\(path)/root", in: memory)
        var root = memory.contents(of: "\(path)/root")!
        root[20] ^= 0xFF
        memory.setContents(root, of: "\(path)/root")
        writer = try Store.open(at: path, options: writerOptions)
        defer { writer.close() }
        #expect(writer.generation == older)
        while writer.generation < followed + 1 {
            try writer.write { try $0.put([9], for: [0xFF, UInt8(writer.generation)], in: "t") }
        }
        _ = try reader.refresh()
        #expect(reader.generation == followed + 1)
        let past = try reader.read(at: followed - 1)
        #expect(try past.get([0, 6], in: "t") == nil, "the first history's key")
        #expect(try past.get([0xFF, UInt8(followed - 2)], in: "t") == [9])
    }

    /// Retention removes the replaced file on a later commit: the oldest generation reported
    /// follows, and a read of it works.
    @Test func theOldestFollowsTheRemovalOfTheReplacedFile() throws {
        var options = testOptions(try memoryFileSystem())
        options.retention = SnapshotRetention(gracePeriod: .milliseconds(200))
        let store = try Store.open(at: path, options: options)
        defer { store.close() }
        try commit(0..<5, into: store)
        try store.compact()
        let compaction = store.generation
        try commit(5..<7, into: store)
        #expect(try store.oldestReadableGeneration() == 1)
        _ = try store.read(at: 3)  // kept among the recent roots
        Thread.sleep(forTimeInterval: 0.5)
        try commit(7..<8, into: store)  // retention removes the replaced file
        let oldest = try store.oldestReadableGeneration()
        #expect(oldest == compaction)
        try expectKeys(try store.read(at: oldest), 5)
        #expect(throws: StorageError.generationUnavailable(requested: 3, oldest: compaction, newest: store.generation))
        {
            try store.read(at: 3)
        }
    }

    static func pastCommit(_ generation: UInt64) -> PastCommit {
        PastCommit(
            CommitRecord(
                generation: generation, timestamp: 0, kind: .transaction, catalogRoot: .none, liveBytes: 0,
                previous: nil, changes: ChangeRecord(trees: [], droppedTrees: [])),
            at: CommitLocation(fileNumber: 1, address: PageAddress(offset: generation * 128, length: 104)),
            chain: UInt32(truncatingIfNeeded: generation))
    }

    /// A full window still takes the older commits a walk down found: its newest go.
    @Test func aFullWindowTakesOlderCommitsInPlaceOfItsNewest() {
        let top = UInt64(PastGenerations.capacity) + 1000
        var past = PastGenerations()
        past.append(newestFirst: (1000..<top).reversed().map(Self.pastCommit), newest: top - 1, below: nil)
        #expect(past.location(of: 1000) != nil && past.location(of: top - 1) != nil)
        past.prepend(newestFirst: [Self.pastCommit(999), Self.pastCommit(998)], newest: 999, below: nil)
        #expect(past.location(of: 998) == Self.pastCommit(998) && past.location(of: 999) == Self.pastCommit(999))
        #expect(past.location(of: top - 1) == nil && past.location(of: top - 3) != nil)
        #expect(past.previous(of: 999) == Self.pastCommit(998).location)
        // A walk not joined to the window replaces it.
        past.prepend(newestFirst: [Self.pastCommit(10)], newest: 10, below: nil)
        #expect(past.location(of: 10) != nil && past.location(of: 998) == nil)
    }
}
