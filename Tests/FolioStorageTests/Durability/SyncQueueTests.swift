import Testing
import Foundation
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// Where group commit's sync runs (Docs/Durability.md §1.4, "Where the sync runs"): an
/// async caller's sync that other commits could be waiting on runs on the store's own
/// queue, its task suspended meanwhile, so no thread of the cooperative pool is blocked
/// while the disk syncs; a lone commit on an idle store, and a
/// blocking caller, sync on their own thread.
///
/// The timelines hold a sync (`BlockingSyncFileSystem`) and look at what else can run while
/// it is held. A bounded wait only turns a stall into a failure: what is asserted is the
/// order of events, never a duration.
@Suite(.serialized) struct SyncQueueTests {
    /// One store on memory whose snapshot syncs can be held, and a log of whether each
    /// snapshot sync ran on the store's sync queue.
    final class Stack: Sendable {
        /// Whether each snapshot sync ran on the store's queue, in order.
        final class SyncLog: Sendable {
            let store = Mutex<Store?>(nil)
            let onQueue = Mutex<[Bool]>([])
        }

        let memory: MemoryFileSystem
        let gate: BlockingSyncFileSystem
        let log: SyncLog
        let store: Store

        var onQueue: [Bool] { log.onQueue.withLock { $0 } }

        init() throws {
            memory = try memoryFileSystem()
            let log = SyncLog()
            self.log = log
            gate = BlockingSyncFileSystem(
                wrapping: memory, paths: { $0.contains("/snapshots/") },
                syncStarted: { _ in
                    let isOnQueue = log.store.withLock { $0?.syncQueue.isCurrent ?? false }
                    log.onQueue.withLock { $0.append(isOnQueue) }
                })
            store = try Store.open(at: "/stores/s", options: testOptions(gate))
            log.store.withLock { $0 = store }
            log.onQueue.withLock { $0 = [] }  // creation's syncs
        }

        func append(_ key: String) throws -> AppendedCommit {
            let transaction = try store.beginWrite()
            try transaction.put(bytes(key), for: bytes(key), in: "t")
            return try transaction.commitAppending()
        }
    }

    /// Events in the order they happened.
    final class Timeline: Sendable {
        private let events = Mutex<[String]>([])
        let failures = Atomic<Int>(0)

        func note(_ event: String) { events.withLock { $0.append(event) } }
        var list: [String] { events.withLock { $0 } }
    }

