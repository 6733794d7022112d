import Testing
import Foundation
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// A writer that lets the store's lock go between transactions and takes it again after
/// another writer used the store (`Store.withWriterLockReleased(_:)`, then
/// its next turn's catch-up): it builds on what the other wrote, never over it.
@Suite struct WriterCatchUpTests {
    static let path = "/stores/s"

    /// A store's place: in memory, or on disk, where the store maps its root file and a
    /// turn's catch-up compares the slots through that mapping instead of reading them.
    /// Calls `body` with the file system and the store's path; removes what it made.
    func inPlace<Result>(
        onDisk: Bool, _ body: (any FileSystem, String) throws -> Result
    ) throws -> Result {
        guard onDisk else { return try body(try memoryFileSystem(), Self.path) }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        return try body(POSIXFileSystem(), directory.child("s"))
    }

    /// A writer whose store nobody else wrote finds its tip unchanged: nothing is reported.
    @Test(arguments: [false, true])
    func aWriterThatWroteAloneStaysWhereItIs(onDisk: Bool) throws {
        try inPlace(onDisk: onDisk) { fileSystem, path in try writerAlone(fileSystem, path) }
    }

    func writerAlone(_ fileSystem: any FileSystem, _ path: String) throws {
        let store = try Store.open(at: path, options: testOptions(fileSystem))
        defer { store.close() }
        // On disk the store maps its root file, and the catch-up compares through the mapping.
        #expect((store.rootGlance != nil) == (fileSystem is POSIXFileSystem))
        try store.write { try $0.put([1], for: [1], in: "t") }
        let events = Mutex<[StoreEvent]>([])
        let observation = store.observe { event in events.withLock { $0.append(event) } }
        defer { observation.cancel() }
        let generation = store.generation
        #expect(try store.catchUpWithOtherWriters() == false)
        try store.withWriterLockReleased {}
        #expect(store.generation == generation)
        #expect(events.withLock { $0 }.isEmpty)
    }

    /// Another writer commits while the first does not hold the lock: the first adopts its
    /// commits (reporting each to its generation listener and its observers, in order) and
    /// its next commit follows them. Without the catch-up, that commit would be written over
    /// the other writer's runs and lose them.
    @Test(arguments: [Durability.full, .grouped(window: .seconds(60))], [false, true])
    func aWriterAdoptsWhatAnotherCommittedAndBuildsOnIt(durability: Durability, onDisk: Bool) throws {
        try inPlace(onDisk: onDisk) { fileSystem, path in try adoptAndBuild(durability, fileSystem, path) }
    }

