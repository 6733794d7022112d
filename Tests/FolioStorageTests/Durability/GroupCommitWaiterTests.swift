import Testing
import Foundation
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// Group commit's waiters (Docs/Durability.md §1.4 step 3): a waiter that queued for its
/// turn to sync behind a leader whose sync published its commit returns at once, with
/// no sync of its own, and no failure of a later sync is reported to it.
///
/// Timeline of both tests (B waits with the blocking call or the async one):
///
///     A  T1 appended ── wait: lead, sync (held) ─────────────── publish T1+T2 ── ack
///     B  T2 appended ──────── wait: queued for the turn ─────────────────────── ack (no sync)
///     C                               T3 appended ────────────────────────────── wait: its own sync
///
/// Were B, once it has the turn, to sync T3 (a second sync for commits not its own), a
/// failure of that sync would tell its caller T2 failed although T2 is durable and
/// delivered: a caller retrying after a reopen would apply T2 twice.
@Suite(.serialized) struct GroupCommitWaiterTests {
    /// The stack: memory, a gate that can hold a snapshot file's sync, a fault injector
    /// counting syncs, and a recorder on top.
    struct Stack {
        let memory: MemoryFileSystem
        let gate: BlockingSyncFileSystem
        let faults: FaultInjectingFileSystem
        let recording: RecordingFileSystem

        init() throws {
            memory = try memoryFileSystem()
            gate = BlockingSyncFileSystem(wrapping: memory, paths: { $0.contains("/snapshots/") })
            faults = FaultInjectingFileSystem(wrapping: gate, countedKinds: [.sync])
            recording = RecordingFileSystem(wrapping: faults)
        }

        var snapshotSyncs: Int {
            recording.operations.filter { if case .sync(let path) = $0 { path.contains("/snapshots/") } else { false } }
                .count
        }
    }

    func append(_ store: Store, _ key: String) throws -> AppendedCommit {
        let transaction = try store.beginWrite()
        try transaction.put(bytes(key), for: bytes(key), in: "t")
        return try transaction.commitAppending()
    }

    /// What the timeline left: A's and B's outcomes, the commit appended meanwhile (nil if
    /// it could not be), and whether appending it had to wait for A's sync.
    struct Outcome: Sendable {
        var a: Result<Void, StorageError>
        var b: Result<Void, StorageError>
        var t3: AppendedCommit?
        var t3WaitedForTheSync: Bool
    }

