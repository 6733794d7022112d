#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import Synchronization

// Watching a store's root file for a writer's commits: inotify on Linux, a dispatch source
// on Apple platforms; what a read-only store's follower waits on (Store+Following).
extension POSIXFileSystem {
    /// Notification where the platform has it: inotify on Linux (creations, renames and
    /// writes in the directory, in-place root slot writes included), a dispatch file-system
    /// source on Apple platforms (writes to the directory, which renames are, and to its
    /// root file, whose slots are written in place). Both are backed by polling every second, for file
    /// systems that do not notify (network mounts) or a notification lost to a full queue;
    /// if notification cannot be set up at all, polling runs at `pollInterval`.
    public func watch(
        _ directory: String, pollInterval: Duration,
        onChange: @escaping @Sendable () -> Void
    ) throws(StorageError) -> any FileWatch {
        let safety = PollingWatch(interval: max(pollInterval, .seconds(1)), onChange: onChange)
        #if canImport(Glibc) || canImport(Musl)
        if let notifying = InotifyWatch(directory: directory, onChange: onChange) {
            return CombinedWatch([notifying, safety])
        }
        #elseif canImport(Darwin)
        if let notifying = DispatchSourceWatch(directory: directory, onChange: onChange) {
            return CombinedWatch([notifying, safety])
        }
        #endif
        safety.cancel()
        return PollingWatch(interval: pollInterval, onChange: onChange)
    }
}

/// Several watches cancelled together; pausing pauses those that can be (the notifying
/// one, not the safety poll, whose one look a second costs nothing).
final class CombinedWatch: PausableWatch {
    private let watches: [any FileWatch]
    // Found once: a cast to a protocol looks up conformances each time, and pausing and
    // resuming happen at every turn.
    private let pausable: [any PausableWatch]
    init(_ watches: [any FileWatch]) {
        self.watches = watches
        pausable = watches.compactMap { $0 as? any PausableWatch }
    }
    func cancel() { for watch in watches { watch.cancel() } }
    func pause() {
        for watch in pausable { watch.pause() }
    }
    func resume(reportingMissed: Bool) {
        for watch in pausable { watch.resume(reportingMissed: reportingMissed) }
    }
    func discardPending() {
        for watch in pausable { watch.discardPending() }
    }
}

/// Suspension of a dispatch source, kept balanced: a source must be resumed before it is
/// cancelled and released, and never resumed more often than suspended. How the Apple
/// platforms' watch pauses (built everywhere, so that it is compiled).
final class SourceSuspension: Sendable {
    private struct State {
        var paused = false
        var cancelled = false
    }
    private let state = Mutex(State())

    /// Suspends or resumes `sources` when `paused` differs from their state.
    func set(_ paused: Bool, _ sources: [any DispatchSourceProtocol]) {
        state.withLock { state in
            guard !state.cancelled, state.paused != paused else { return }
            state.paused = paused
            for source in sources {
                if paused { source.suspend() } else { source.resume() }
            }
        }
    }

    /// Cancels `sources`, then resumes those that are suspended (a suspended source must
    /// be resumed before it is released). Cancelled first, so that an event queued while
    /// paused is not handled during the close: a cancelled source delivers no more events,
    /// only its cancel handler.
    func cancel(_ sources: [any DispatchSourceProtocol]) {
        state.withLock { state in
            guard !state.cancelled else { return }
            state.cancelled = true
            for source in sources {
                source.cancel()
                if state.paused { source.resume() }
            }
        }
    }
}

#if canImport(Glibc) || canImport(Musl)
/// inotify on a directory, read by a dispatch read source.
///
/// Paused, the watch narrows its mask to the directory's own removal instead of suspending
/// the source: the kernel then queues nothing for the writes of a turn, so a paused watch
/// costs no wake-up at all, where a suspended source is still armed by the first event and
/// re-armed at its resume (two `epoll` calls, a `read` and a thread hand-off per turn).
/// What the narrowed mask does not queue is reported on resume when the caller asks.
// @unchecked Sendable: see PollingWatch.
final class InotifyWatch: PausableWatch, @unchecked Sendable {
    private struct State {
        var paused = false
        var cancelled = false
    }
    private let source: any DispatchSourceRead
    private let queue: DispatchQueue
    private let state = Mutex(State())
    private let fd: Int32
    private let directory: String
    private let onChange: @Sendable () -> Void

