import Synchronization

/// The stores this process has open for writing, by the identity of their lock file.
///
/// flock locks belong to open file descriptions, so a second open of the same store in one
/// process would conflict with the first and look like "another writer". Checking this
/// registry first turns that into the precise error, and refuses the second writer even on
/// file systems where the lock would not conflict.
enum WriterRegistry {
    private static let open = Mutex<Set<FileIdentity>>([])

    /// Registers the identity of the lock file at `lockPath` (which must exist) before the
    /// caller takes the lock, which may take a while (``WriterLock``): throws
    /// `alreadyOpenInThisProcess` if this process has the store open for writing. The
    /// caller unregisters it if it then fails to take the lock.
    static func reserve(lockPath: String, fileSystem: any FileSystem) throws(StorageError) -> FileIdentity {
        let identity = try fileSystem.identity(of: lockPath)
        try open.withLock { (set) throws(StorageError) in
            if set.contains(identity) { throw .alreadyOpenInThisProcess(path: StoragePath.parent(of: lockPath)) }
            set.insert(identity)
        }
        return identity
    }

    static func unregister(_ identity: FileIdentity) {
        _ = open.withLock { $0.remove(identity) }
    }
}