    /// Runs `body` on a thread of its own and returns its result without blocking the
    /// calling task's thread.
    static func offThePool<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }

    /// A lone async commit on an idle store syncs on its own thread (the fast path); one
    /// with a transaction open beside it, and one whose turn came behind another's sync,
    /// sync on the store's queue; a blocking caller syncs on its own thread.
    @Test func whereEachKindOfCommitSyncs() async throws {
        let stack = try Stack()
        defer { stack.store.close() }
        try await stack.append("idle").waitUntilDurable()
        #expect(stack.onQueue == [false], "an idle store's lone commit syncs in place")

        let appended = try stack.append("beside a transaction")
        let open = try stack.store.beginWrite()
        try await appended.waitUntilDurable()
        open.rollback()
        #expect(stack.onQueue == [false, true], "a sync with a transaction open ran on the committer's thread")

        stack.gate.holdNextSync()
        let first = try stack.append("first")
        let leading = Task.detached { try await first.waitUntilDurable() }
        await Self.offThePool { stack.gate.waitUntilBlocked() }
        let second = try stack.append("second")
        let queued = Task.detached { try await second.waitUntilDurable() }
        await Self.offThePool {
            while stack.store.syncTurn.waitingCount < 1 { usleep(1000) }
            stack.gate.release()
        }
        try await leading.value
        try await queued.value
        #expect(stack.onQueue == [false, true, false, true], "the turn that came behind a sync synced in place")

        let blocking = await Self.offThePool {
            Result { () throws -> CommitNotification in try stack.append("blocking").waitUntilDurable() }
        }
        _ = try blocking.get()
        #expect(stack.onQueue == [false, true, false, true, false])
        for key in ["idle", "beside a transaction", "first", "second", "blocking"] {
            #expect(try stack.store.read().get(bytes(key), in: "t") == bytes(key))
        }
    }

    /// The cooperative pool saturated: one store per thread of the pool, each with a commit
    /// awaiting its sync while the next transaction is open, every sync held. Another task
    /// still runs before any sync is let go (were the syncs on the committers' threads,
    /// every thread of the pool would be blocked), and every commit is acknowledged once
    /// they are.
    @Test func syncsInFlightOnEveryThreadOfThePoolLeaveItFree() async throws {
        let count = max(2, ProcessInfo.processInfo.activeProcessorCount)
        let stacks = try (0..<count).map { _ in try Stack() }
        defer { for stack in stacks { stack.store.close() } }
        let appended = try stacks.map { try $0.append("k") }
        let open = try stacks.map { try $0.store.beginWrite() }
        for stack in stacks { stack.gate.holdNextSync() }
        let outcome = await Self.offThePool { () -> (order: [String], failures: Int) in
            let order = Timeline()
            let acknowledged = DispatchSemaphore(value: 0)
            for commit in appended {
                Task.detached {
                    do {
                        try await commit.waitUntilDurable()
                    } catch {
                        order.failures.add(1, ordering: .relaxed)
                    }
                    acknowledged.signal()
                }
            }
            for stack in stacks { stack.gate.waitUntilBlocked() }
            let probeRan = DispatchSemaphore(value: 0)
            Task.detached {
                order.note("a task ran")
                probeRan.signal()
            }
            // Bounded: a saturated pool fails the test, rather than hanging it.
            let probeRanFirst = probeRan.wait(timeout: .now() + 20) == .success
            order.note("syncs released")
            for stack in stacks { stack.gate.release() }
            for _ in stacks { acknowledged.wait() }
            if !probeRanFirst { probeRan.wait() }
            return (order.list, order.failures.load(ordering: .relaxed))
        }
        for transaction in open { transaction.rollback() }
        #expect(outcome.order == ["a task ran", "syncs released"])
        #expect(outcome.failures == 0)
        for stack in stacks {
            #expect(stack.onQueue == [true])
            #expect(try stack.store.read().get(bytes("k"), in: "t") == bytes("k"))
        }
    }

    /// `close()` while an async commit's sync runs on the store's queue: close waits for it
    /// (at the root file lock the sync holds, woken when it is let go, no polling), the
    /// commit is acknowledged, and it is in the store when it is opened again; the
    /// transaction left open fails with `closed`.
    @Test func closeWaitsForASyncInFlightOnTheQueue() async throws {
        let stack = try Stack()
        stack.gate.holdNextSync()
        let appended = try stack.append("k")
        let open = try stack.store.beginWrite()
        let commit = Task.detached { try await appended.waitUntilDurable() }
        await Self.offThePool { stack.gate.waitUntilBlocked() }
        let order = Timeline()
        let closing = onThread {
            stack.store.close()
            order.note("closed")
        }
        await Self.offThePool {
            // Close has not returned while the sync is held: bounded, so that a close that
            // returns early is seen, not waited for.
            let returnedEarly = closing.wait(timeout: .now() + 0.2) == .success
            order.note("sync released")
            stack.gate.release()
            if !returnedEarly { closing.wait() }
        }
        try await commit.value
        #expect(order.list == ["sync released", "closed"])
        #expect(stack.onQueue == [true])
        #expect(throws: StorageError.self) {
            try open.put(bytes("late"), for: bytes("late"), in: "t")
            try open.commit()
        }
        let reopened = try Store.open(at: "/stores/s", options: testOptions(stack.memory))
        defer { reopened.close() }
        #expect(try reopened.read().get(bytes("k"), in: "t") == bytes("k"))
        #expect(try reopened.read().get(bytes("late"), in: "t") == nil)
    }
}