    func adoptAndBuild(_ durability: Durability, _ fileSystem: any FileSystem, _ path: String) throws {
        let first = try Store.open(at: path, options: testOptions(fileSystem, durability: durability))
        defer { first.close() }
        let reported = Mutex<[UInt64]>([])
        first.onGenerationCreated { created in reported.withLock { $0.append(created.generation) } }
        let events = Mutex<[StoreEvent]>([])
        let observation = first.observe { event in events.withLock { $0.append(event) } }
        defer { observation.cancel() }
        try first.write { try $0.put(Array("first".utf8), for: [1], in: "t") }
        let before = first.generation
        let readBefore = try first.read()

        let otherGenerations = try first.withWriterLockReleased { () throws -> [UInt64] in
            let other = try Store.open(at: path, options: testOptions(fileSystem, durability: durability))
            defer { other.close() }
            var generations: [UInt64] = []
            for key: UInt8 in 2...4 {
                try other.write { try $0.put(Array("other".utf8), for: [key], in: "t") }
                generations.append(other.generation)
            }
            return generations
        }
        #expect(otherGenerations == Array(before + 1...before + 3))
        #expect(first.generation == before + 3)
        #expect(reported.withLock { $0 }.suffix(3) == otherGenerations[...], "reported before they were read")
        #expect(committedGenerations(events.withLock { $0 }).suffix(3) == otherGenerations[...])
        #expect(try readBefore.get([2], in: "t") == nil, "a view taken before keeps its generation")

        try first.write { try $0.put(Array("first again".utf8), for: [5], in: "t") }
        first.close()
        let reopened = try Store.openReadOnly(at: path, options: testOptions(fileSystem))
        defer { reopened.close() }
        #expect(reopened.generation == before + 4)
        let view = try reopened.read()
        for key: UInt8 in 2...4 { #expect(try view.get([key], in: "t") == Array("other".utf8)) }
        #expect(try view.get([5], in: "t") == Array("first again".utf8))
        #expect(reopened.verify().isClean)
    }

    /// A writer nobody observes that adopts more than `longestReplayUnobserved` commits of
    /// another writer replays none of them: its generation listener is told once, of the
    /// newest generation, with the trees that changed (wholesale) and only those. Observed,
    /// the same catch-up replays each commit, in order. Either way the writer builds on the
    /// other's commits.
    @Test(arguments: [false, true])
    func aLongCatchUpNobodyObservesReportsTheChangedTreesInstead(observed: Bool) throws {
        let memory = try memoryFileSystem()
        let first = try Store.open(at: Self.path, options: testOptions(memory))
        defer { first.close() }
        let reports = Mutex<[CreatedGeneration]>([])
        first.onGenerationCreated { created in reports.withLock { $0.append(created) } }
        let events = Mutex<[StoreEvent]>([])
        let observation = observed ? first.observe { event in events.withLock { $0.append(event) } } : nil
        defer { observation?.cancel() }
        try first.write {
            try $0.put([0], for: [0], in: "t")
            try $0.put([0], for: [0], in: "untouched")
            try $0.put([0], for: [0], in: "dropped")
        }
        let before = first.generation
        let count = Int(Store.longestReplayUnobserved) + 36
        try first.withWriterLockReleased { () throws in
            let other = try Store.open(at: Self.path, options: testOptions(memory))
            defer { other.close() }
            for i in 1...count { try other.write { try $0.put([1], for: [UInt8(i)], in: "t") } }
            try other.write { _ = try $0.dropTree("dropped") }
        }
        let newest = before + UInt64(count) + 1
        let adopted = reports.withLock { $0 }.filter { $0.generation > before }
        #expect(adopted.allSatisfy { !$0.replacesHistory && $0.changes != nil && $0.byAnotherWriter })
        if observed {
            #expect(adopted.map(\.generation) == Array((before + 1)...newest))
            #expect(committedGenerations(events.withLock { $0 }).filter { $0 > before } == Array((before + 1)...newest))
        } else {
            #expect(adopted.map(\.generation) == [newest])
            let changes = adopted.first?.changes
            #expect(changes?.trees == [.wholesale("t")], "\(String(describing: changes))")
            #expect(changes?.droppedTrees == ["dropped"])
        }
        #expect(first.generation == newest)
        try first.write { try $0.put([2], for: [200], in: "t") }
        let view = try first.read()
        for i in 1...count { #expect(try view.get([UInt8(i)], in: "t") == [1]) }
        #expect(first.verify().isClean)
    }

    /// Another writer's commits pass the end this writer had preallocated to, and that writer
    /// preallocates past them: this writer's next commit, after its catch-up, uses those zeros
    /// instead of writing a chunk of its own over them. Without the look at the file's size,
    /// every turn that followed another process's commits wrote and synced a chunk of zeros
    /// (at least 64 KiB), which made such turns several times slower than the others.
    @Test func aWriterUsesTheZerosAnotherWriterPreallocated() throws {
        let recording = RecordingFileSystem(wrapping: try memoryFileSystem())
        let first = try Store.open(at: Self.path, options: testOptions(recording))
        defer { first.close() }
        try first.write { try $0.put([1], for: [1], in: "t") }
        try first.withWriterLockReleased {
            let other = try Store.open(at: Self.path, options: testOptions(recording))
            defer { other.close() }
            // 8 x 12 KiB: past the smallest chunk (64 KiB) that `first` preallocated.
            for key: UInt8 in 2...9 {
                try other.write { try $0.put(Array(repeating: key, count: 12 << 10), for: [key], in: "t") }
            }
        }
        recording.reset()
        try first.write { try $0.put([10], for: [10], in: "t") }
        let snapshotWrites = recording.operations.compactMap { operation -> Int? in
            guard case .write(let path, _, let count) = operation, path.contains("/snapshots/") else { return nil }
            return count
        }
        #expect(!snapshotWrites.isEmpty)
        #expect(snapshotWrites.allSatisfy { $0 < 64 << 10 }, "no chunk of zeros: \(snapshotWrites)")
        #expect(try first.read().get([9], in: "t") == Array(repeating: 9, count: 12 << 10))
        #expect(first.verify().isClean)
    }

    /// Another writer compacts into a new snapshot file and commits after: the first opens
    /// that file, adopts its root, and commits into it.
    @Test(arguments: [false, true])
    func aWriterAdoptsAnotherWritersCompaction(onDisk: Bool) throws {
        try inPlace(onDisk: onDisk) { fileSystem, path in try adoptCompaction(fileSystem, path) }
    }

    func adoptCompaction(_ fileSystem: any FileSystem, _ path: String) throws {
        let first = try Store.open(at: path, options: testOptions(fileSystem))
        #expect((first.rootGlance != nil) == (fileSystem is POSIXFileSystem))
        defer { first.close() }
        for key: UInt8 in 0..<20 { try first.write { try $0.put([key], for: [key], in: "t") } }
        let fileBefore = first.statisticsFileNumber
        try first.withWriterLockReleased { () throws in
            let other = try Store.open(at: path, options: testOptions(fileSystem))
            defer { other.close() }
            try other.write { try $0.remove([0], from: "t") }
            try other.compact()
            try other.write { try $0.put([99], for: [99], in: "t") }
        }
        #expect(first.statisticsFileNumber > fileBefore)
        try first.write { try $0.put([100], for: [100], in: "t") }
        let view = try first.read()
        #expect(try view.get([0], in: "t") == nil)
        #expect(try view.get([99], in: "t") == [99])
        #expect(try view.get([100], in: "t") == [100])
        #expect(first.verify().isClean)
    }

    /// Another writer's commit whose run was synced but whose slot write failed (a writer
    /// killed between the two leaves the same): durable, so the first adopts it, syncs it and
    /// names it in a slot before writing after it, as an open's recovery would.
    @Test func aDurableRunAnotherWriterLeftWithoutItsSlotIsAdopted() throws {
        let memory = try memoryFileSystem()
        let first = try Store.open(at: Self.path, options: testOptions(memory))
        defer { first.close() }
        try first.write { try $0.put([1], for: [1], in: "t") }
        let before = first.generation
        try first.withWriterLockReleased { () throws in
            let faults = FaultInjectingFileSystem(wrapping: memory, countedKinds: [.write])
            let other = try Store.open(at: Self.path, options: testOptions(faults))
            defer { other.close() }
            faults.faultedPaths = { $0 == "\(Self.path)/root" }
            faults.plan = FaultPlan(failingCall: faults.callCount + 1)
            #expect(throws: StorageError.self) { try other.write { try $0.put([2], for: [2], in: "t") } }
        }
        #expect(first.generation == before + 1)
        #expect(try first.read().get([2], in: "t") == [2])
        try first.write { try $0.put([3], for: [3], in: "t") }
        first.close()
        let reopened = try Store.openReadOnly(at: Self.path, options: testOptions(memory))
        defer { reopened.close() }
        #expect(reopened.generation == before + 2, "the slots name the adopted run and the commit after it")
        #expect(try reopened.read().get([2], in: "t") == [2])
        #expect(reopened.verify().isClean)
    }

    /// Pages a rolled-back transaction spilled and read back sit in the page cache at places
    /// past the committed end; another writer's run then puts its own pages there. After the
    /// catch-up, the first writer reads the other's pages, not its stale ones.
    @Test func pagesSpilledByARolledBackTransactionAreNotServedForAnotherWritersRun() throws {
        let fileSystem = try memoryFileSystem()
        var options = testOptions(fileSystem)
        options.transactionSpillBytes = 16 << 10
        let first = try Store.open(at: Self.path, options: options)
        defer { first.close() }
        try first.write { try $0.put([0], for: [0], in: "t") }
        // Spills several times, reading back (and caching) spilled pages, then rolls back.
        let transaction = try first.beginWrite()
        for n in 0..<3_000 {
            try transaction.put(Array(repeating: UInt8(n % 251), count: 40), for: key(n), in: "t")
            if n % 100 == 0 { _ = try transaction.get(key(n / 2), in: "t") }
        }
        transaction.rollback()
        let other = sampleKeys(seed: 7)
        try first.withWriterLockReleased { () throws in
            let writer = try Store.open(at: Self.path, options: options)
            defer { writer.close() }
            try writer.write { txn in
                for (n, value) in other { try txn.put(value, for: key(n), in: "t") }
            }
        }
        let view = try first.read()
        let wrong = try other.filter { n, value in try view.get(key(n), in: "t") != value }.count
        #expect(wrong == 0, "read a stale page for \(wrong) of \(other.count) keys")
        #expect(first.verify().isClean)
    }

    /// Another writer found the newest slot damaged, fell back to an older root (in the file
    /// before a compaction) and committed past this writer's generation: another history.
    /// This writer adopts it as a reader's refresh would, never as a continuation: the layer
    /// above is told the history was replaced, observers `historyUnavailable`, and no page of
    /// the lost history is read for it.
    @Test func anotherHistoryIsAdoptedAsReplacedNotAsAContinuation() throws {
        let memory = try memoryFileSystem()
        var options = testOptions(memory)
        options.retention = SnapshotRetention(gracePeriod: .seconds(600))  // file 1 stays
        let first = try Store.open(at: Self.path, options: options)
        defer { first.close() }
        let replaced = Mutex<[UInt64]>([])
        first.onGenerationCreated { created in
            if created.replacesHistory { replaced.withLock { $0.append(created.generation) } }
        }
        let events = Mutex<[StoreEvent]>([])
        let observation = first.observe { event in events.withLock { $0.append(event) } }
        defer { observation.cancel() }
        for i: UInt8 in 0..<3 { try first.write { try $0.put([i], for: [i], in: "t") } }
        let beforeCompaction = memory.contents(of: "\(Self.path)/root")!
        try first.compact()
        for i: UInt8 in 3..<5 { try first.write { try $0.put([i], for: [i], in: "t") } }
        let followed = first.generation
        events.withLock { $0 = [] }

        try first.withWriterLockReleased { () throws in
            try putOlderRoot(from: beforeCompaction, intoSlotOneOf: "\(Self.path)/root", in: memory)
            var root = memory.contents(of: "\(Self.path)/root")!
            root[20] ^= 0xFF
            memory.setContents(root, of: "\(Self.path)/root")
            let other = try Store.open(at: Self.path, options: options)
            defer { other.close() }
            while other.generation <= followed {
                try other.write { try $0.put([9], for: [UInt8(other.generation)], in: "t") }
            }
        }
        #expect(first.generation == followed + 1)
        #expect(replaced.withLock { $0 } == [followed + 1])
        let seen = events.withLock { $0 }
        guard seen.count == 1, case .historyUnavailable(let from, let to) = seen[0] else {
            Issue.record("expected one historyUnavailable, got \(seen)")
            return
        }
        #expect(from == followed && to == followed + 1)
        #expect(try first.read().get([3], in: "t") == nil, "the lost history's commits are not in the new one")
        try first.write { try $0.put([10], for: [10], in: "t") }
        #expect(try first.read().get([10], in: "t") == [10])
        #expect(first.verify().isClean)
    }

    /// A transaction begun while the lock is let go waits (as it waits for a compaction's
    /// catch-up) and then builds on the root the catch-up adopted: both writes are kept.
    @Test func aTransactionBegunWhileTheLockIsReleasedWaitsAndBuildsOnTheAdoptedRoot() throws {
        let fileSystem = try memoryFileSystem()
        let first = try Store.open(at: Self.path, options: testOptions(fileSystem))
        defer { first.close() }
        try first.write { try $0.put([1], for: [1], in: "t") }
        let waiting = DispatchSemaphore(value: 0)
        let outcome = Mutex<Bool?>(nil)
        try first.withWriterLockReleased { () throws in
            Thread {
                let wrote = (try? first.write { try $0.put([100], for: [100], in: "t") }) != nil
                outcome.withLock { $0 = wrote }
                waiting.signal()
            }.start()
            // The other thread's begin is queued behind this call.
            while first.state.withLock({ $0.writer?.waitingForExclusive.count ?? 0 }) < 1 { usleep(1_000) }
            let other = try Store.open(at: Self.path, options: testOptions(fileSystem))
            defer { other.close() }
            try other.write { try $0.put([2], for: [2], in: "t") }
        }
        waiting.wait()
        #expect(outcome.withLock { $0 } == true)
        first.close()
        let reopened = try Store.openReadOnly(at: Self.path, options: testOptions(fileSystem))
        defer { reopened.close() }
        let view = try reopened.read()
        #expect(try view.get([2], in: "t") == [2])
        #expect(try view.get([100], in: "t") == [100])
        #expect(reopened.verify().isClean)
    }

    /// A catch-up that fails once the slots were read again leaves the writer behind them:
    /// it is poisoned, so that no commit is written over the other writer's runs.
    @Test func aCatchUpThatFailsPoisonsTheWriter() throws {
        let fileSystem = try memoryFileSystem()
        let first = try Store.open(at: Self.path, options: testOptions(fileSystem))
        defer { first.close() }
        try first.write { try $0.put([1], for: [1], in: "t") }
        #expect(throws: StorageError.self) {
            try first.withWriterLockReleased { () throws in
                let other = try Store.open(at: Self.path, options: testOptions(fileSystem))
                try other.write { try $0.put([2], for: [2], in: "t") }
                try other.compact()
                let file = other.state.withLock { $0.current.file.path }
                other.close()
                // The file the slots name is gone (damage, or a hand that deleted it).
                try fileSystem.remove(file)
            }
        }
        #expect {
            try first.write { try $0.put([3], for: [3], in: "t") }
        } throws: { error in
            guard case StorageError.needsReopen = error else { return false }
            return true
        }
    }

