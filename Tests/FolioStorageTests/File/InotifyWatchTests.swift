#if canImport(Glibc)
import Testing
import Foundation
import Synchronization
import FolioTestSupport
@testable import FolioStorage

/// The Linux watch's pause (``InotifyWatch``): paused, it narrows its inotify mask, so writes
/// in the directory queue nothing and wake nothing; resumed, it reports a change once when
/// the caller says it may have missed some, and reports later writes again. A writer's turn
/// relies on the first (no wake-up per commit), a wait that gives up on the second (the
/// other process's commits made meanwhile are still followed).
@Suite struct InotifyWatchTests {
    @Test func aPausedWatchQueuesNothingAndReportsOnceOnResumeWhenAsked() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let reports = Atomic<Int>(0)
        let watch = try #require(
            InotifyWatch(directory: directory.path) { reports.add(1, ordering: .relaxed) })
        defer { watch.cancel() }
        let file = directory.child("root")

        // Reporting: a write is reported.
        try Data([1]).write(to: URL(fileURLWithPath: file))
        #expect(eventuallyOnThisThread { reports.load(ordering: .relaxed) > 0 })

        // Paused: writes queue nothing, so nothing is delivered while paused, nor once the
        // watch resumes without being asked to report (a suspended source would deliver
        // them then). Waits, not timing assertions: a wrong watch reports within them.
        Thread.sleep(forTimeInterval: 0.1)  // the write's events may come in more than one read
        let reported = reports.load(ordering: .relaxed)
        watch.pause()
        for byte in UInt8(2)...5 { try Data([byte]).write(to: URL(fileURLWithPath: file)) }
        Thread.sleep(forTimeInterval: 0.1)
        watch.resume(reportingMissed: false)
        Thread.sleep(forTimeInterval: 0.1)
        #expect(reports.load(ordering: .relaxed) == reported, "writes made while paused were reported")

        // Paused again, and resumed by a caller that may have missed changes: one report.
        watch.pause()
        try Data([6]).write(to: URL(fileURLWithPath: file))
        watch.resume(reportingMissed: true)
        #expect(eventuallyOnThisThread { reports.load(ordering: .relaxed) == reported + 1 })

        // Reporting again: a write after the resume is reported.
        try Data([7]).write(to: URL(fileURLWithPath: file))
        #expect(eventuallyOnThisThread { reports.load(ordering: .relaxed) > reported + 1 })
    }

    @Test func pausingAndResumingAfterCancelDoNothing() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let reports = Atomic<Int>(0)
        let watch = try #require(
            InotifyWatch(directory: directory.path) { reports.add(1, ordering: .relaxed) })
        watch.pause()
        watch.cancel()
        // The descriptor is closed by now or soon: neither call may touch it, nor report.
        watch.resume(reportingMissed: true)
        watch.pause()
        watch.discardPending()
        Thread.sleep(forTimeInterval: 0.05)
        #expect(reports.load(ordering: .relaxed) == 0)
    }
}
#endif
