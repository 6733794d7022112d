import Testing
import Foundation
import Synchronization
@testable import FolioStorage

/// A waiter's request for the store's lock (`TurnRequest`, the `turns` file): a hint that a
/// process about to take the lock again yields to once its streak of turns has lasted
/// `TurnRequest.askAfter`, and that lapses unless renewed. Two instances on one file stand
/// for two processes; the streak is driven with given instants, not the clock.
@Suite struct TurnRequestTests {
    static let millisecond: UInt64 = 1_000_000

    /// Turns taken and released every 100 µs from `start` for `milliseconds`; returns the end.
    func streak(of holder: TurnRequest, from start: UInt64, milliseconds: UInt64) -> UInt64 {
        var now = start
        while now < start + milliseconds * Self.millisecond {
            holder.noteAcquired(at: now)
            holder.noteReleased(at: now + 50_000)
            now += 100_000
        }
        return now
    }

    @Test func aRequestIsSeenUntilWithdrawnOrLapsed() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("turns")
        let asker = try #require(TurnRequest(path: path, fileSystem: POSIXFileSystem()))
        let holder = try #require(TurnRequest(path: path, fileSystem: POSIXFileSystem()))
        #expect(!holder.isAsked())
        asker.ask()
        #expect(holder.isAsked())
        asker.withdraw()
        #expect(!holder.isAsked())
        asker.ask()
        let lifetime = TurnRequest.nanoseconds(TurnRequest.lifetime)
        #expect(!holder.isAsked(now: TurnRequest.now() + lifetime + Self.millisecond), "a request nobody renews lapses")
    }

    /// A value further ahead than a request's lifetime (garbage, or a torn store) is no
    /// request: it cannot make a writer yield for longer than a lifetime.
    @Test func aDeadlineTooFarAheadIsNoRequest() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("turns")
        let holder = try #require(TurnRequest(path: path, fileSystem: POSIXFileSystem()))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.write(Data(withUnsafeBytes(of: (UInt64.max / 2).littleEndian) { Array($0) }))
        try handle.close()
        #expect(!holder.isAsked())
    }

    /// The holder yields only once its streak of turns has lasted `askAfter`, never while a
    /// waiter of its own asks, never with no request, and a turn after a pause (its yield's)
    /// begins a new streak. A process that took nothing since its open has no streak.
    @Test func aHolderYieldsOnlyAfterAStreakOfTurns() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("turns")
        let asker = try #require(TurnRequest(path: path, fileSystem: POSIXFileSystem()))
        let holder = try #require(TurnRequest(path: path, fileSystem: POSIXFileSystem()))
        let start = TurnRequest.now()
        asker.ask(at: start)
        holder.noteReleased(at: start)
        #expect(!holder.yields(asking: false, now: start + 100_000), "no streak before a first turn")
        let askAfter = TurnRequest.nanoseconds(TurnRequest.askAfter) / Self.millisecond
        var now = streak(of: holder, from: start, milliseconds: askAfter / 2)
        asker.ask(at: now)
        #expect(!holder.yields(asking: false, now: now), "a streak of half the time does not yield")
        now = streak(of: holder, from: now, milliseconds: askAfter)
        asker.ask(at: now)
        #expect(!holder.yields(asking: true, now: now), "a process whose own waiter asks does not yield")
        #expect(holder.yields(asking: false, now: now))
        // The yield's pause ends the streak: the next try does not yield, and starts anew.
        now += TurnRequest.nanoseconds(TurnRequest.yieldPause)
        asker.ask(at: now)
        #expect(!holder.yields(asking: false, now: now))
        holder.noteAcquired(at: now)
        holder.noteReleased(at: now + 50_000)
        #expect(!holder.yields(asking: false, now: now + 100_000))
        // No request, no yield, however long the streak.
        asker.withdraw()
        now = streak(of: holder, from: now + 100_000, milliseconds: askAfter * 2)
        #expect(!holder.yields(asking: false, now: now))
    }

    /// A store whose streak has lasted gives up one try to a request and still writes (the
    /// yielded try is not counted against its timeout), while a store whose busy timeout is
    /// shorter than `shortestYieldingTimeout` never yields: after a yield it could fail.
    @Test(arguments: [Duration.seconds(5), .zero])
    func aWriterAfterALongStreakYieldsOnceAndStillWrites(busyTimeout: Duration) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("s")
        var options = testOptions()
        options.busyTimeout = busyTimeout
        let store = try Store.open(at: path, options: options)
        defer { store.close() }
        let turns = StoreLayout(directory: path).turns
        #expect(FileManager.default.fileExists(atPath: turns))
        let holder = try #require(store.turnRequest)
        let asker = try #require(TurnRequest(path: turns, fileSystem: POSIXFileSystem()))
        // A streak is a matter of microseconds between turns: a preempted test thread can
        // break one, so a few attempts.
        for attempt in 0..<200 where store.yieldedLockTries == 0 {
            try store.write { try $0.put([UInt8(attempt & 0xFF)], for: [1], in: "t") }
            holder.noteAcquired(at: TurnRequest.now() - TurnRequest.nanoseconds(TurnRequest.askAfter) * 2)
            holder.noteReleased()
            asker.ask()
            try store.write { try $0.put([UInt8(attempt & 0xFF)], for: [2], in: "t") }
            if busyTimeout == .zero && attempt == 20 { break }
        }
        #expect((store.yieldedLockTries >= 1) == (busyTimeout >= TurnRequest.shortestYieldingTimeout))
        asker.withdraw()
        #expect(store.verify().isClean)
    }

    /// A write that waits for another process's lock asks for it after `askAfter`, and
    /// withdraws once it has the lock; its process counts no asking waiter afterwards.
    @Test func aWaiterAsksAfterAWhileAndWithdrawsOnceItWrites() throws {
        let waiting = try WaitingWrite()
        defer { waiting.close() }
        #expect(waiting.requestShows(), "the waiting write never asked")
        #expect(!waiting.hasWritten)
        #expect(waiting.releaseAndWait())
        #expect(!waiting.asker.isAsked(), "the request was not withdrawn")
        let asking = waiting.store.askingWaiters.load(ordering: .relaxed)
        #expect(asking == 0)
        #expect(try waiting.store.read().get([1], in: "t") == [1])
    }

    /// A waiter that finds another waiter's request live leaves it be: one asker at a time
    /// tries fast. Once that request is gone, the waiter asks in its turn.
    @Test func aWaiterLeavesAnotherWaitersRequestBe() throws {
        let waiting = try WaitingWrite()
        defer { waiting.close() }
        // Another process's waiter asks all along, through the store's waiter's own wait.
        var overwritten = 0
        var last = waiting.asker.ask()
        let end = ContinuousClock.now + TurnRequest.askAfter * 4
        while ContinuousClock.now < end {
            Thread.sleep(forTimeInterval: 0.001)
            if waiting.asker.liveRequest() != last { overwritten += 1 }
            last = waiting.asker.ask()
        }
        #expect(overwritten == 0, "the waiter wrote over a live request \(overwritten) times")
        // The other waiter stops asking: this one asks in its turn.
        waiting.asker.withdraw()
        #expect(waiting.requestShows())
        #expect(waiting.releaseAndWait())
    }

    /// Read-only stores and stores on a file system that cannot map have no `turns` file.
    @Test func onlyWritersThatCanMapHaveTurns() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("s")
        try Store.open(at: path, options: testOptions()).close()
        let reader = try Store.openReadOnly(at: path, options: testOptions())
        defer { reader.close() }
        #expect(reader.turnRequest == nil)
        let memory = try Store.open(at: "/stores/s", options: testOptions(try memoryFileSystem()))
        defer { memory.close() }
        #expect(memory.turnRequest == nil)
    }
}

