/// Every error the storage engine throws.
///
/// Each case says what happened and where, so that a message reaching a log or a user
/// is enough to act on: corruption names the file, the byte offset and what was expected;
/// an I/O failure names the operation, the path and the system error.
public enum StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Bytes on disk do not match what the format requires (bad checksum, impossible length,
    /// unknown page kind, a page found at an offset it was not written for).
    case corruption(Corruption)
    /// Another writer (in this or another process) holds the store's write lock.
    case lockedByAnotherWriter(path: String)
    /// This process already has the store open for writing; open it once and share the handle.
    case alreadyOpenInThisProcess(path: String)
    /// No store exists at the path (and the caller asked not to create one).
    case storeNotFound(path: String)
    /// The directory exists and holds files, but not a Folio store.
    case notAStore(path: String, reason: String)
    /// The store was written by a newer (or unknown) format version than this engine reads.
    case unsupportedFormatVersion(path: String, found: UInt32, supported: UInt32)
    /// A system call failed; `operation` is the seam operation, `code` the `errno` value.
    case io(operation: String, path: String, code: Int32)
    /// A write or sync failed and the store can no longer commit safely (an fsync failure
    /// poisons the file handle: the kernel may have dropped the unsynced pages). Reads of
    /// committed data still work; reopen the store to write again.
    case needsReopen(path: String, cause: String)
    /// A write was attempted through a read-only store.
    case readOnly(path: String)
    /// The store could not be opened for writing because this process may not write it
    /// (permission denied, or a read-only volume). It can still be opened read-only.
    case notWritable(path: String, cause: String)
    /// The store is in exclusive use: a write transaction was begun while a compaction
    /// runs, or a compaction was asked for while a write transaction is active. The engine
    /// never blocks; the `Folio` layer queues them.
    case writeTransactionInProgress
    /// A commit since this write transaction began changed trees it read or wrote (named,
    /// in name order; empty when another transaction holds the end of the snapshot file
    /// because it spilled pages there). Nothing was written; the transaction is finished.
    /// Retryable: the same work in a new transaction sees the newer state. The `Folio`
    /// layer retries for its callers.
    case writeConflict(trees: [String])
    /// The transaction has already been committed or rolled back.
    case transactionFinished
    /// An edit failed part-way (a page could not be read) and the transaction's trees may
    /// be inconsistent: it refuses everything until a rollback, to a savepoint taken before
    /// the failure (`WriteTransaction.rollback(to:)`) or whole.
    case transactionAborted(cause: String)
    /// The store has been closed.
    case closed(path: String)
    /// A key is longer than `StorageLimits.maximumKeyLength` bytes.
    case keyTooLarge(length: Int, maximum: Int)
    /// A value is longer than `StorageLimits.maximumValueLength` bytes.
    case valueTooLarge(length: Int, maximum: Int)
    /// A named tree does not exist.
    case treeNotFound(name: String)
    /// A tree name is empty, too long or reserved.
    case invalidTreeName(name: String)
    /// A backup or restore was asked to write into something that is not an empty
    /// directory; it never overwrites.
    case destinationNotEmpty(path: String)
    /// The changes after this generation cannot be replayed: the snapshot file holding
    /// them is gone (compaction replaced it and its retention period is over).
    case historyUnavailable(from: UInt64)
    /// A read of a past generation asked for one the store does not hold: older than
    /// `oldest`, the oldest its history still reaches (compaction's retention removed the
    /// rest), or newer than `newest`, the newest committed.
    case generationUnavailable(requested: UInt64, oldest: UInt64, newest: UInt64)
    /// A replica destination holds another history than the store replicated to it: a
    /// replica of another store, or of this store before it was replaced or restored from
    /// an older copy. The replicator never writes over it; replicate to an empty
    /// destination instead (or remove this one).
    case replicaDiverged(destination: String, reason: String)
    /// A value cannot be encoded as an order-preserving key (for example an unpaired
    /// surrogate in a string would be, but Swift strings cannot hold one).
    case invalidKey(reason: String)

    public var description: String {
        switch self {
        case .corruption(let c): return c.description
        case .lockedByAnotherWriter(let path): return "store at \(path) is locked by another writer"
        case .alreadyOpenInThisProcess(let path): return "store at \(path) is already open for writing in this process"
        case .storeNotFound(let path): return "no Folio store at \(path)"
        case .notAStore(let path, let reason): return "\(path) is not a Folio store: \(reason)"
        case .unsupportedFormatVersion(let path, let found, let supported):
            return "store at \(path) has format version \(found); this version of Folio reads up to \(supported)"
        case .io(let op, let path, let code):
            return "\(op) failed on \(path): \(SystemError.message(code)) (errno \(code))"
        case .needsReopen(let path, let cause):
            return "store at \(path) must be reopened before it can commit again: \(cause)"
        case .readOnly(let path): return "store at \(path) is open read-only"
        case .notWritable(let path, let cause):
            return "store at \(path) cannot be opened for writing by this process (\(cause)); open it read-only "
                + "(Persistence(readingFrom:), Store.openReadOnly(at:)) or give this process write access to it"
        case .writeTransactionInProgress: return "a write transaction is already in progress"
        case .writeConflict(let trees):
            if trees.isEmpty {
                return "write conflict: another transaction that spilled pages must end first; retry the transaction"
            }
            return "write conflict: another commit changed \(trees.joined(separator: ", ")) since this "
                + "transaction began; retry the transaction"
        case .transactionFinished: return "the transaction has already finished"
        case .transactionAborted(let cause): return "the write transaction must be rolled back: \(cause)"
        case .closed(let path): return "store at \(path) is closed"
        case .keyTooLarge(let length, let maximum): return "key of \(length) bytes exceeds the maximum of \(maximum)"
        case .valueTooLarge(let length, let maximum):
            return "value of \(length) bytes exceeds the maximum of \(maximum)"
        case .treeNotFound(let name): return "no tree named \"\(name)\""
        case .invalidTreeName(let name): return "invalid tree name \"\(name)\""
        case .destinationNotEmpty(let path):
            return "\(path) exists and is not an empty directory; refusing to overwrite it"
        case .historyUnavailable(let generation):
            return "the changes after generation \(generation) are no longer in the store's files"
        case .generationUnavailable(let requested, let oldest, let newest):
            return "generation \(requested) is not in the store's history, which holds generations \(oldest) "
                + "through \(newest)"
        case .replicaDiverged(let destination, let reason):
            return "the replica at \(destination) holds another history than its source: \(reason)"
        case .invalidKey(let reason): return "invalid key: \(reason)"
        }
    }

    /// True for errors that describe damaged bytes on disk.
    public var isCorruption: Bool {
        if case .corruption = self { return true }
        return false
    }
}

