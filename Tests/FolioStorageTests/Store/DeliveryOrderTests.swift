import Testing
import Foundation
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// Observers of a store get every commit, in order, with no store lock held; the generation
/// delivered is a durable one; a dropped grouped store keeps its last window.
/// `FOLIO_STRESS_TESTS=1` runs the stress test longer.
@Suite struct DeliveryOrderTests {
    /// Grouped mode, 0 ms window: the timer's flushes race an explicit flush after every
    /// commit (and a flushing thread). Every generation reaches the handler once, in order.
    @Test func groupedFlushesDeliverEveryCommitInOrder() throws {
        let commits = CloseRaceTests.isLong ? 20_000 : 1_500
        let store = try Store.open(
            at: "/stores/s", options: testOptions(try memoryFileSystem(), durability: .grouped(window: .zero)))
        let first = store.generation
        let seen = Mutex<[UInt64]>([])
        let observation = store.observe { event in
            if case .committed(let list) = event { seen.withLock { $0 += list.map(\.generation) } }
        }
        defer { observation.cancel() }
        let done = Atomic<Bool>(false)
        let flusherEnded = DispatchSemaphore(value: 0)
        let flusher = Thread {
            while !done.load(ordering: .relaxed) { try? store.flush() }
            flusherEnded.signal()
        }
        flusher.start()
        for i in 0..<commits {
            try store.write { try $0.put(bytes("v"), for: KeyEncoding.encode(Int64(i)), in: "t") }
            try store.flush()
        }
        done.store(true, ordering: .relaxed)
        // The flusher may be the thread handing the last commit to observers (delivery
        // runs on whichever thread finds none running, and this thread's flush then
        // returns at once): once it has ended, every delivery it began is over.
        flusherEnded.wait()
        store.close()
        let generations = seen.withLock { $0 }
        let expected = Array((first + 1)...(first + UInt64(commits)))
        let outOfOrder = zip(generations, generations.dropFirst()).first { $0.0 + 1 != $0.1 }
        #expect(generations.count == expected.count, "\(generations.count) of \(commits) commits delivered")
        #expect(
            outOfOrder == nil && generations.first == expected.first,
            "first out of order: \(String(describing: outOfOrder))")
    }

    /// A handler that reads the store and begins, writes and commits a transaction of its
    /// own: it runs outside the committing transaction's lock, with the writer slot free
    /// (inside it, a second write would be refused and touching the transaction would
    /// deadlock).
    /// Grouped mode with a long window: the explicit flush delivers on this thread, with
    /// the writer slot free (a timer flush racing the next commit may find it taken, and
    /// the engine refuses rather than waits: that is no deadlock).
    @Test(arguments: [Durability.full, .grouped(window: .seconds(60))])
    func handlersMayUseTheStore(durability: Durability) throws {
        let store = try Store.open(
            at: "/stores/s", options: testOptions(try memoryFileSystem(), durability: durability))
        defer { store.close() }
        let outcomes = Mutex<[String]>([])
        let observation = store.observe { event in
            guard case .committed(let list) = event,
                list.contains(where: { $0.changes.trees.contains { $0.tree == "t" } })
            else { return }
            do {
                let view = try store.read()
                let value = try view.get(bytes("a"), in: "t")
                try store.write { try $0.put(value ?? [], for: bytes("copy"), in: "echo") }
                outcomes.withLock { $0.append("ok") }
            } catch {
                outcomes.withLock { $0.append("\(error)") }
            }
        }
        defer { observation.cancel() }
        try store.write { try $0.put(bytes("1"), for: bytes("a"), in: "t") }
        try store.flush()
        #expect(outcomes.withLock { $0 } == ["ok"])
        try store.flush()
        #expect(try store.read().get(bytes("copy"), in: "echo") == bytes("1"))
    }

    /// The generation an overflowed observer resumes after is a delivered (durable) one,
    /// not the newest published grouped generation.
    @Test func deliveredGenerationIsDurable() throws {
        let store = try Store.open(
            at: "/stores/s", options: testOptions(try memoryFileSystem(), durability: .grouped(window: .seconds(60))))
        defer { store.close() }
        let start = store.generation
        try store.write { try $0.put(bytes("1"), for: bytes("a"), in: "t") }
        #expect(store.generation == start + 1)
        #expect(store.deliveredGeneration == start)
        try store.flush()
        #expect(store.deliveredGeneration == start + 1)
    }

    /// Dropping a grouped store without close() makes its last window durable (a deinit
    /// that closed without flushing would lose it: the scheduled flush holds it weakly).
    @Test func droppedGroupedStoreKeepsItsLastWindow() throws {
        let fileSystem = try memoryFileSystem()
        do {
            let store = try Store.open(
                at: "/stores/s", options: testOptions(fileSystem, durability: .grouped(window: .seconds(60))))
            for i in 0..<10 {
                try store.write { try $0.put(bytes("v\(i)"), for: KeyEncoding.encode(Int64(i)), in: "t") }
            }
        }
        let reopened = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        defer { reopened.close() }
        #expect(try reopened.read().count(in: "t") == 10)
    }
}