    // IN_MODIFY: format version 2 writes root slots in place, with no close or rename.
    private static let reporting = UInt32(IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE | IN_DELETE | IN_MODIFY)
    // Paused: only the directory's own removal, which no turn causes.
    private static let quiet = UInt32(IN_DELETE_SELF)

    init?(directory: String, onChange: @escaping @Sendable () -> Void) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        self.fd = fd
        self.directory = directory
        self.onChange = onChange
        guard inotify_add_watch(fd, directory, Self.reporting) >= 0 else {
            close(fd)
            return nil
        }
        queue = DispatchQueue(label: "folio.inotify")
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler {
            // Drain the queue of events; which ones arrived does not matter: the caller
            // rereads the root file.
            if Self.drain(fd) { onChange() }
        }
        source.setCancelHandler { close(fd) }
        source.resume()
    }

    deinit { cancel() }

    // The descriptor is closed by the cancel handler, which runs only after `cancelled`
    // was set under `state`: every other use of it checks `cancelled` under `state` first.
    func cancel() {
        state.withLock { state in
            guard !state.cancelled else { return }
            state.cancelled = true
            source.cancel()
        }
    }

    func pause() {
        state.withLock { state in
            guard !state.cancelled, !state.paused else { return }
            state.paused = true
            // Same path, so the same watch: only its mask changes (no IN_IGNORED is queued).
            _ = inotify_add_watch(fd, directory, Self.quiet)
        }
    }

    func resume(reportingMissed: Bool) {
        let report = state.withLock { state -> Bool in
            guard !state.cancelled, state.paused else { return false }
            state.paused = false
            // A mask that cannot be restored (the directory gone, or the kernel out of
            // memory) leaves the watch narrowed: a report now, and the safety poll after.
            let restored = inotify_add_watch(fd, directory, Self.reporting) >= 0
            return reportingMissed || !restored
        }
        // Asynchronously, as the source reports: the caller may hold the store's state.
        if report { queue.async { [onChange] in onChange() } }
    }

    func discardPending() {
        state.withLock { state in if !state.cancelled { _ = Self.drain(fd) } }
    }

    /// Reads every queued event (the descriptor does not block); returns whether there was
    /// any.
    private static func drain(_ fd: Int32) -> Bool {
        // On the stack and not zero-filled: every turn's end drains, and mostly finds nothing.
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 8) { buffer in
            var any = false
            while read(fd, buffer.baseAddress, buffer.count) > 0 { any = true }
            return any
        }
    }
}
#endif

#if canImport(Darwin)
/// Dispatch file-system object sources on a directory and on its root file (whose slots
/// format version 2 writes in place, which the directory's source does not report).
// @unchecked Sendable: see PollingWatch.
final class DispatchSourceWatch: PausableWatch, @unchecked Sendable {
    private var sources: [any DispatchSourceFileSystemObject] = []
    private let suspension = SourceSuspension()

    init?(directory: String, onChange: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "folio.watch")
        for (path, required) in [(directory, true), (StoragePath.join(directory, "root"), false)] {
            let fd = open(path, O_EVTONLY)
            guard fd >= 0 else {
                if required { return nil }
                continue
            }
            let source = DispatchSource.makeFileSystemObjectSource(
                fileDescriptor: fd, eventMask: [.write, .rename, .delete],
                queue: queue)
            source.setEventHandler(handler: onChange)
            source.setCancelHandler { close(fd) }
            source.resume()
            sources.append(source)
        }
    }

    deinit { cancel() }

    func cancel() { suspension.cancel(sources) }

    func pause() { suspension.set(true, sources) }

    // A suspended source keeps what came meanwhile and delivers it on resume, so nothing
    // is missed whatever the caller asks.
    func resume(reportingMissed: Bool) { suspension.set(false, sources) }

    // A vnode source keeps no queue to drop: a notification that came during a turn is
    // delivered once the watch resumes, and finds the slots known.
    func discardPending() {}
}
#endif