    /// Runs the timeline on a thread of its own, off the cooperative pool: it blocks on
    /// the gate and on the other threads, and B's async wait needs a pool thread to run.
    func timeline(_ store: Store, _ stack: Stack, asyncWaiter: Bool, failSecondSync: Bool) async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        try runTimeline(store, stack, asyncWaiter: asyncWaiter, failSecondSync: failSecondSync)
                    })
            }
        }
    }

    /// Runs the timeline up to the point where A has published T2 and B has returned.
    /// `failSecondSync`: the next sync after A's fails.
    func runTimeline(_ store: Store, _ stack: Stack, asyncWaiter: Bool, failSecondSync: Bool) throws -> Outcome {
        let t1 = try append(store, "t1")
        let t2 = try append(store, "t2")
        stack.recording.reset()
        stack.gate.holdNextSync()
        if failSecondSync { stack.faults.plan = FaultPlan(failingCall: stack.faults.callCount + 2) }

        let a = Mutex<Result<Void, StorageError>?>(nil)
        let aDone = onThread {
            do throws(StorageError) {
                try t1.waitUntilDurable()
                a.withLock { $0 = .success(()) }
            } catch {
                a.withLock { $0 = .failure(error) }
            }
        }
        // A leads: it holds the sync turn, its sync (covering T1 and T2) held.
        stack.gate.waitUntilBlocked()

        let b = Mutex<Result<Void, StorageError>?>(nil)
        let bDone = DispatchSemaphore(value: 0)
        if asyncWaiter {
            Task.detached {
                do throws(StorageError) {
                    try await t2.waitUntilDurable()
                    b.withLock { $0 = .success(()) }
                } catch {
                    b.withLock { $0 = .failure(error) }
                }
                bDone.signal()
            }
            // B has looked for its commit, found it unpublished, and queued for the turn
            // A holds.
            while store.syncTurn.waitingCount < 1 { usleep(1000) }
        } else {
            Thread {
                do throws(StorageError) {
                    try t2.waitUntilDurable()
                    b.withLock { $0 = .success(()) }
                } catch {
                    b.withLock { $0 = .failure(error) }
                }
                bDone.signal()
            }.start()
            // B has looked for its commit, found it unpublished, and queued for the turn
            // A holds.
            while store.syncTurn.waitingCount < 1 { usleep(1000) }
        }
        // T3 appended while A's sync is in flight: it becomes the tip. (On a thread, bounded:
        // a commit must not wait for a sync in flight, or the next transaction could never
        // share the next sync; if it did, the gate is released anyway and this fails.)
        let t3 = Mutex<AppendedCommit?>(nil)
        let appended = onThread { t3.withLock { $0 = try? self.append(store, "t3") } }
        let waitedForTheSync = appended.wait(timeout: .now() + 30) == .timedOut
        stack.gate.release()
        if waitedForTheSync { appended.wait() }
        aDone.wait()
        bDone.wait()
        return Outcome(
            a: a.withLock { $0! }, b: b.withLock { $0! }, t3: t3.withLock { $0 }, t3WaitedForTheSync: waitedForTheSync)
    }

    @Test(arguments: [false, true])
    func aWaiterWhoseCommitWasPublishedIsNotToldOfALaterFailure(asyncWaiter: Bool) async throws {
        let stack = try Stack()
        let store = try Store.open(at: "/stores/s", options: testOptions(stack.recording))
        let delivered = Mutex<[UInt64]>([])
        let observation = store.observe { event in
            if case .committed(let list) = event { delivered.withLock { $0 += list.map(\.generation) } }
        }
        let start = store.generation
        let outcome = try await timeline(store, stack, asyncWaiter: asyncWaiter, failSecondSync: true)
        #expect(!outcome.t3WaitedForTheSync, "appending T3 waited for A's sync")
        let t3 = try #require(outcome.t3)
        #expect(throws: Never.self) { try outcome.a.get() }
        #expect(throws: Never.self, "T2 is durable and published: its waiter succeeds") { try outcome.b.get() }
        #expect(stack.snapshotSyncs == 1, "B synced nothing: \(stack.recording.summaries(relativeTo: "/stores/s"))")
        #expect(store.generation == start + 2)
        #expect(delivered.withLock { $0 } == [start + 1, start + 2])
        // T3's own wait runs the failing sync: T3, and only T3, is not acknowledged.
        #expect(throws: StorageError.self) { try t3.waitUntilDurable() }
        #expect(store.generation == start + 2)
        observation.cancel()
        store.close()

        stack.faults.plan = nil
        let reopened = try Store.open(at: "/stores/s", options: testOptions(stack.memory))
        defer { reopened.close() }
        let view = try reopened.read()
        #expect(try view.get(bytes("t1"), in: "t") == bytes("t1"))
        #expect(try view.get(bytes("t2"), in: "t") == bytes("t2"))
        #expect(reopened.generation >= start + 2)
        #expect(reopened.verify().isClean)
    }

    /// Without a fault: B does no sync at all (Docs/Durability.md §1.4: one sync covers
    /// every commit appended before it; B's was covered), and T3 gets its own.
    @Test(arguments: [false, true])
    func aWaiterWhoseCommitWasPublishedDoesNoSync(asyncWaiter: Bool) async throws {
        let stack = try Stack()
        let store = try Store.open(at: "/stores/s", options: testOptions(stack.recording))
        defer { store.close() }
        let start = store.generation
        let outcome = try await timeline(store, stack, asyncWaiter: asyncWaiter, failSecondSync: false)
        #expect(!outcome.t3WaitedForTheSync, "appending T3 waited for A's sync")
        let t3 = try #require(outcome.t3)
        #expect(throws: Never.self) { try outcome.a.get() }
        #expect(throws: Never.self) { try outcome.b.get() }
        #expect(
            stack.snapshotSyncs == 1,
            "one sync for T1 and T2, none by B: \(stack.recording.summaries(relativeTo: "/stores/s"))")
        #expect(store.generation == start + 2, "T3 is not published before its own sync")
        try await t3.waitUntilDurable()
        #expect(stack.snapshotSyncs == 2)
        #expect(store.generation == start + 3)
        #expect(store.verify().isClean)
    }
}
