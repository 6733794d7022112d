import Testing
import Foundation
import Synchronization
@testable import FolioStorage
import FolioTestSupport

/// The one gate behind the writer slot, group commit's sync turn and a datastore's
/// preparation (`Coordination/AsyncGate.swift`): one holder, first come first served, for
/// tasks and blocked threads alike; a cancelled waiter leaves at once and never holds it;
/// a deadline is a cancellation for threads. Timeouts here only turn a hang into a failure.
@Suite struct AsyncGateTests {
    static var isLong: Bool { ProcessInfo.processInfo.environment["FOLIO_STRESS_TESTS"] == "1" }

    /// What happened, in the order it happened.
    final class Log: Sendable {
        let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    /// Atomics shared by the tasks and threads of a test.
    final class Shared: Sendable {
        let start = Atomic<Bool>(false)
        let flag = Atomic<Bool>(false)
        let number = Atomic<Int>(-1)
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let completed = Atomic<Int>(0)

        /// Records an entry into the gate, and whether another holder was inside.
        func enter() {
            if inside.add(1, ordering: .sequentiallyConsistent).newValue != 1 { overlaps.add(1, ordering: .relaxed) }
        }

        /// Records an exit from the gate and releases it.
        func leave(_ gate: AsyncGate) {
            inside.subtract(1, ordering: .sequentiallyConsistent)
            completed.add(1, ordering: .relaxed)
            gate.release()
        }
    }

