import Synchronization

/// The stores this process has open for writing, by the identity of their lock file.
///
/// flock locks belong to open file descriptions, so a second open of the same store in one
/// process would conflict with the first and look like "another writer". Checking this
/// registry first turns that into the precise error, and refuses the second writer even on
/// file systems where the lock would not conflict.
enum WriterRegistry {
    private static let open = Mutex<Set<FileIdentity>>([])

    /// Runs `body` (which takes the lock) while no other thread can register, then
    /// registers the identity it returns. Throws if the identity is already registered.
    static func register(
        lockPath: String, fileSystem: any FileSystem,
        _ body: () throws(StorageError) -> (any FileLock)
    ) throws(StorageError) -> (any FileLock, FileIdentity) {
        try open.withLock { (set) throws(StorageError) -> (any FileLock, FileIdentity) in
            if let existing = try? fileSystem.identity(of: lockPath), set.contains(existing) {
                throw .alreadyOpenInThisProcess(path: StoragePath.parent(of: lockPath))
            }
            let lock = try body()
            let identity = try fileSystem.identity(of: lockPath)
            set.insert(identity)
            return (lock, identity)
        }
    }

    static func unregister(_ identity: FileIdentity) {
        _ = open.withLock { $0.remove(identity) }
    }
}
