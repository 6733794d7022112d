import FolioStorage

/// A file system that wraps another and forwards every call it does not make its own: a
/// test's file system then writes only what it changes (most often `open`, to wrap the
/// handles it returns), not a dozen forwarding lines. `watch` is not forwarded: a wrapper
/// gets ``FileSystem``'s own default, as it did when it wrote the forwarding itself.
public protocol ForwardingFileSystem: FileSystem {
    /// The file system calls are forwarded to.
    var wrapped: any FileSystem { get }
}

extension ForwardingFileSystem {
    /// Forwards.
    public func rename(_ source: String, to destination: String) throws(StorageError) {
        try wrapped.rename(source, to: destination)
    }

    /// Forwards.
    public func remove(_ path: String) throws(StorageError) { try wrapped.remove(path) }

    /// Forwards.
    public func syncDirectory(_ path: String) throws(StorageError) { try wrapped.syncDirectory(path) }

    /// Forwards.
    public func createDirectory(_ path: String) throws(StorageError) { try wrapped.createDirectory(path) }

    /// Forwards.
    public func contentsOfDirectory(_ path: String) throws(StorageError) -> [String] {
        try wrapped.contentsOfDirectory(path)
    }

    /// Forwards.
    public func itemKind(at path: String) -> FileItemKind? { wrapped.itemKind(at: path) }

    /// Forwards.
    public func openLockFile(_ path: String) throws(StorageError) -> any LockFile { try wrapped.openLockFile(path) }

    /// Forwards.
    public func lock(_ path: String) throws(StorageError) -> any FileLock { try wrapped.lock(path) }

    /// Forwards.
    public func identity(of path: String) throws(StorageError) -> FileIdentity { try wrapped.identity(of: path) }
}
