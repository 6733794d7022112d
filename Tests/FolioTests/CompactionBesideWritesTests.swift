import Testing
import Foundation
import Synchronization
import Folio
import FolioTestSupport

/// `Persistence.compact()` copies beside the persistence's transactions: they commit while it
/// copies, and what they wrote is in the compacted store. Written as a timeline, with the
/// compaction held inside its first progress report until a transaction has committed.
@Suite struct CompactionBesideWritesTests {
    /// What the progress callback saw: whether a commit landed while it held the copy.
    final class Timeline: Sendable {
        let copying = Mutex(false)
        let committed = Mutex(false)
        /// Lets the held compaction go on: signalled once the transaction has committed, or
        /// by the watchdog once the timeline has hung.
        let goOn = DispatchSemaphore(value: 0)
        let commitLandedDuringCopy = Mutex<Bool?>(nil)
    }

    @Test func aTransactionCommitsWhileCompactionCopies() async throws {
        let (persistence, _, cleanup) = try diskPersistence("compact-beside")
        defer { cleanup() }
        let books = persistence.datastore(for: BookFormat.self)
        // Over 1 MiB live, so the copy reports progress (every MiB) before it ends.
        try await persistence.perform { for n in 0..<12_000 { try await books.persist(makeBook(n)) } }
        try await persistence.perform { for n in 0..<150 { try await books.delete(makeBook(n).id) } }
        let timeline = Timeline()

        // 1. The compaction starts copying and holds there (on its own thread).
        let compaction = Task {
            try await persistence.compact { progress in
                guard case .copying = progress else { return }
                let first = timeline.copying.withLock { seen in
                    defer { seen = true }
                    return !seen
                }
                guard first else { return }
                // Held until the transaction below commits; with the writer held for the
                // whole compaction, it could not, and the watchdog would let it go on.
                timeline.goOn.wait()
                timeline.commitLandedDuringCopy.withLock { $0 = timeline.committed.withLock { $0 } }
            }
        }
        // The watchdog's looks queue on the cooperative pool behind the same work as the
        // transaction below, so a starved pool (the whole suite at once) cannot make it let
        // the compaction go before the transaction has had its turns: a fixed wait on the
        // compaction's own thread did, twice. The last signal frees the compaction on an early
        // exit, so that cleanup's close (which waits for it) returns.
        let watchdog = hangWatchdog { timeline.goOn.signal() }
        defer {
            watchdog.cancel()
            timeline.goOn.signal()
        }
        try #require(await eventually { timeline.copying.withLock { $0 } })

        // 2. A transaction commits meanwhile, and 3. lets the compaction go on.
        try await persistence.perform {
            try await books.persist(makeBook(20_000))
            try await books.delete(makeBook(200).id)
        }
        timeline.committed.withLock { $0 = true }
        timeline.goOn.signal()

        // 4. The compaction ends with the transaction's writes in the new file.
        let report = try await compaction.value
        #expect(timeline.commitLandedDuringCopy.withLock { $0 } == true)
        #expect(report.bytesAfter < report.bytesBefore)
        #expect(try await books.count() == 11_850)
        #expect(try await books.load(makeBook(20_000).id) == makeBook(20_000))
        #expect(try await books.load(makeBook(200).id) == nil)
        expectSound(persistence)
    }

    /// Inside one of the persistence's own transactions, compaction is refused at once: its
    /// catch-up would wait for that transaction to end.
    @Test func compactionInsideATransactionIsRefused() async throws {
        let (persistence, _, cleanup) = try diskPersistence("compact-inside")
        defer { cleanup() }
        let books = persistence.datastore(for: BookFormat.self)
        try await books.persist(makeBook(1))
        try await persistence.perform {
            try await books.persist(makeBook(2))
            await #expect(throws: FolioError.storage(.writeTransactionInProgress)) { try await persistence.compact() }
        }
        #expect(try await books.count() == 2)
    }

    /// Inside a read snapshot, which holds no write transaction, compaction runs: the
    /// snapshot keeps reading the generation it began with.
    @Test func compactionInsideAReadSnapshotRuns() async throws {
        let (persistence, _, cleanup) = try diskPersistence("compact-in-read")
        defer { cleanup() }
        let books = persistence.datastore(for: BookFormat.self)
        for n in 0..<20 { try await books.persist(makeBook(n)) }
        try await books.delete(makeBook(0).id)
        let report = try await persistence.read {
            let report = try await persistence.compact()
            #expect(try await books.count() == 19)
            return report
        }
        #expect(report.bytesAfter < report.bytesBefore)
        #expect(try await books.count() == 19)
    }

    /// A cancelled task's compaction compacts nothing.
    @Test func aCancelledTaskCompactsNothing() async throws {
        let (persistence, _, cleanup) = try diskPersistence("compact-cancelled")
        defer { cleanup() }
        let books = persistence.datastore(for: BookFormat.self)
        for n in 0..<20 { try await books.persist(makeBook(n)) }
        try await books.delete(makeBook(0).id)
        let before = try persistence.statistics()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await persistence.compact()
        }
        await #expect(throws: FolioError.cancelled) { try await task.value }
        #expect(try persistence.statistics().deadBytes == before.deadBytes)
    }
}
