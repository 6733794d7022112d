import Testing
import Foundation
@testable import FolioStorage

/// A waiter's request for the store's lock (`TurnRequest`, the `turns` file): a hint that a
/// process about to take the lock again yields to once its streak of turns has lasted
/// `TurnRequest.askAfter`, and that lapses unless renewed. Two instances on one file stand
/// for two processes.
@Suite struct TurnRequestTests {
    /// Takes and releases the lock as a process committing in a loop does, for `duration`.
    func holdInALoop(_ holder: TurnRequest, for duration: Duration) {
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end {
            holder.noteAcquired()
            holder.noteReleased()
        }
    }

    @Test func aRequestIsSeenUntilWithdrawnOrLapsed() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("turns")
        let asker = try #require(TurnRequest(path: path, fileSystem: POSIXFileSystem()))
        let holder = try #require(TurnRequest(path: path, fileSystem: POSIXFileSystem()))
        #expect(!holder.isAsked)
        asker.ask()
        #expect(holder.isAsked)
        asker.withdraw()
        #expect(!holder.isAsked)
        asker.ask()
        Thread.sleep(forTimeInterval: 0.03)  // past the 20 ms lifetime, not renewed
        #expect(!holder.isAsked, "a request nobody renews lapses")
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
        #expect(!holder.isAsked)
    }

    /// The holder yields only once its streak of turns has lasted `askAfter`, never to a
    /// request while a waiter of its own asks, and a turn after a pause (its yield's) begins
    /// a new streak.
    @Test func aHolderYieldsOnlyAfterAStreakOfTurns() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("turns")
        let asker = try #require(TurnRequest(path: path, fileSystem: POSIXFileSystem()))
        let holder = try #require(TurnRequest(path: path, fileSystem: POSIXFileSystem()))
        holder.noteAcquired()
        holder.noteReleased()
        asker.ask()
        #expect(!holder.yields(asking: false), "a streak that just began does not yield")
        holdInALoop(holder, for: TurnRequest.askAfter + .milliseconds(5))
        asker.ask()
        #expect(!holder.yields(asking: true), "a process whose own waiter asks does not yield")
        #expect(holder.yields(asking: false))
        // The yield's pause ends the streak: the next try takes the lock.
        Thread.sleep(forTimeInterval: 0.003)
        asker.ask()
        #expect(!holder.yields(asking: false))
        asker.withdraw()
        holdInALoop(holder, for: TurnRequest.askAfter + .milliseconds(5))
        #expect(!holder.yields(asking: false), "no request, no yield")
    }

    /// A writer committing in a loop while another process asks gives up a try of the lock
    /// and still commits everything; once the request is withdrawn it never yields. Read-only
    /// stores and stores on a file system that cannot map have no `turns` file.
    @Test func aWriterCommittingInALoopYieldsToARequest() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("s")
        let store = try Store.open(at: path, options: testOptions())
        defer { store.close() }
        #expect(FileManager.default.fileExists(atPath: StoreLayout(directory: path).turns))
        let asker = try #require(TurnRequest(path: StoreLayout(directory: path).turns, fileSystem: POSIXFileSystem()))
        let end = ContinuousClock.now + TurnRequest.askAfter * 3
        var commits = 0
        while ContinuousClock.now < end || store.yieldedLockTries == 0 && commits < 100_000 {
            asker.ask()
            try store.write { try $0.put([UInt8(commits & 0xFF)], for: [UInt8(commits & 0xFF)], in: "t") }
            commits += 1
        }
        #expect(store.yieldedLockTries >= 1, "\(commits) commits without a yield")
        asker.withdraw()
        let yielded = store.yieldedLockTries
        for i in 0..<200 { try store.write { try $0.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        #expect(store.yieldedLockTries == yielded)
        #expect(store.verify().isClean)

        let reader = try Store.openReadOnly(at: path, options: testOptions())
        defer { reader.close() }
        #expect(reader.turnRequest == nil)
        let memory = try Store.open(at: "/stores/s", options: testOptions(try memoryFileSystem()))
        defer { memory.close() }
        #expect(memory.turnRequest == nil)
    }
}
