import Foundation
import Testing
import Synchronization
import FolioStorage
import FolioTestSupport

/// B3: the writer lock across processes and within one. Extends
/// `Store/MultiProcessTests.swift` (one refusal, one killed holder, one reader, one second
/// open) with the issue's numbers and repetitions:
///
/// - a second writer is refused within 50 ms while a turn holds the lock, every time (timed
///   in the refused child, around `Store.open` only: `folio-torture try-writer` prints
///   `locked <ms>`);
/// - a killed writer's lock is free at once: the very next open succeeds, no retry;
/// - a reader opens and reads consistent data while a writer process commits, and a second
///   writer with a busy timeout opens between its turns;
/// - a second open of the same store in one process is refused, even when several threads
///   race to open it: exactly one wins.
///
/// Short by default; `FOLIO_CRASH_TESTS=1` repeats each part more.
@Suite(.serialized) struct WriterLockTests {
    static let workload = TransferWorkload(seed: 31, accounts: 20)

    @Test func secondWriterIsRefusedWithin50Milliseconds() throws {
        let attempts = CrashTestMode.pick(short: 5, long: 50)
        let tool = try ProjectExecutable.path("folio-torture")
        let directory = TemporaryDirectory("folio-lock")
        defer { directory.remove() }
        let path = directory.child("store")
        try Store.open(at: path, options: testOptions()).close()
        let holder = try ChildProcess(tool, ["hold-writer", path])
        try holder.waitForLine { $0 == "ready" }
        var worst = 0
        for attempt in 0..<attempts {
            let contender = try ChildProcess(tool, ["try-writer", path])
            let line = try contender.waitForLine { $0.hasPrefix("locked") || $0 == "opened" }
            #expect(try contender.wait() == 0)
            guard line.hasPrefix("locked "), let milliseconds = Int(line.dropFirst(7)) else {
                Issue.record("attempt \(attempt): a second writer was not refused: \(line)")
                continue
            }
            #expect(milliseconds <= 50, "attempt \(attempt): refused after \(milliseconds) ms")
            worst = max(worst, milliseconds)
            // And in this process, through the same lock.
            #expect(throws: StorageError.lockedByAnotherWriter(path: "\(path)/lock")) {
                _ = try Store.open(at: path, options: testOptions())
            }
        }
        holder.closeInput()
        #expect(try holder.wait() == 0)
        print("durability B3: \(attempts) second writers refused, slowest after \(worst) ms")
    }

    @Test func killedWritersLockIsFreeAtOnce() throws {
        let rounds = CrashTestMode.pick(short: 3, long: 20)
        let tool = try ProjectExecutable.path("folio-torture")
        let directory = TemporaryDirectory("folio-lock")
        defer { directory.remove() }
        let path = directory.child("store")
        for round in 0..<rounds {
            // A writer in the middle of its commits, killed: the lock goes with the process.
            let writer = try ChildProcess(tool, ["transfers", path, "31", "1000000"])
            try writer.waitForLine { $0.hasPrefix("ack") }
            writer.kill()
            #expect(try writer.wait() == -SIGKILL)
            do {
                let store = try Store.open(at: path, options: testOptions(createIfMissing: false))
                #expect(store.verify().isClean)
                store.close()
            } catch {
                Issue.record("round \(round): the killed writer's lock was not free at once: \(error)")
            }
        }
    }

    @Test func readerOpensWhileAWriterHoldsTheLockAndCommits() throws {
        let tool = try ProjectExecutable.path("folio-torture")
        let directory = TemporaryDirectory("folio-lock")
        defer { directory.remove() }
        let path = directory.child("store")
        let writer = try ChildProcess(tool, ["transfers", path, "31", "1000000", "--compact-every", "10"])
        try writer.waitForLine { $0.hasPrefix("ack") }
        var generations = Set<UInt64>()
        // At least this many opens, and on until the writer's commits have been seen (or a
        // generous deadline): on a loaded machine the writer may not be scheduled during
        // the first few opens, which says nothing about what a reader can see.
        let deadline = ContinuousClock.now + .seconds(20)
        var opens = 0
        while opens < CrashTestMode.pick(short: 20, long: 200)
            || (generations.count < 2 && ContinuousClock.now < deadline)
        {
            let reader = try Store.openReadOnly(at: path, options: testOptions())
            let count = try TransferWorkload(seed: 31).check(reader.read())
            #expect(count >= 1)
            generations.insert(reader.generation)
            reader.close()
            opens += 1
            if opens >= 20 && generations.count < 2 { Thread.sleep(forTimeInterval: 0.005) }
        }
        // A second writer takes its turn between the committing writer's (it waits for a turn
        // in progress): its open, recovery included, leaves the store as the other wrote it.
        var waiting = testOptions()
        waiting.busyTimeout = .seconds(60)
        let second = try Store.open(at: path, options: waiting)
        #expect(try TransferWorkload(seed: 31).check(second.read()) >= 1)
        second.close()
        writer.kill()
        _ = try writer.wait()
        #expect(generations.count > 1, "the reader should have seen the writer's commits")
    }

    /// Eight threads race to open the same store for writing: exactly one gets it, the
    /// others are refused with ``StorageError/alreadyOpenInThisProcess(path:)``; once it is
    /// closed (or simply released), the store opens again.
    @Test func secondOpenInTheSameProcessIsRefusedEvenInARace() throws {
        let directory = TemporaryDirectory("folio-lock")
        defer { directory.remove() }
        let path = directory.child("store")
        try Store.open(at: path, options: testOptions()).close()
        for round in 0..<CrashTestMode.pick(short: 5, long: 50) {
            let results = Mutex<[Result<Store, StorageError>]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let result = Result { () throws(StorageError) -> Store in
                    try Store.open(at: path, options: testOptions())
                }
                results.withLock { $0.append(result) }
            }
            let all = results.withLock { $0 }
            let winners = all.compactMap { try? $0.get() }
            #expect(winners.count == 1, "round \(round): \(winners.count) writers opened")
            for case .failure(let error) in all {
                #expect(
                    error == .alreadyOpenInThisProcess(path: path)
                        || error == .lockedByAnotherWriter(path: "\(path)/lock"),
                    "round \(round): \(error)")
            }
            if round % 2 == 0 { for winner in winners { winner.close() } }  // else released without close
        }
        let store = try Store.open(at: path, options: testOptions())
        #expect(store.verify().isClean)
        store.close()
    }
}

/// `testOptions` that do not create a missing store.
private func testOptions(createIfMissing: Bool) -> StoreOptions {
    var options = testOptions()
    options.createIfMissing = createIfMissing
    return options
}
