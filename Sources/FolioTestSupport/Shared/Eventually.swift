import Foundation

/// How long a test waits for something that must happen by itself (a follower's catch-up,
/// an observer's delivery, a queued commit) before it calls the wait a hang.
///
/// The bound is a hang guard, not a performance claim: a waiting test resumes on Swift's
/// cooperative pool, which has one thread per core (two on CI), and the tests that block
/// those threads (child processes, blocking gates, CPU-bound models) can hold the waiting
/// test off for tens of seconds without anything being wrong. A wait that succeeds returns
/// as soon as its condition holds, so a long bound costs a passing run nothing.
public let hangGuard: Duration = .seconds(300)

/// The hang guard of one polling wait: it expires once `bound` has passed AND the waiter
/// has looked ``lateLooks`` more times since.
///
/// Time alone cannot call a wait a hang. Swift Testing starts every test of the process at
/// once, so the cooperative pool's queue holds the first job of every test not yet run, and
/// a synchronous test runs whole inside its job. A waiter that sleeps between looks is
/// queued behind all of that: on a busy machine it was seen to wait more than 300 seconds
/// for its next look, and so did the tasks it waited for (an observer's iteration). The
/// queue is first in, first out: each later look of the waiter comes after every job queued
/// before it, so the work it waits for has had that many turns too. Only a condition still
/// false after those looks is a hang.
public struct HangGuard: Sendable {
    /// Looks after the bound before the wait is called a hang.
    public static let lateLooks = 20

    private let deadline: ContinuousClock.Instant
    private var looksPastDeadline = 0

    /// A guard that starts now and expires `bound` later at the earliest.
    public init(_ bound: Duration = hangGuard) {
        deadline = ContinuousClock.now + bound
    }

    /// Whether the wait is a hang; call once per look, after the condition was false.
    public mutating func expired() -> Bool {
        guard ContinuousClock.now >= deadline else { return false }
        looksPastDeadline += 1
        return looksPastDeadline > Self.lateLooks
    }
}

/// Polls `condition` every `interval` until it holds or the wait's ``HangGuard`` (`bound`,
/// then ``HangGuard/lateLooks`` more looks) expires; returns whether it held.
public func eventually(
    every interval: Duration = .milliseconds(1), within bound: Duration = hangGuard,
    _ condition: () throws -> Bool
) async rethrows -> Bool {
    var guardian = HangGuard(bound)
    while true {
        if try condition() { return true }
        if guardian.expired() { return false }
        try? await Task.sleep(for: interval)
    }
}

/// ``eventually(every:within:_:)`` on the calling thread, sleeping it between looks: for a
/// synchronous timeline, which holds its thread and so is never kept from looking by a
/// cooperative pool busy with other tests.
public func eventuallyOnThisThread(
    every interval: Duration = .milliseconds(1), within bound: Duration = hangGuard,
    _ condition: () throws -> Bool
) rethrows -> Bool {
    var guardian = HangGuard(bound)
    while true {
        if try condition() { return true }
        if guardian.expired() { return false }
        Thread.sleep(
            forTimeInterval: Double(interval.components.attoseconds) / 1e18 + Double(interval.components.seconds))
    }
}

/// Runs `action` once a wait has hung, unless cancelled first: after `bound` and then
/// ``HangGuard/lateLooks`` more looks, one every `interval`, on the cooperative pool (or on
/// `executor`, the pool a test of the watchdog itself holds).
///
/// For a timeline whose steps are opened by latches or semaphores rather than polled: the
/// watchdog opens them, so that a hang fails the test's expectations instead of blocking
/// the suite. Its looks queue on the pool behind the same work as the tasks it guards, so a
/// starved pool (the whole suite running at once) delays both alike; a watchdog that slept
/// a fixed time on its own was seen to fire while the guarded steps had not yet had a turn.
/// Cancel the returned task once the timeline has ended.
///
/// ```swift
/// let watchdog = hangWatchdog { released.open() }
/// defer { watchdog.cancel() }
/// ```
@discardableResult
public func hangWatchdog(
    after bound: Duration = hangGuard, every interval: Duration = .seconds(1), on executor: (any TaskExecutor)? = nil,
    _ action: @escaping @Sendable () -> Void
) -> Task<Void, Never> {
    Task(executorPreference: executor) {
        var guardian = HangGuard(bound)
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            if Task.isCancelled { return }
            if guardian.expired() {
                action()
                return
            }
        }
    }
}
