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
        var seen = events.withLock { events in
            defer { events = [] }; return events
        }
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
    /// chain value tells it apart. Once the other history reaches the delivered generation
    /// the reader adopts it (reading on at the first would walk rewritten bytes and mix the
    /// two histories), signals the fork, and serves no page of the first history.
    @Test func anotherHistoryAtTheSameLocationIsNoContinuation() throws {
        let fork = try SameFileFork()
        defer { fork.close() }
        // The reader's page cache holds pages of the first history: tree u's leaf, which
        // the other history writes at the same offset and no later commit rewrites.
        #expect(try fork.reader.read().get([1], in: "u") == Array("a".utf8))
        let writer = try fork.fallBack()
        try SameFileFork.history(of: "b", in: writer)
        let newCommits = try writer.commits(after: fork.older)
        try #require(
            newCommits.last?.generation == fork.followed && newCommits.last?.location == fork.oldCommits.last?.location,
            "the other history's gN is where the first one's was: \(newCommits.map(\.location))")
        fork.reader.catchUp()
        let seen = fork.takeEvents()
        guard seen.count == 1, case .historyUnavailable(let from, let to) = seen[0] else {
            Issue.record("reaching gN: expected one historyUnavailable, got \(seen)")
            return
        }
        #expect(from == fork.followed && to == fork.followed)
        #expect(fork.reader.generation == fork.followed)
        // One view, one history: both trees as the other history left them.
        let view = try fork.reader.read()
        #expect(try view.get([1], in: "u") == Array("b".utf8), "no page of the first history is served")
        #expect(try view.get([3], in: "t") == Array("b".utf8))

        try writer.write { try $0.put(Array("b".utf8), for: [4], in: "t") }
        fork.reader.catchUp()
        #expect(
            committedGenerations(fork.takeEvents()) == [fork.followed + 1], "a continuation of the new history only")
    }

    /// Passing the delivered generation at once: the replay walks back to a commit at the
    /// delivered commit's location that is not the delivered commit.
    @Test func anotherHistoryPastTheFollowerAtTheSameLocationIsSignalled() throws {
        let fork = try SameFileFork()
        defer { fork.close() }
        let writer = try fork.fallBack()
        try SameFileFork.history(of: "b", in: writer)
        try writer.write { try $0.put(Array("b".utf8), for: [4], in: "t") }
        let newCommits = try writer.commits(after: fork.older)
        try #require(newCommits[newCommits.count - 2].location == fork.oldCommits.last?.location)

        fork.reader.catchUp()
        let seen = fork.takeEvents()
        guard seen.count == 1, case .historyUnavailable(let from, let to) = seen[0] else {
            Issue.record("expected one historyUnavailable, got \(seen)")
            return
        }
        #expect(from == fork.followed && to == fork.followed + 1)
        #expect(try fork.reader.read().get([4], in: "t") == Array("b".utf8))
    }
}

/// A follower at gN of a history written after gM in snapshot file 1, whose writer is then
/// made to fall back to gM within the same file (both slots put back at gM, and gM+1's
/// commit page damaged so that recovery stops there).
private final class SameFileFork {
    static let path = "/stores/s"
    static let snapshot = "/stores/s/snapshots/0000000000000001.folio"
    let memory: MemoryFileSystem
    let older: UInt64
    let followed: UInt64
    let oldCommits: [CommitNotification]
    let rootAtOlder: [UInt8]
    let reader: Store
    private let log = EventLog()
    private var observation: StoreObservation?
    private var writer: Store?

    /// Three commits: tree u first, then tree t twice, each value one byte long, so two
    /// histories written from the same committed end place every page at the same offset.
    static func history(of value: String, in writer: Store) throws {
        try writer.write { try $0.put(Array(value.utf8), for: [1], in: "u") }
        for key in UInt8(2)...3 { try writer.write { try $0.put(Array(value.utf8), for: [key], in: "t") } }
    }

    init() throws {
        memory = try memoryFileSystem()
        let writer = try Store.open(at: Self.path, options: testOptions(memory))
        defer { writer.close() }
        try writer.write { try $0.put([0], for: [0], in: "t") }
        older = writer.generation
        rootAtOlder = memory.contents(of: Self.path + "/root")!
        try Self.history(of: "a", in: writer)
        followed = writer.generation
        oldCommits = try writer.commits(after: older)
        reader = try Store.openReadOnly(at: Self.path, options: testOptions(memory))
        observation = reader.observe { [log] event in log.events.withLock { $0.append(event) } }
        try reader.startFollowing(pollInterval: .seconds(600))
        #expect(reader.generation == followed)
    }

    /// Reopens the writer after putting both slots back at gM and damaging gM+1's commit
    /// page: its recovery stops at gM, and its next commits are written from there again.
    func fallBack() throws -> Store {
        memory.setContents(rootAtOlder, of: Self.path + "/root")
        var bytes = memory.contents(of: Self.snapshot)!
        bytes[Int(oldCommits[0].location.address.offset) + 30] ^= 0xFF
        memory.setContents(bytes, of: Self.snapshot)
        let reopened = try Store.open(at: Self.path, options: testOptions(memory))
        writer = reopened
        #expect(reopened.generation == older, "the writer fell back to gM")
        return reopened
    }

    /// The events the reader's observer got since the last call.
    func takeEvents() -> [StoreEvent] {
        log.events.withLock { events in
            defer { events = [] }
            return events
        }
    }

    func close() {
        observation?.cancel()
        writer?.close()
        reader.close()
    }
}

/// What an observer was told, shared with its handler.
private final class EventLog: Sendable {
    let events = Mutex<[StoreEvent]>([])
}
