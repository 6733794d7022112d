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
}
