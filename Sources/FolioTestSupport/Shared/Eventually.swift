/// How long a test waits for something that must happen by itself (a follower's catch-up,
/// an observer's delivery, a queued commit) before it calls the wait a hang.
///
/// The bound is a hang guard, not a performance claim: a waiting test resumes on Swift's
/// cooperative pool, which has one thread per core (two on CI), and the tests that block
/// those threads (child processes, blocking gates, CPU-bound models) can hold the waiting
/// test off for tens of seconds without anything being wrong. A wait that succeeds returns
/// as soon as its condition holds, so a long bound costs a passing run nothing.
public let hangGuard: Duration = .seconds(300)

/// Polls `condition` every `interval` until it holds or `hangGuard` passes; returns whether
/// it held. The condition is checked once more after the deadline, so a poller starved past
/// the deadline still sees what happened meanwhile.
public func eventually(
    every interval: Duration = .milliseconds(1), _ condition: () throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + hangGuard
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try condition()
}
