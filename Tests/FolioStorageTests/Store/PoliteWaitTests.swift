import Testing
@testable import FolioStorage

/// A waiter skips its try of the lock after a pause during which another process committed,
/// unless it is the waiter at the front, and never more than `mostSkips` times in a row; with
/// no commit during the pause, or no view of the root slots, it always tries.
@Suite struct PoliteWaitTests {
    /// A source of "the newest generation now" that a test moves.
    final class Generations: @unchecked Sendable {
        var value: UInt64 = 10
    }

    @Test func aCommitDuringThePauseSkipsTheTry() {
        let generations = Generations()
        var wait = PoliteWait(newestGeneration: { generations.value })
        var skips = false
        wait.noteFailedTry()
        skips = wait.skipsTry(front: false)
        #expect(!skips, "nothing committed: try")
        wait.noteFailedTry()
        generations.value += 1
        skips = wait.skipsTry(front: false)
        #expect(skips, "a commit during the pause: skip")
        skips = wait.skipsTry(front: false)
        #expect(!skips, "no commit during the next pause: try")
    }

    @Test func theWaiterAtTheFrontAlwaysTries() {
        let generations = Generations()
        var wait = PoliteWait(newestGeneration: { generations.value })
        var skips = false
        wait.noteFailedTry()
        generations.value += 1
        skips = wait.skipsTry(front: true)
        #expect(!skips)
    }

    @Test func aWaiterTriesAfterMostSkipsInARow() {
        let generations = Generations()
        var wait = PoliteWait(newestGeneration: { generations.value })
        var skips = false
        wait.noteFailedTry()
        for skip in 0..<PoliteWait.mostSkips {
            generations.value += 1
            skips = wait.skipsTry(front: false)
            #expect(skips, "skip \(skip)")
        }
        generations.value += 1
        skips = wait.skipsTry(front: false)
        #expect(!skips, "the try after \(PoliteWait.mostSkips) skips")
        // The count starts again after a try.
        wait.noteFailedTry()
        generations.value += 1
        skips = wait.skipsTry(front: false)
        #expect(skips)
    }

    @Test func withoutAViewOfTheSlotsEveryTryIsMade() {
        var wait = PoliteWait(newestGeneration: nil)
        var skips = false
        wait.noteFailedTry()
        skips = wait.skipsTry(front: false)
        #expect(!skips)
    }
}