/// A write that waits for another process's turn: a store on disk with a long busy timeout,
/// another open file description of its lock file holding the lock (standing for that
/// process), and a thread whose write waits. `asker` is a request of "another process" on the
/// store's `turns` file.
final class WaitingWrite: Sendable {
    let directory = TemporaryDirectory()
    let store: Store
    let asker: TurnRequest
    private let other: any LockFile
    private let wrote = Atomic<Bool>(false)

    init() throws {
        let path = directory.child("s")
        var options = testOptions()
        options.busyTimeout = .seconds(30)
        store = try Store.open(at: path, options: options)
        let layout = StoreLayout(directory: path)
        asker = try #require(TurnRequest(path: layout.turns, fileSystem: POSIXFileSystem()))
        other = try POSIXFileSystem().openLockFile(layout.lock)
        #expect(try other.tryLock())
        Thread { [self] in
            try? store.write { try $0.put([1], for: [1], in: "t") }
            wrote.store(true, ordering: .relaxed)
        }.start()
    }

    var hasWritten: Bool { wrote.load(ordering: .relaxed) }

    /// Whether some process's request shows within 3 s.
    func requestShows() -> Bool {
        for _ in 0..<3_000 {
            if asker.isAsked() { return true }
            Thread.sleep(forTimeInterval: 0.001)
        }
        return false
    }

    /// Lets the lock go; returns whether the write then returned within 10 s.
    func releaseAndWait() -> Bool {
        other.unlock()
        for _ in 0..<10_000 where !hasWritten { Thread.sleep(forTimeInterval: 0.001) }
        return hasWritten
    }

    func close() {
        other.close()
        store.close()
        directory.remove()
    }
}
