import Folio
import FolioStorage

/// How commands open stores: read-only (no lock, nothing written) unless they must write.
enum StoreAccess {
    /// Opens `path` for reading only: works beside a writer in another process and on a
    /// read-only volume. Never creates anything.
    static func openForReading(_ path: String) throws(StorageError) -> Store {
        try Store.openReadOnly(at: path, options: StoreOptions(createIfMissing: false, autoCompaction: nil))
    }

    /// Opens `path` for writing, which takes the store's write lock; never creates a store.
    /// A lock held by another process is a one-line failure naming the lock file.
    static func openForWriting(_ path: String, purpose: String) throws -> Store {
        do {
            return try Store.open(at: path, options: StoreOptions(createIfMissing: false, autoCompaction: nil))
        } catch .lockedByAnotherWriter(let lock) {
            throw CommandFailure(
                "cannot \(purpose) \(path): the store is locked by another writer (\(lock) is held); "
                    + "try again once that process has closed it", status: .locked)
        }
    }
}
