import Testing
import Synchronization
import FolioStorage
import FolioTestSupport

/// Group commit in full durability (Docs/Durability.md §1.4), as reader/writer timelines.
///
/// A commit is appended under the writer slot and made durable after it: the next
/// transaction begins on the appended commit while that commit's sync is still to come,
/// and one sync covers every commit appended before it started. Readers and observers see
/// a commit only once it is durable; a commit is acknowledged (its wait returns) only then;
/// a failed shared sync fails every commit behind it.
@Suite struct GroupCommitTests {
    /// Puts `key` = `value` in tree "t" and appends the commit.
    func append(_ store: Store, _ key: String, _ value: String) throws -> AppendedCommit {
        let transaction = try store.beginWrite()
        try transaction.put(bytes(value), for: bytes(key), in: "t")
        return try transaction.commitAppending()
    }

    /// Timeline:
    ///   writer A  append g1 ─────────────────────────── wait (no sync of its own) ── ack
    ///   writer B            begin on g1, append g2 ── wait: sync g1+g2, slot g2 ── ack
    ///   reader    sees g0 ─────────────── sees g0 ─────────────────── sees g2 ──────────
    @Test func oneSyncCoversEveryCommitAppendedBeforeIt() throws {
        let memory = try memoryFileSystem()
        let recording = RecordingFileSystem(wrapping: memory)
        let store = try Store.open(at: "/stores/s", options: testOptions(recording))
        defer { store.close() }
        let delivered = Mutex<[UInt64]>([])
        let observation = store.observe { event in
            guard case .committed(let notifications) = event else { return }
            delivered.withLock { $0 += notifications.map(\.generation) }
        }
        defer { observation.cancel() }
        let start = store.generation
        let reader = try store.read()

        let a = try append(store, "a", "1")
        #expect(store.generation == start, "an appended commit is not published before its sync")
        #expect(try store.read().get(bytes("a"), in: "t") == nil)
        // B begins at once: the writer slot is free, and B's base is A's appended commit.
        let b = try store.beginWrite()
        #expect(try b.get(bytes("a"), in: "t") == bytes("1"))
        try b.put(bytes("2"), for: bytes("b"), in: "t")
        let appendedB = try b.commitAppending()
        #expect(store.generation == start)

        recording.reset()
        try appendedB.waitUntilDurable()
        let syncs = recording.operations.filter { if case .sync = $0 { return true } else { return false } }
        #expect(syncs.count == 1, "one fdatasync for both commits: \(recording.operations)")
        #expect(store.generation == start + 2)
        #expect(delivered.withLock { $0 } == [start + 1, start + 2], "events in generation order, once durable")

        recording.reset()
        try a.waitUntilDurable()
        #expect(
            recording.operations.filter { if case .sync = $0 { return true } else { return false } }.isEmpty,
            "A's wait finds A durable: no sync of its own")
        #expect(delivered.withLock { $0 } == [start + 1, start + 2], "nothing delivered twice")

        // The reader taken before both still sees the store as it was (snapshot isolation).
        #expect(try reader.get(bytes("a"), in: "t") == nil)
        let view = try store.read()
        #expect(try view.get(bytes("a"), in: "t") == bytes("1"))
        #expect(try view.get(bytes("b"), in: "t") == bytes("2"))
        #expect(store.verify().isClean)
    }

    /// Timeline: A and B appended; the one sync that would cover both fails. Neither is
    /// acknowledged, both waits fail (the leader's with the I/O error, the other's with
    /// `needsReopen`), nothing is delivered, and a reopen
    /// finds the store at g0, g1 or g2 (whatever reached the disk), verifying clean.
    @Test func aFailedSharedSyncFailsEveryCommitBehindIt() throws {
        let faulty = FaultInjectingFileSystem(wrapping: try memoryFileSystem(), countedKinds: [.sync])
        let store = try Store.open(at: "/stores/s", options: testOptions(faulty))
        let delivered = Mutex(0)
        let observation = store.observe { event in
            if case .committed(let notifications) = event { delivered.withLock { $0 += notifications.count } }
        }
        let start = store.generation
        let a = try append(store, "a", "1")
        let b = try append(store, "b", "2")
        faulty.plan = FaultPlan(failingCall: faulty.callCount + 1)
        // A's wait leads the sync and reports its failure; B's finds the store poisoned.
        #expect { try a.waitUntilDurable() } throws: { error in
            if case StorageError.io(let operation, _, _) = error { return operation == "fsync" }
            return false
        }
        #expect { try b.waitUntilDurable() } throws: { error in
            if case StorageError.needsReopen = error { return true }
            return false
        }
        #expect(delivered.withLock { $0 } == 0)
        #expect(store.generation == start, "nothing failed is published")
        #expect(throws: StorageError.self) { try store.beginWrite() }
        observation.cancel()
        store.close()
        faulty.plan = nil
        let reopened = try Store.open(at: "/stores/s", options: testOptions(faulty))
        defer { reopened.close() }
        #expect((start...start + 2).contains(reopened.generation))
        // Atomic and in order: B's run chains to A's, so B is never found without A.
        let view = try reopened.read()
        if try view.get(bytes("b"), in: "t") != nil { #expect(try view.get(bytes("a"), in: "t") == bytes("1")) }
        #expect(reopened.verify().isClean)
    }

    /// Close while a commit is appended but not yet waited for: close's flush makes it
    /// durable, and the late wait reports success (the commit is durable), not `closed`.
    @Test func closeMakesAnAppendedCommitDurable() throws {
        let memory = try memoryFileSystem()
        let store = try Store.open(at: "/stores/s", options: testOptions(memory))
        let start = store.generation
        let a = try append(store, "a", "1")
        store.close()
        try a.waitUntilDurable()
        let reopened = try Store.open(at: "/stores/s", options: testOptions(memory))
        defer { reopened.close() }
        #expect(reopened.generation == start + 1)
        #expect(try reopened.read().get(bytes("a"), in: "t") == bytes("1"))
    }

    /// Many threads committing at once through `commit()`: every acknowledged commit is
    /// kept, in one chain of generations, and the store verifies clean after a reopen. (How
    /// many syncs they shared depends on timing; the benchmarks measure it.)
    @Test func concurrentCommitsAreAllKept() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/s"
        let store = try Store.open(at: path, options: testOptions())
        let start = store.generation
        let writers = 4, commitsEach = 25
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var done = 0
                    while done < commitsEach {
                        do {
                            try store.write { try $0.put(bytes("\(done)"), for: bytes("w\(writer)-\(done)"), in: "t") }
                            done += 1
                        } catch StorageError.writeConflict {
                            await Task.yield()  // another writer committed to "t" first; try again
                        } catch {
                            Issue.record("commit failed: \(error)")
                            return
                        }
                    }
                }
            }
        }
        #expect(store.generation == start + UInt64(writers * commitsEach))
        store.close()
        let reopened = try Store.open(at: path, options: testOptions())
        defer { reopened.close() }
        let view = try reopened.read()
        for writer in 0..<writers {
            for index in 0..<commitsEach {
                #expect(try view.get(bytes("w\(writer)-\(index)"), in: "t") == bytes("\(index)"))
            }
        }
        #expect(reopened.verify().isClean)
    }
}
