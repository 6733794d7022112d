import Dispatch
import FolioStorage
import Synchronization

/// A file system that forwards every call to another one, but holds one chosen sync until
/// the test lets it go: for timelines in which something must happen while a sync is in
/// flight (a commit appended, another thread waiting for the root file lock).
///
/// Syncs (`sync()` and `syncData()` of any handle it returned, on a path `paths` accepts)
/// are forwarded at once, except the first to start after ``holdNextSync()``: it signals
/// ``waitUntilBlocked()`` and then waits for ``release()`` before it is forwarded. Put it
/// under a ``FaultInjectingFileSystem`` or a ``RecordingFileSystem`` to fail or count the
/// syncs as well.
public final class BlockingSyncFileSystem: ForwardingFileSystem {
    /// The file system every call is forwarded to.
    public let wrapped: any FileSystem
    let gate: SyncGate

    /// Wraps `fileSystem`; only syncs of paths `paths` accepts (every path by default) are
    /// counted and can be held. `syncStarted` is called with the path of each of those syncs
    /// as it starts, on the thread that runs it, before it is held (for tests of where a
    /// sync runs).
    public init(
        wrapping fileSystem: any FileSystem, paths: @escaping @Sendable (String) -> Bool = { _ in true },
        syncStarted: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        wrapped = fileSystem
        gate = SyncGate(paths: paths, started: syncStarted)
    }

    /// Holds the next sync that starts (on an accepted path) until ``release()``.
    public func holdNextSync() { gate.count.withLock { $0.held = $0.started + 1 } }

    /// Returns once the held sync has started and is being held.
    public func waitUntilBlocked() { gate.blocked.wait() }

    /// Lets the held sync go on (or, if it has not started yet, lets it pass when it does).
    public func release() { gate.released.signal() }

    /// Syncs started so far on accepted paths.
    public var syncCount: Int { gate.count.withLock { $0.started } }

    /// Forwards the open; the returned handle passes its syncs through the gate.
    public func open(_ path: String, mode: FileOpenMode) throws(StorageError) -> any StorageFile {
        GatedFile(wrapping: try wrapped.open(path, mode: mode), gate: gate)
    }
}

/// The numbering of syncs and the hold on the chosen one, shared by the file system and its
/// handles.
final class SyncGate: Sendable {
    struct Count {
        /// Syncs started so far.
        var started = 0
        /// The number of the sync to hold, if any.
        var held: Int?
    }

    let paths: @Sendable (String) -> Bool
    let started: @Sendable (String) -> Void
    let count = Mutex(Count())
    let blocked = DispatchSemaphore(value: 0)
    let released = DispatchSemaphore(value: 0)

    init(paths: @escaping @Sendable (String) -> Bool, started: @escaping @Sendable (String) -> Void) {
        self.paths = paths
        self.started = started
    }

    /// Numbers a sync of `path` and, if it is the one to hold, holds it until released.
    func pass(_ path: String) {
        guard paths(path) else { return }
        started(path)
        let holds = count.withLock { count -> Bool in
            count.started += 1
            return count.started == count.held
        }
        guard holds else { return }
        blocked.signal()
        released.wait()
    }
}

/// A handle of ``BlockingSyncFileSystem``: forwards everything, its syncs through the gate.
final class GatedFile: StorageFile {
    private let wrapped: any StorageFile
    private let gate: SyncGate

    init(wrapping file: any StorageFile, gate: SyncGate) {
        wrapped = file
        self.gate = gate
    }

    var path: String { wrapped.path }

    func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
        try wrapped.read(at: offset, count: count)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        try wrapped.write(bytes, at: offset)
    }

    func sync() throws(StorageError) {
        gate.pass(path)
        try wrapped.sync()
    }

    func syncData() throws(StorageError) {
        gate.pass(path)
        try wrapped.syncData()
    }

    func truncate(to length: UInt64) throws(StorageError) { try wrapped.truncate(to: length) }

    func size() throws(StorageError) -> UInt64 { try wrapped.size() }

    func identity() throws(StorageError) -> FileIdentity { try wrapped.identity() }

    func close() { wrapped.close() }
}
