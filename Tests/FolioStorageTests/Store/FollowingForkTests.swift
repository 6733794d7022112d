import Testing
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// A follower never splices two histories: after the writer fell back to an older root slot
/// (damage) and committed again, the commits of the new history carry generations the
/// follower already delivered from the old one. Observers must then be told to reload,
/// not handed the new commits as a continuation.
@Suite struct FollowingForkTests {
    @Test func aWriterThatFellBackAndCommittedPastTheFollowerIsNoContinuation() throws {
        let memory = try memoryFileSystem()
        var writerOptions = testOptions(memory)
        // The compacted file must stay for the fallback below.
        writerOptions.retention = SnapshotRetention(gracePeriod: .seconds(600))
        var writer = try Store.open(at: "/stores/s", options: writerOptions)
        for i in 0..<3 { try writer.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        let beforeCompaction = memory.contents(of: "/stores/s/root")!
        let older = writer.generation  // gM, in file 1
        try writer.compact()
        for i in 3..<5 { try writer.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        let followed = writer.generation  // gN, in file 2

        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(memory))
        defer { reader.close() }
        let events = Mutex<[StoreEvent]>([])
        let observation = reader.observe { event in events.withLock { $0.append(event) } }
        defer { observation.cancel() }
        try reader.startFollowing(pollInterval: .seconds(600))
        #expect(reader.generation == followed)
        writer.close()

        // The newest slot damaged, the other naming gM in file 1 (as a version 1 store's
        // slot 1, or a compaction interrupted between its two slot writes, leaves it).
        try putOlderRoot(from: beforeCompaction, intoSlotOneOf: "/stores/s/root", in: memory)
        var root = memory.contents(of: "/stores/s/root")!
        root[20] ^= 0xFF
        memory.setContents(root, of: "/stores/s/root")
        writer = try Store.open(at: "/stores/s", options: writerOptions)
        defer { writer.close() }
        #expect(writer.generation == older, "the writer fell back to the older slot")

        // Another history reaches gN: same generation, other commit.
        while writer.generation < followed {
            try writer.write { try $0.put([9], for: [UInt8(writer.generation)], in: "t") }
        }
        reader.catchUp()
        #expect(reader.generation == followed)
        var seen = events.withLock { events in defer { events = [] }; return events }
        guard seen.count == 1, case .historyUnavailable(let from, let to) = seen[0] else {
            Issue.record("expected one historyUnavailable, got \(seen)")
            return
        }
        #expect(from == followed && to == followed)

        // Past gN: a continuation of the new history only, never of the old one.
        try writer.write { try $0.put([10], for: [10], in: "t") }
        try writer.write { try $0.put([11], for: [11], in: "t") }
        reader.catchUp()
        seen = events.withLock { $0 }
        #expect(committedGenerations(seen) == [followed + 1, followed + 2])
        #expect(try reader.read().get([10], in: "t") == [10])
        #expect(try reader.read().get([3], in: "t") == nil, "the old history's commits are not in the new one")
    }

    /// The same fork seen only after the new history passed gN: the replay walks back to a
    /// commit of generation gN that is not the one delivered, and stops.
    @Test func aForkPastTheFollowersGenerationIsSignalled() throws {
        let memory = try memoryFileSystem()
        var writerOptions = testOptions(memory)
        writerOptions.retention = SnapshotRetention(gracePeriod: .seconds(600))
        var writer = try Store.open(at: "/stores/s", options: writerOptions)
        for i in 0..<3 { try writer.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        let beforeCompaction = memory.contents(of: "/stores/s/root")!
        try writer.compact()
        for i in 3..<5 { try writer.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        let followed = writer.generation

        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(memory))
        defer { reader.close() }
        let events = Mutex<[StoreEvent]>([])
        let observation = reader.observe { event in events.withLock { $0.append(event) } }
        defer { observation.cancel() }
        try reader.startFollowing(pollInterval: .seconds(600))
        writer.close()

        try putOlderRoot(from: beforeCompaction, intoSlotOneOf: "/stores/s/root", in: memory)
        var root = memory.contents(of: "/stores/s/root")!
        root[20] ^= 0xFF
        memory.setContents(root, of: "/stores/s/root")
        writer = try Store.open(at: "/stores/s", options: writerOptions)
        defer { writer.close() }
        while writer.generation <= followed + 1 {
            try writer.write { try $0.put([9], for: [UInt8(writer.generation)], in: "t") }
        }
        let newest = writer.generation
        reader.catchUp()
        #expect(reader.generation == newest)
        let seen = events.withLock { $0 }
        guard seen.count == 1, case .historyUnavailable(let from, let to) = seen[0] else {
            Issue.record("expected one historyUnavailable, got \(seen)")
            return
        }
        #expect(from == followed && to == newest)
    }

    /// The other history written over the first in the same file: the fallback's writer
    /// appends from the same committed end, so with commits of the same sizes its commit of
    /// the delivered generation lands at the same offset with the same length. Only its
    /// chain value tells it apart. The follower stays on the commit it has until the other
    /// history passes it (a generation is never adopted twice), then signals the fork, and
    /// its page cache keeps no page of the first history.
    @Test func anotherHistoryAtTheSameLocationIsNoContinuation() throws {
        let memory = try memoryFileSystem()
        let snapshot = "/stores/s/snapshots/0000000000000001.folio"
        var writer = try Store.open(at: "/stores/s", options: testOptions(memory))
        try writer.write { try $0.put([0], for: [0], in: "t") }
        let older = writer.generation  // gM
        let rootAtOlder = memory.contents(of: "/stores/s/root")!
        try history(of: "a", in: writer)
        let followed = writer.generation  // gN = gM + 3
        let oldCommits = try writer.commits(after: older)
        let oldLocation = try #require(oldCommits.last?.location)

        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(memory))
        defer { reader.close() }
        let events = Mutex<[StoreEvent]>([])
        let observation = reader.observe { event in events.withLock { $0.append(event) } }
        defer { observation.cancel() }
        try reader.startFollowing(pollInterval: .seconds(600))
        #expect(reader.generation == followed)
        // The reader's page cache now holds pages of the first history: tree u's leaf, which
        // the other history writes at the same offset and no later commit rewrites.
        #expect(try reader.read().get([1], in: "u") == Array("a".utf8))
        writer.close()

        // Both slots back at gM and gM+1's commit page damaged: the writer's recovery stops
        // at gM and its next commits are written from gM's committed end again.
        memory.setContents(rootAtOlder, of: "/stores/s/root")
        var bytes = memory.contents(of: snapshot)!
        bytes[Int(oldCommits[0].location.address.offset) + 30] ^= 0xFF
        memory.setContents(bytes, of: snapshot)
        writer = try Store.open(at: "/stores/s", options: testOptions(memory))
        defer { writer.close() }
        #expect(writer.generation == older, "the writer fell back to gM")
        try history(of: "b", in: writer)
        let newCommits = try writer.commits(after: older)
        try #require(newCommits.last?.generation == followed && newCommits.last?.location == oldLocation,
                     "the other history's gN is where the first one's was: \(newCommits.map(\.location)), \(oldLocation)")
        reader.catchUp()
        #expect(events.withLock { $0 }.isEmpty, "nothing newer than gN yet")

        try writer.write { try $0.put(Array("b".utf8), for: [4], in: "t") }
        reader.catchUp()
        var seen = events.withLock { events in defer { events = [] }; return events }
        guard seen.count == 1, case .historyUnavailable(let from, let to) = seen[0] else {
            Issue.record("passing gN: expected one historyUnavailable, got \(seen)")
            return
        }
        #expect(from == followed && to == followed + 1)
        #expect(try reader.read().get([1], in: "u") == Array("b".utf8), "no page of the first history is served")

        try writer.write { try $0.put(Array("b".utf8), for: [5], in: "t") }
        reader.catchUp()
        seen = events.withLock { $0 }
        #expect(committedGenerations(seen) == [followed + 2], "a continuation of the new history only: \(seen)")
    }

