import Testing
import Foundation
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// A writer's watch pauses while its turn is held or awaited (``WatchPause``): other
/// processes' commits then wake it no more, and the turn's catch-up tells its observers of
/// them instead. Written as timelines with `folio-torture` as the other process.
@Suite(.serialized) struct WatchPauseTests {
    /// Synchronous, so that the timeline holds its thread: an async one was seen kept from
    /// looking for over a minute by a cooperative pool busy with the rest of the suite.
    ///
    /// Timeline: the child holds a turn → this writer begins a transaction, which waits →
    /// its watch is paused while it waits → the child ends its transaction → the turn begins
    /// and commits → the watch is resumed.
    @Test func aWriterWaitingForItsTurnPausesItsWatchUntilTheTurnEnds() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let store = try Self.openFollowingWriter(at: path)
        defer { store.close() }
        #expect(!store.isWatchPaused)

        let holder = try ChildProcess(try ProjectExecutable.path("folio-torture"), ["hold-writer", path])
        try holder.waitForLine { $0 == "ready" }
        let committed = Atomic<Bool>(false)
        let writer = Thread {
            do {
                try store.write { try $0.put([1], for: [1], in: "t") }
                committed.store(true, ordering: .releasing)
            } catch {
                Issue.record("the waiting write failed: \(error)")
            }
        }
        writer.start()
        #expect(
            eventuallyOnThisThread { store.failedLockTries > 0 && store.isWatchPaused },
            "tries failed \(store.failedLockTries), paused \(store.isWatchPaused)")
        let committedEarly = committed.load(ordering: .acquiring)
        #expect(!committedEarly)
        holder.closeInput()
        #expect(try holder.wait() == 0)
        let committedAfter = eventuallyOnThisThread { committed.load(ordering: .acquiring) }
        #expect(committedAfter)
        #expect(eventuallyOnThisThread { !store.isWatchPaused }, "the watch stays paused after the turn ended")
        #expect(!store.holdsWriterLock)
    }

    /// Timeline: this writer and a `concurrent-writers` child commit into one store at once,
    /// taking turns (each waiting for the other's), while an observer of this writer records
    /// every generation it is told of. Most commits of the child land while this writer's
    /// watch is paused (its turn held or awaited), so the observer hears of them from the
    /// catch-up of this writer's next turn, or from the watch once it resumes: it must hear
    /// of every generation once, in order, with none missing up to the last.
    @Test func aWriterTakingTurnsWithAnotherProcessHearsOfEveryCommitOnceInOrder() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        let store = try Self.openFollowingWriter(at: path)
        defer { store.close() }
        let start = store.generation
        let heard = Mutex<[UInt64]>([])
        let unavailable = Mutex<[(UInt64, UInt64)]>([])
        let observation = store.observe { event in
            switch event {
            case .committed(let commits): heard.withLock { $0 += commits.map(\.generation) }
            case .historyUnavailable(let from, let to): unavailable.withLock { $0.append((from, to)) }
            }
        }
        defer { observation.cancel() }

        let child = try ChildProcess(
            try ProjectExecutable.path("folio-torture"),
            ["concurrent-writers", path, "1", "200", "--first-thread", "1", "--busy-timeout-ms", "60000"])
        try child.waitForLine { $0 == "open" }
        // Writing for as long as the child does (at least 100 commits), so that the two take
        // turns whatever the machine's load makes of their start.
        var i = 0
        while i < 100 || (child.isRunning && i < 20_000) {
            try store.write { try $0.put(Array("\(i)".utf8), for: Array(String(format: "%08d", i).utf8), in: "w0") }
            i += 1
        }
        #expect(try child.wait(timeout: 300) == 0, "\(child.errorOutput.suffix(600))")
        // The child's last commits may have landed after this writer's last turn: the watch
        // (resumed) follows them.
        let last = try Store.openReadOnly(at: path, options: testOptions()).generation
        #expect(
            eventuallyOnThisThread { heard.withLock { $0.last } == last },
            "heard up to \(heard.withLock { $0.last } ?? 0) of \(last)")
        let generations = heard.withLock { $0 }
        #expect(generations == Array((start + 1)...last), "not every generation once in order")
        #expect(unavailable.withLock { $0.isEmpty })
        #expect(store.failedLockTries > 0, "the two writers never waited for each other")
        #expect(!store.isWatchPaused)
        #expect(store.verify().isClean)
    }

    /// Timeline: the child holds a turn → this writer's write waits for it and gives up at
    /// its busy timeout → the child ends its turn → this writer writes in a turn of its own.
    /// A recording watch stands in for the store's: a wait that gave up adopted nothing, so
    /// its resume asks for a report (the inotify watch, paused, drops what others commit
    /// meanwhile); a turn's end needs none (its catch-up adopted everything before it).
    @Test func aWaitThatGivesUpAsksTheWatchToReportWhatItMissed() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.child("store")
        var options = testOptions()
        options.busyTimeout = .milliseconds(50)
        let store = try Store.open(at: path, options: options)
        defer { store.close() }
        let watch = RecordingWatch()
        store.watchPause.install(watch)
        defer { store.watchPause.remove() }

        let holder = try ChildProcess(try ProjectExecutable.path("folio-torture"), ["hold-writer", path])
        try holder.waitForLine { $0 == "ready" }
        #expect(throws: StorageError.self) { try store.write { try $0.put([1], for: [1], in: "t") } }
        #expect(watch.calls == ["pause", "resume reporting"], "\(watch.calls)")
        holder.closeInput()
        #expect(try holder.wait() == 0)

        try store.write { try $0.put([2], for: [2], in: "t") }
        #expect(watch.calls == ["pause", "resume reporting", "pause", "resume", "discard"], "\(watch.calls)")
        #expect(!store.isWatchPaused)
    }

    /// A writer of the store at `path` that follows other writers between its turns and
    /// waits up to ten minutes for theirs (a hang guard, not a figure).
    static func openFollowingWriter(at path: String) throws -> Store {
        var options = testOptions()
        options.busyTimeout = .seconds(600)
        let store = try Store.open(at: path, options: options)
        do {
            try store.startFollowing()
        } catch {
            store.close()
            throw error
        }
        return store
    }
}

/// A watch that records what is asked of it, in order.
private final class RecordingWatch: PausableWatch {
    private let log = Mutex<[String]>([])
    var calls: [String] { log.withLock { $0 } }
    func cancel() { log.withLock { $0.append("cancel") } }
    func pause() { log.withLock { $0.append("pause") } }
    func resume(reportingMissed: Bool) { log.withLock { $0.append(reportingMissed ? "resume reporting" : "resume") } }
    func discardPending() { log.withLock { $0.append("discard") } }
}
