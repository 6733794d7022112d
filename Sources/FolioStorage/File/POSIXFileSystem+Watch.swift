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
    init(_ watches: [any FileWatch]) { self.watches = watches }
    func cancel() { for watch in watches { watch.cancel() } }
    func setPaused(_ paused: Bool) {
        for case let watch as any PausableWatch in watches { watch.setPaused(paused) }
    }
    func discardPending() {
        for case let watch as any PausableWatch in watches { watch.discardPending() }
    }
}

/// Suspension of a dispatch source, kept balanced: a source must be resumed before it is
/// cancelled and released, and never resumed more often than suspended.
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

    /// Runs `body` unless the sources were cancelled, which it keeps from happening
    /// meanwhile (so a descriptor their cancel handler closes is still open in `body`).
    func unlessCancelled(_ body: () -> Void) {
        state.withLock { state in if !state.cancelled { body() } }
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
// @unchecked Sendable: see PollingWatch.
final class InotifyWatch: PausableWatch, @unchecked Sendable {
    private let source: any DispatchSourceRead
    private let suspension = SourceSuspension()
    private let fd: Int32

    init?(directory: String, onChange: @escaping @Sendable () -> Void) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        self.fd = fd
        // IN_MODIFY: format version 2 writes root slots in place, with no close or rename.
        let mask = UInt32(IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE | IN_DELETE | IN_MODIFY)
        guard inotify_add_watch(fd, directory, mask) >= 0 else {
            close(fd)
            return nil
        }
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: DispatchQueue(label: "folio.inotify"))
        source.setEventHandler {
            // Drain the queue of events; which ones arrived does not matter: the caller
            // rereads the root file.
            if Self.drain(fd) { onChange() }
        }
        source.setCancelHandler { close(fd) }
        source.resume()
    }

    deinit { cancel() }

    func cancel() { suspension.cancel([source]) }

    // Paused, the source delivers nothing: the kernel keeps queueing inotify events, and the
    // first one arms the source once, so a paused watch costs at most one wake-up of the
    // dispatch thread; resumed, the handler runs once for everything queued meanwhile.
    func setPaused(_ paused: Bool) { suspension.set(paused, [source]) }

    func discardPending() {
        suspension.unlessCancelled { _ = Self.drain(fd) }
    }

    /// Reads every queued event (the descriptor does not block); returns whether there was
    /// any.
    private static func drain(_ fd: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var any = false
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return any }
            any = true
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

    func setPaused(_ paused: Bool) { suspension.set(paused, sources) }

    // A vnode source keeps no queue to drop: a notification that came during a turn is
    // delivered once the watch resumes, and finds the slots known.
    func discardPending() {}
}
#endif
