import Testing
import Foundation
import Synchronization
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport

/// The background commit a set outside transactions schedules runs in a detached task,
/// which may run long after the set: by then a transaction's begin (or a flush) may have
/// committed the queue. Such a late commit must not take the exclusive turn for nothing:
/// the exclusive turn waits for every transaction running and holds back every
/// transaction asked for after it, so two transactions meant to run at once (one waiting
/// inside its body for the other to begin) would wait for each other until a hang guard
/// gave up (the whole test suite once stalled five minutes on it, in the key-value model's
/// concurrent pairs).
@Suite struct KeyValueBackgroundCommitTurnTests {
    @Test func aLateBackgroundCommitWithNothingQueuedHoldsNoTransactionBack() async throws {
        let persistence = Persistence.inMemory(options: KV.options())
        defer { persistence.close() }
        let values = persistence.values
        let key = ValueKey<Int>("late/k", default: 0)
        let entered = Atomic<Bool>(false), release = Atomic<Bool>(false)
        // A transaction that holds its shared turn until told to end.
        let holder = Task {
            try await persistence.perform {
                entered.store(true, ordering: .releasing)
                while !release.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(1)) }
            }
        }
        #expect(await KV.eventually { entered.load(ordering: .acquiring) })

        // The late background commit: nothing is queued any more.
        #expect(!persistence.core.values.hasQueued)
        let backgroundDone = Atomic<Bool>(false), secondDone = Atomic<Bool>(false)
        let background = Task {
            await values.commitInBackground()
            backgroundDone.store(true, ordering: .releasing)
        }
        // A transaction asked for after it begins and commits while the first still runs.
        let second = Task {
            try await persistence.perform { try values.set(2, for: key) }
            secondDone.store(true, ordering: .releasing)
        }
        let ranAtOnce = await eventually {
            backgroundDone.load(ordering: .acquiring) && secondDone.load(ordering: .acquiring)
        }
        #expect(ranAtOnce, "a background commit with nothing to commit held the second transaction back")
        release.store(true, ordering: .releasing)
        try await holder.value
        await background.value
        try await second.value
        #expect(values[key] == 2)
        #expect(!persistence.writer.isHeld)
    }

    /// The background commit still commits what is queued when its turn comes.
    @Test func aBackgroundCommitCommitsWhatIsQueued() async throws {
        let persistence = Persistence.inMemory(options: KV.options())
        defer { persistence.close() }
        let key = ValueKey<Int>("late/queued", default: 0)
        try persistence.values.set(7, for: key)
        // Whichever runs first (this call or the task the set scheduled) commits the queue.
        await persistence.values.commitInBackground()
        #expect(!persistence.core.values.hasQueued)
        try await persistence.values.flush()
        #expect(try persistence.store.read().get(try KeyValueLayout.key("late/queued"), in: KeyValueLayout.tree) != nil)
    }
}