    /// The lock cannot be taken again (the other writer stayed open): the first writer is
    /// poisoned, and closing it leaves the other's registration in this process alone.
    @Test func aWriterThatCannotRetakeTheLockIsPoisonedAndLeavesTheOthersRegistration() throws {
        let fileSystem = try memoryFileSystem()
        let first = try Store.open(at: Self.path, options: testOptions(fileSystem))
        let other = Mutex<Store?>(nil)
        // The other writer is in this process: the registry refuses before the lock.
        #expect(throws: StorageError.alreadyOpenInThisProcess(path: Self.path)) {
            try first.withWriterLockReleased {
                let store = try Store.open(at: Self.path, options: testOptions(fileSystem))
                other.withLock { $0 = store }
            }
        }
        #expect {
            try first.write { try $0.put([1], for: [1], in: "t") }
        } throws: { error in
            guard case StorageError.needsReopen = error else { return false }
            return true
        }
        first.close()
        #expect(throws: StorageError.alreadyOpenInThisProcess(path: Self.path)) {
            try Store.open(at: Self.path, options: testOptions(fileSystem))
        }
        other.withLock { $0 }?.close()
        try Store.open(at: Self.path, options: testOptions(fileSystem)).close()
    }

    private func key(_ n: Int) -> [UInt8] { Array("key-\(n)".utf8) }

    private func sampleKeys(seed: UInt64) -> [(Int, [UInt8])] {
        var rng = SplitMix64(seed: seed)
        return (0..<3_000).map { n in (n, (0..<40).map { _ in UInt8.random(in: 0...255, using: &rng) }) }
    }
}

extension Store {
    /// The snapshot file the newest root names.
    fileprivate var statisticsFileNumber: UInt64 {
        state.withLock { $0.current.record.snapshotFile }
    }
}