    /// Three commits: tree u first, then tree t twice, each value one byte long, so two
    /// histories written from the same committed end place every page at the same offset.
    private func history(of value: String, in writer: Store) throws {
        try writer.write { try $0.put(Array(value.utf8), for: [1], in: "u") }
        for key in UInt8(2)...3 { try writer.write { try $0.put(Array(value.utf8), for: [key], in: "t") } }
    }

    /// Passing the delivered generation at once: the replay walks back to a commit at the
    /// delivered commit's location that is not the delivered commit.
    @Test func anotherHistoryPastTheFollowerAtTheSameLocationIsSignalled() throws {
        let memory = try memoryFileSystem()
        let snapshot = "/stores/s/snapshots/0000000000000001.folio"
        var writer = try Store.open(at: "/stores/s", options: testOptions(memory))
        try writer.write { try $0.put([0], for: [0], in: "t") }
        let older = writer.generation
        let rootAtOlder = memory.contents(of: "/stores/s/root")!
        for key in UInt8(1)...3 { try writer.write { try $0.put(Array("a".utf8), for: [key], in: "t") } }
        let followed = writer.generation
        let oldCommits = try writer.commits(after: older)

        let reader = try Store.openReadOnly(at: "/stores/s", options: testOptions(memory))
        defer { reader.close() }
        let events = Mutex<[StoreEvent]>([])
        let observation = reader.observe { event in events.withLock { $0.append(event) } }
        defer { observation.cancel() }
        try reader.startFollowing(pollInterval: .seconds(600))
        writer.close()

        memory.setContents(rootAtOlder, of: "/stores/s/root")
        var bytes = memory.contents(of: snapshot)!
        bytes[Int(oldCommits[0].location.address.offset) + 30] ^= 0xFF
        memory.setContents(bytes, of: snapshot)
        writer = try Store.open(at: "/stores/s", options: testOptions(memory))
        defer { writer.close() }
        for key in UInt8(1)...4 { try writer.write { try $0.put(Array("b".utf8), for: [key], in: "t") } }
        let newCommits = try writer.commits(after: older)
        try #require(newCommits[newCommits.count - 2].location == oldCommits.last?.location)

        reader.catchUp()
        let seen = events.withLock { $0 }
        guard seen.count == 1, case .historyUnavailable(let from, let to) = seen[0] else {
            Issue.record("expected one historyUnavailable, got \(seen)")
            return
        }
        #expect(from == followed && to == followed + 1)
        #expect(try reader.read().get([4], in: "t") == Array("b".utf8))
    }
}
