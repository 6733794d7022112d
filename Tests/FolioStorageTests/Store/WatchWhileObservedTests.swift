import Testing
import Foundation
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// A writer that follows watches the store's directory only while it has observers: without
/// one, its reads adopt other processes' commits anyway, and the watch would only cost each
/// turn a pause and a resume.
@Suite(.serialized) struct WatchWhileObservedTests {
    @Test func aWriterWatchesFromItsFirstObserverUntilItsLastCancels() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try WatchPauseTests.openFollowingWriter(at: directory.child("store"))
        #expect(!store.isWatching)
        try store.write { try $0.put([1], for: [1], in: "t") }
        #expect(!store.isWatching)

        let first = store.observe { _ in }
        #expect(store.isWatching)
        let second = store.observe { _ in }
        first.cancel()
        #expect(store.isWatching, "one observer is left")
        // A commit while watched pauses and resumes the watch, and leaves it running.
        try store.write { try $0.put([2], for: [2], in: "t") }
        #expect(store.isWatching && !store.isWatchPaused)
        second.cancel()
        #expect(!store.isWatching)
        second.cancel()
        #expect(!store.isWatching)

        let third = store.observe { _ in }
        #expect(store.isWatching)
        store.close()
        #expect(!store.isWatching)
        let late = store.observe { _ in }
        #expect(!store.isWatching, "a closed store started a watch")
        late.cancel()
        third.cancel()
    }

    /// A writer whose root file is not mapped (here, a file system that cannot map) has no
    /// look at the slots before its reads: it watches from the start, observed or not.
    @Test func aWriterWithoutAMappedRootFileAlwaysWatches() throws {
        let store = try Store.open(at: "/stores/s", options: testOptions(try memoryFileSystem()))
        defer { store.close() }
        try store.startFollowing(pollInterval: .seconds(600))
        #expect(store.isWatching)
        store.observe { _ in }.cancel()
        #expect(store.isWatching)
    }

    /// A writer that never asked to follow watches nothing, observed or not.
    @Test func aWriterThatDoesNotFollowNeverWatches() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store.open(at: directory.child("store"), options: testOptions())
        defer { store.close() }
        let observation = store.observe { _ in }
        defer { observation.cancel() }
        #expect(!store.isWatching)
    }

    /// Timeline: a writer follows with no observer → another process commits 20 times →
    /// nothing in this process moves → an observer arrives: it hears of those 20 commits at
    /// once (the starting watch catches up) → the other process commits 20 more: the observer
    /// hears of them through the watch, with no read or write of this process.
    @Test func theFirstObserverHearsOfWhatOthersCommittedWhileNothingWatched() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let store = try WatchPauseTests.openFollowingWriter(at: path)
        defer { store.close() }
        try store.write { try $0.put([1], for: [1], in: "t") }
        let start = store.generation

        try Self.commitInAnotherProcess(path, count: 20, firstThread: 1)
        #expect(store.generation == start, "a writer with no observer moved by itself")

        let heard = Mutex<[UInt64]>([])
        let observation = store.observe { event in
            if case .committed(let commits) = event { heard.withLock { $0 += commits.map(\.generation) } }
        }
        defer { observation.cancel() }
        #expect(
            eventuallyOnThisThread { heard.withLock { $0.last } == start + 20 },
            "heard \(heard.withLock { $0 })")

        try Self.commitInAnotherProcess(path, count: 20, firstThread: 2)
        #expect(
            eventuallyOnThisThread { heard.withLock { $0.last } == start + 40 },
            "heard \(heard.withLock { $0 })")
        #expect(heard.withLock { $0 } == Array((start + 1)...(start + 40)))
        #expect(store.generation == start + 40)
    }

    /// Runs `concurrent-writers`: one thread making `count` commits, then exiting.
    private static func commitInAnotherProcess(_ path: String, count: Int, firstThread: Int) throws {
        let child = try ChildProcess(
            try ProjectExecutable.path("folio-torture"),
            ["concurrent-writers", path, "1", String(count), "--first-thread", String(firstThread)])
        #expect(try child.wait(timeout: 120) == 0, "\(child.errorOutput.suffix(600))")
    }
}
