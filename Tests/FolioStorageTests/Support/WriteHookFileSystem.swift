import FolioStorage
import FolioTestSupport
import Synchronization

/// A file system that forwards every call to another one and calls `hook` with the path
/// before each write to a file: where a timeline test acts while a compaction is between
/// two of its writes (committing on the same thread, or blocking the writer's thread).
final class WriteHookFileSystem: ForwardingFileSystem {
    let wrapped: any FileSystem
    let hook: Mutex<(@Sendable (String) -> Void)?>

    init(wrapping fileSystem: any FileSystem) {
        wrapped = fileSystem
        hook = Mutex(nil)
    }

    func setHook(_ body: (@Sendable (String) -> Void)?) { hook.withLock { $0 = body } }

    func open(_ path: String, mode: FileOpenMode) throws(StorageError) -> any StorageFile {
        HookedFile(wrapping: try wrapped.open(path, mode: mode), owner: self)
    }
}

private final class HookedFile: StorageFile {
    private let wrapped: any StorageFile
    private let owner: WriteHookFileSystem

    init(wrapping file: any StorageFile, owner: WriteHookFileSystem) {
        wrapped = file
        self.owner = owner
    }

    var path: String { wrapped.path }

    func read(at offset: UInt64, count: Int) throws(StorageError) -> [UInt8] {
        try wrapped.read(at: offset, count: count)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        owner.hook.withLock { $0 }?(path)
        try wrapped.write(bytes, at: offset)
    }

    func sync() throws(StorageError) { try wrapped.sync() }
    func syncData() throws(StorageError) { try wrapped.syncData() }
    func truncate(to length: UInt64) throws(StorageError) { try wrapped.truncate(to: length) }
    func size() throws(StorageError) -> UInt64 { try wrapped.size() }
    func identity() throws(StorageError) -> FileIdentity { try wrapped.identity() }
    func close() { wrapped.close() }
}
