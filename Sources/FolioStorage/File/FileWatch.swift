import Dispatch

/// A running watch on a directory (``FileSystem/watch(_:pollInterval:onChange:)``).
public protocol FileWatch: AnyObject, Sendable {
    /// Stops the watch. Cancelling twice is harmless.
    func cancel()
}

/// A watch whose notifications can be held back for a while: paused, it need not report
/// changes; resumed, it reports later changes again, and once a change that came meanwhile
/// when asked to. For a writer that has no use for them during its turn or while it waits
/// for one (Store+Following.swift).
protocol PausableWatch: FileWatch {
    /// Pauses the watch. Pausing a paused watch, or any call after ``FileWatch/cancel()``,
    /// does nothing.
    func pause()

    /// Resumes a paused watch (does nothing otherwise). `reportingMissed`: whether the
    /// caller may have missed changes that came while it was paused and needs them reported
    /// once; `false` when it accounted for them itself (a turn's catch-up did).
    func resume(reportingMissed: Bool)

    /// Drops the notifications that came so far and were not yet delivered, if the watch
    /// can tell them apart from later ones (inotify's queue); does nothing otherwise.
    func discardPending()
}

extension FileSystem {
    /// Polling, for file systems with no change notification (and for tests): calls
    /// `onChange` every `pollInterval`, and lets the caller find out what changed.
    public func watch(
        _ directory: String, pollInterval: Duration,
        onChange: @escaping @Sendable () -> Void
    ) throws(StorageError) -> any FileWatch {
        PollingWatch(interval: pollInterval, onChange: onChange)
    }
}

/// Calls a closure at a fixed interval on a background queue until cancelled.
// @unchecked Sendable: dispatch sources are thread-safe (cancel may be called from any thread);
// Dispatch just does not annotate them.
final class PollingWatch: FileWatch, @unchecked Sendable {
    private let timer: any DispatchSourceTimer

    init(interval: Duration, onChange: @escaping @Sendable () -> Void) {
        let nanoseconds = max(
            1_000_000,
            Int(interval.components.seconds) * 1_000_000_000
                + Int(interval.components.attoseconds / 1_000_000_000))
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "folio.poll"))
        timer.schedule(
            deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
            leeway: .nanoseconds(nanoseconds / 10))
        timer.setEventHandler(handler: onChange)
        timer.resume()
    }

    deinit { cancel() }

    func cancel() { timer.cancel() }
}