/// Where and how stored bytes failed validation.
public struct Corruption: Sendable, Equatable, CustomStringConvertible {
    /// The file that holds the bad bytes.
    public var file: String
    /// Byte offset of the damaged record (page, root slot or header) in `file`.
    public var offset: UInt64
    /// What the reader expected and what it found, in words.
    public var detail: String
    /// The checksum the record claims (its stored checksum), whenever the record's bytes
    /// could be read; nil when they could not (a file cut short before the record ends).
    public var expectedChecksum: UInt32?
    /// The checksum computed over the bytes read, alongside ``expectedChecksum``. Equal to
    /// it when the bytes are as written and the damage is in what they say.
    public var actualChecksum: UInt32?

    /// A description of damaged bytes.
    public init(
        file: String, offset: UInt64, detail: String,
        expectedChecksum: UInt32? = nil, actualChecksum: UInt32? = nil
    ) {
        self.file = file
        self.offset = offset
        self.detail = detail
        self.expectedChecksum = expectedChecksum
        self.actualChecksum = actualChecksum
    }

    public var description: String {
        var text = "corruption in \(file) at offset \(offset): \(detail)"
        if let e = expectedChecksum, let a = actualChecksum {
            text +=
                e == a
                ? " (checksum 0x\(String(e, radix: 16)) matches: the bytes are as written)"
                : " (stored checksum 0x\(String(e, radix: 16)), computed 0x\(String(a, radix: 16)))"
        }
        return text
    }
}
