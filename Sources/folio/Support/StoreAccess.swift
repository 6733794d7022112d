import Folio
import FolioStorage

/// How commands open stores: read-only (no lock, nothing written) unless they must write.
enum StoreAccess {
    /// Opens `path` for reading only: works beside a writer in another process and on a
    /// read-only volume. Never creates anything.
    static func openForReading(_ path: String) throws(StorageError) -> Store {
        try Store.openReadOnly(at: path, options: StoreOptions(createIfMissing: false, autoCompaction: nil))
    }

    /// Opens `path` for writing, which takes the store's write lock, waiting up to
    /// `seconds` while another process holds it; never creates a store. A lock still held
    /// then is a one-line failure naming the lock file.
    static func openForWriting(_ path: String, purpose: String, waiting seconds: Int = 0) throws -> Store {
        var options = StoreOptions(createIfMissing: false, autoCompaction: nil)
        options.busyTimeout = .seconds(seconds)
        return try whileUnlocked(path, purpose: purpose, waiting: seconds) { () throws(StorageError) in
            try Store.open(at: path, options: options)
        }
    }

    /// Runs `body`, which takes the store's lock (an open for writing, a compaction's
    /// turn): another process in the middle of a write becomes the command's "locked"
    /// failure (exit 4), naming the lock file and what to do.
    static func whileUnlocked<Result>(
        _ path: String, purpose: String, waiting seconds: Int, _ body: () throws(StorageError) -> Result
    ) throws -> Result {
        do {
            return try body()
        } catch .lockedByAnotherWriter(let lock) {
            let waited = seconds > 0 ? " after waiting \(seconds) s" : ""
            throw CommandFailure(
                "cannot \(purpose) \(path): the store is locked by another writer (\(lock) is held)\(waited); "
                    + "try again once that process's write has ended, or wait for it with --wait SECONDS",
                status: .locked)
        }
    }
}