    /// A one-shot signal a task waits for without holding a thread.
    final class Latch: Sendable {
        private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
        func open() {
            let waiters = state.withLock { state in
                state.open = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        func wait() async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.open { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    /// Returns once `condition` holds, or false after `seconds` (a hang, not a time).
    static func until(seconds: Int = 30, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition() {
            if ContinuousClock.now > deadline { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return true
    }

    /// Returns once `count` callers wait on `gate`.
    static func waitUntilQueued(_ count: Int, on gate: AsyncGate) async {
        let queued = await until { gate.waitingCount >= count }
        #expect(queued, "\(count) waiters never queued")
    }

    /// Runs `body` on a thread of its own (off the cooperative pool: it blocks).
    static func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return done
    }

    // MARK: Timeline

    /// Step by step, with every waiting kind: the test holds the gate; A (a task, may be
    /// cancelled), B (a blocked thread) and C (a task that ignores cancellation) queue in
    /// that order. Each release hands the gate to exactly the next one, which keeps it
    /// until the test lets it go: the log and the queue are checked after every step, and
    /// nobody takes the gate in between (`tryAcquire` fails throughout).
    @Test func theGatePassesAlongTheQueueOneStepAtATime() async throws {
        let gate = AsyncGate()
        let log = Log()
        #expect(gate.tryAcquire(), "a free gate is taken at once")
        #expect(!gate.tryAcquire(), "and only once")

        let goA = Latch(), goC = Latch()
        let goB = DispatchSemaphore(value: 0)
        let a = Task {
            try await gate.acquire()
            log.add("A granted")
            await goA.wait()
            log.add("A releases")
            gate.release()
        }
        await Self.waitUntilQueued(1, on: gate)
        let b = Self.onThread {
            gate.acquireBlocking()
            log.add("B granted")
            goB.wait()
            log.add("B releases")
            gate.release()
        }
        await Self.waitUntilQueued(2, on: gate)
        let c = Task {
            await gate.acquireIgnoringCancellation()
            log.add("C granted")
            await goC.wait()
            log.add("C releases")
            gate.release()
        }
        await Self.waitUntilQueued(3, on: gate)
        #expect(log.all.isEmpty, "nobody is granted while the test holds the gate")
        #expect(!gate.tryAcquire())

        // Step 1: the test releases; A, first in line, has it, and B and C still wait.
        gate.release()
        #expect(await Self.until { log.all.count == 1 })
        #expect(log.all == ["A granted"])
        #expect(gate.waitingCount == 2 && gate.isHeld && !gate.tryAcquire())

        // Step 2: A releases; B, next, has it.
        goA.open()
        try await a.value
        #expect(await Self.until { log.all.count == 3 })
        #expect(log.all == ["A granted", "A releases", "B granted"])
        #expect(gate.waitingCount == 1 && gate.isHeld && !gate.tryAcquire())

        // Step 3: B releases; C has it, and nobody waits.
        goB.signal()
        #expect(b.wait(timeout: .now() + 30) == .success)
        #expect(await Self.until { log.all.count == 5 })
        #expect(log.all == ["A granted", "A releases", "B granted", "B releases", "C granted"])
        #expect(gate.waitingCount == 0 && gate.isHeld && !gate.tryAcquire())

        // Step 4: C releases; the gate is free.
        goC.open()
        await c.value
        #expect(log.all.last == "C releases")
        #expect(!gate.isHeld)
        #expect(gate.tryAcquire(), "free again")
        gate.release()
    }

    // MARK: tryAcquire

    /// `tryAcquire` takes a free gate only: never a held one, and never one just released to
    /// a waiter that has not run yet (no barging past the queue).
    @Test func tryAcquireTakesOnlyAFreeGateAndNeverBargesPastTheQueue() async throws {
        let gate = AsyncGate()
        #expect(gate.tryAcquire())
        #expect(!gate.tryAcquire())
        gate.release()
        #expect(gate.tryAcquire(), "released with nobody waiting: free")

        let go = Latch()
        let granted = Shared()
        let waiter = Task {
            try await gate.acquire()
            granted.flag.store(true, ordering: .sequentiallyConsistent)
            await go.wait()
            gate.release()
        }
        await Self.waitUntilQueued(1, on: gate)
        gate.release()
        // Handed to the waiter at the release, whether or not it has run yet.
        #expect(!gate.tryAcquire(), "the gate went to the waiter, not to whoever asks next")
        #expect(gate.isHeld && gate.waitingCount == 0)
        let ran = await Self.until { granted.flag.load(ordering: .sequentiallyConsistent) }
        #expect(ran)
        #expect(!gate.tryAcquire())
        go.open()
        try await waiter.value
        #expect(gate.tryAcquire())
        gate.release()
    }

    // MARK: Cancellation

    /// Five tasks queue; the second and fourth are cancelled while the gate is held. They
    /// leave the queue at once (before anyone releases), throw `CancellationError`, and
    /// are never granted; the others are served in their order.
    @Test func aCancelledWaiterLeavesAtOnceAndNeverHoldsTheGate() async throws {
        let gate = AsyncGate()
        #expect(gate.tryAcquire())
        let log = Log(), gaveUp = Log()
        var waiters: [Task<Bool, Never>] = []
        for index in 0..<5 {
            waiters.append(
                Task {
                    do throws(CancellationError) {
                        try await gate.acquire()
                    } catch {
                        gaveUp.add("\(index)")
                        return false
                    }
                    log.add("\(index)")
                    gate.release()
                    return true
                })
            await Self.waitUntilQueued(index + 1, on: gate)
        }
        waiters[1].cancel()
        #expect(gate.waitingCount == 4, "the cancelled waiter left the queue as it was cancelled")
        waiters[3].cancel()
        #expect(gate.waitingCount == 3)
        // Both have returned while the gate is still held (not when their turn came).
        let returned = await Self.until(seconds: 10) { gaveUp.all.count == 2 }
        #expect(returned, "a cancelled waiter returns at once")
        #expect(gate.isHeld && log.all.isEmpty, "the holder keeps the gate")

        gate.release()
        for index in 0..<5 { #expect(await waiters[index].value == [0, 2, 4].contains(index)) }
        #expect(log.all == ["0", "2", "4"], "the others in their order, the cancelled never")
        #expect(!gate.isHeld && gate.waitingCount == 0)
    }

    /// A task already cancelled when it asks for a held gate throws at once and never
    /// queues (its cancellation handler ran before it could queue, and found nothing).
    @Test func aTaskCancelledBeforeItAsksNeverQueues() async throws {
        let gate = AsyncGate()
        #expect(gate.tryAcquire())
        let gaveUp = Log()
        let waiter = Task {
            while !Task.isCancelled { await Task.yield() }
            do throws(CancellationError) {
                try await gate.acquire()
            } catch {
                gaveUp.add("cancelled")
                return false
            }
            gate.release()
            return true
        }
        waiter.cancel()
        // A generous bound: under the whole suite's load the busy waiter above may wait
        // long for a thread of the cooperative pool (it passes at once when it can run).
        let returned = await Self.until(seconds: 60) { !gaveUp.all.isEmpty }
        #expect(returned, "it threw while the gate was still held")
        #expect(gate.waitingCount == 0 && gate.isHeld)
        gate.release()
        #expect(await waiter.value == false)
        #expect(!gate.isHeld)
    }

    /// A task that ignores cancellation keeps its place: cancelled while it waits, it still
    /// gets the gate in its turn.
    @Test func aWaiterThatIgnoresCancellationKeepsItsPlace() async throws {
        let gate = AsyncGate()
        #expect(gate.tryAcquire())
        let waiter = Task {
            await gate.acquireIgnoringCancellation()
            gate.release()
        }
        await Self.waitUntilQueued(1, on: gate)
        waiter.cancel()
        #expect(gate.waitingCount == 1, "still queued")
        gate.release()
        await waiter.value
        #expect(!gate.isHeld && gate.waitingCount == 0)
    }

    /// The race: in each round the test holds the gate while 24 tasks queue in a known
    /// order, then a third of them, chosen at random, are cancelled at random moments,
    /// either while the gate is still held or while it is released and passed along
    /// (each granted task holds it for a moment, sometimes across a suspension). After
    /// every round: no task was granted twice, the grants follow the queue's order, every
    /// task that was not cancelled got the gate exactly once, a cancelled task got it
    /// only if it returned holding it, and the gate is free with nobody waiting. In the
    /// rounds that cancel while the gate is held, the cancelled tasks have left the queue
    /// before the release. A leaked gate would leave the tasks behind it waiting: a
    /// watchdog then cancels them, and the round fails rather than hangs.
    @Test func cancellationsRacingReleasesNeverLoseAWaiterOrLeakTheGate() async throws {
        let rounds = Self.isLong ? 400 : 40
        let count = 24
        for round in 0..<rounds {
            var random = SplitMix64(seed: UInt64(round) &* 0x9E37_79B9)
            let gate = AsyncGate()
            #expect(gate.tryAcquire())
            let grants = Log()
            var waiters: [Task<Bool, Never>] = []
            for index in 0..<count {
                let holdAcrossSuspension = random.next() % 3 == 0
                waiters.append(
                    Task {
                        do throws(CancellationError) {
                            try await gate.acquire()
                        } catch {
                            return false
                        }
                        grants.add("\(index)")
                        if holdAcrossSuspension { await Task.yield() }
                        gate.release()
                        return true
                    })
                await Self.waitUntilQueued(index + 1, on: gate)
            }
            var chosen = Array(0..<count).filter { _ in random.next() % 3 == 0 }
            chosen.shuffle(using: &random)
            let yields = chosen.map { _ in Int(random.next() % 4) }
            let cancelWhileHeld = round % 2 == 0

            let race = Shared()
            let toCancel = chosen.map { waiters[$0] }
            let canceller = Task.detached {
                while !race.start.load(ordering: .acquiring) {}
                for (waiter, yieldCount) in zip(toCancel, yields) {
                    for _ in 0..<yieldCount { await Task.yield() }
                    waiter.cancel()
                }
            }
            if cancelWhileHeld {
                race.start.store(true, ordering: .releasing)
                await canceller.value
                #expect(
                    gate.waitingCount == count - chosen.count,
                    "round \(round): every cancelled waiter left the queue before the release")
                gate.release()
            } else {
                let releaser = Task.detached {
                    while !race.start.load(ordering: .acquiring) {}
                    gate.release()
                }
                race.start.store(true, ordering: .releasing)
                await canceller.value
                await releaser.value
            }
            // Only a hang guard, generous because a loaded machine running the stress suites
            // at once can keep these tasks off the cooperative pool for tens of seconds.
            let all = waiters
            let watchdog = Task.detached { () -> Bool in
                do {
                    try await Task.sleep(for: .seconds(300))
                } catch {
                    return false
                }
                for waiter in all { waiter.cancel() }
                return true
            }
            var outcomes: [Bool] = []
            for waiter in waiters { outcomes.append(await waiter.value) }
            watchdog.cancel()
            if await watchdog.value {
                Issue.record(
                    "round \(round): the waiters were still waiting after 300 s (a lost wake-up or a leaked gate)")
            }

            let granted = grants.all.map { Int($0)! }
            #expect(granted == granted.sorted() && Set(granted).count == granted.count, "round \(round): \(granted)")
            for index in 0..<count {
                let times = granted.filter { $0 == index }.count
                if !chosen.contains(index) {
                    #expect(
                        outcomes[index] && times == 1, "round \(round): waiter \(index) got the gate \(times) times")
                } else {
                    #expect(outcomes[index] == (times == 1), "round \(round): cancelled waiter \(index)")
                }
            }
            #expect(!gate.isHeld && gate.waitingCount == 0, "round \(round): the gate is free and nobody waits")
            #expect(gate.tryAcquire(), "round \(round): usable")
            gate.release()
        }
    }

    // MARK: Blocking

    /// A blocked thread whose deadline passes leaves the queue and returns false; the gate
    /// stays with its holder and is not handed to it later. A thread whose deadline is far
    /// gets the gate at the release.
    @Test func aBlockedWaiterLeavesAtItsDeadlineAndOtherwiseGetsTheGate() async throws {
        let gate = AsyncGate()
        #expect(gate.tryAcquire())
        let early = Shared()
        let done = Self.onThread {
            early.flag.store(gate.acquireBlocking(deadline: .now() + .milliseconds(20)), ordering: .releasing)
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        let tookIt = early.flag.load(ordering: .acquiring)
        #expect(!tookIt, "the deadline passed: no gate")
        #expect(gate.waitingCount == 0 && gate.isHeld, "it left the queue; the holder keeps the gate")
        gate.release()
        #expect(!gate.isHeld, "released to nobody")

        #expect(gate.tryAcquire())
        let late = Shared()
        let go = DispatchSemaphore(value: 0)
        let second = Self.onThread {
            // A deadline no run reaches: the test's own task may be starved for a minute on a
            // busy cooperative pool, and a passed deadline here would be a false failure.
            let took = gate.acquireBlocking(deadline: .now() + 3600)
            late.number.store(took ? 1 : 0, ordering: .releasing)
            go.wait()
            // Only a holder releases: on a starved machine the expectations below may fail,
            // and that must stay a failure, not a release of a free gate (which traps).
            if took { gate.release() }
        }
        await Self.waitUntilQueued(1, on: gate)
        gate.release()
        let returned = await Self.until { late.number.load(ordering: .acquiring) != -1 }
        let outcome = late.number.load(ordering: .acquiring)
        #expect(returned && outcome == 1 && gate.isHeld)
        go.signal()
        #expect(second.wait(timeout: .now() + 30) == .success)
        #expect(!gate.isHeld)
    }

    /// The race of a deadline with a grant, made to happen: the gate's test hook releases
    /// it (handing it to the blocked thread, still first in line) just after the thread's
    /// deadline passed, before it leaves the queue. The thread must take the gate it was
    /// handed (return true) and release it, leaving the gate free; giving up instead would
    /// leak it.
    @Test func aGrantThatRacesTheDeadlineIsTakenNotLeaked() async throws {
        final class Holder: Sendable {
            let gate = Mutex<AsyncGate?>(nil)
            let hookRan = Atomic<Bool>(false)
        }
        let holder = Holder()
        let gate = AsyncGate(deadlinePassed: {
            holder.hookRan.store(true, ordering: .sequentiallyConsistent)
            holder.gate.withLock { $0 }?.release()  // the test's hold, released on its behalf
        })
        holder.gate.withLock { $0 = gate }
        #expect(gate.tryAcquire())
        let outcome = Shared()
        let waiter = Self.onThread {
            let took = gate.acquireBlocking(deadline: .now() + .milliseconds(5))
            outcome.number.store(took ? 1 : 0, ordering: .releasing)
            if took { gate.release() }
        }
        #expect(waiter.wait(timeout: .now() + 30) == .success)
        let hookRan = holder.hookRan.load(ordering: .sequentiallyConsistent)
        let took = outcome.number.load(ordering: .acquiring)
        #expect(hookRan && took == 1, "handed the gate as its deadline passed, it takes it")
        #expect(!gate.isHeld && gate.waitingCount == 0, "and the gate is free afterwards")
        holder.gate.withLock { $0 = nil }
    }

    /// A deadline that races the release never leaks the gate: whether the thread got it
    /// (and released it) or gave up, afterwards the gate is free and nobody waits.
    @Test func aDeadlineRacingAReleaseNeverLeaksTheGate() async throws {
        let rounds = Self.isLong ? 2_000 : 200
        var outcomes: [Bool: Int] = [:]
        for round in 0..<rounds {
            let gate = AsyncGate()
            #expect(gate.tryAcquire())
            let race = Shared()
            // Varied on both sides, so that the release lands before the thread queues,
            // while it waits, and as its deadline passes.
            let wait = Double(round % 5) * 0.000_2
            let spins = (round / 5) % 7 * 200
            let waiter = Self.onThread {
                while !race.start.load(ordering: .acquiring) {}
                if gate.acquireBlocking(deadline: .now() + wait) {
                    race.flag.store(true, ordering: .releasing)
                    gate.release()
                }
            }
            race.start.store(true, ordering: .releasing)
            var spun = 0
            while spun < spins { spun += Int.random(in: 1...2) }
            gate.release()
            #expect(waiter.wait(timeout: .now() + 30) == .success)
            outcomes[race.flag.load(ordering: .acquiring), default: 0] += 1
            #expect(!gate.isHeld && gate.waitingCount == 0, "round \(round): the gate is free")
        }
        #expect(outcomes.values.reduce(0, +) == rounds)
    }

    /// One holder at a time across tasks and blocked threads: 4 tasks and 2 threads each
    /// take the gate 200 times, recording entry and exit; the records never overlap and
    /// every acquisition completes (a lost wake-up would hang, a double grant overlap).
    @Test func oneHolderAtATimeAcrossTasksAndThreads() async throws {
        let gate = AsyncGate()
        let tally = Shared()
        let threads = (0..<2).map { _ in
            Self.onThread {
                for _ in 0..<200 {
                    gate.acquireBlocking()
                    tally.enter()
                    tally.leave(gate)
                }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    for round in 0..<200 {
                        if task % 2 == 0 { try await gate.acquire() } else { await gate.acquireIgnoringCancellation() }
                        tally.enter()
                        if round % 7 == 0 { await Task.yield() }  // hold it across a suspension
                        tally.leave(gate)
                    }
                }
            }
            try await group.waitForAll()
        }
        for thread in threads { #expect(thread.wait(timeout: .now() + 60) == .success) }
        let overlaps = tally.overlaps.load(ordering: .relaxed)
        let completed = tally.completed.load(ordering: .relaxed)
        #expect(overlaps == 0)
        #expect(completed == 1_200)
        #expect(!gate.isHeld && gate.waitingCount == 0)
    }
}
