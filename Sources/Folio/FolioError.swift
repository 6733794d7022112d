import FolioStorage
/// Every error the `Folio` API throws. Each names the datastore and, where there is one,
/// the record, so that a message is enough to find the problem.
public enum FolioError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stored record could not be decoded into the current instance type.
    case decodingFailed(datastore: String, identifier: String, version: String, reason: String)
    /// A stored record carries a version the format does not declare.
    case unknownVersion(datastore: String, identifier: String, version: String)
    /// An instance could not be encoded.
    case encodingFailed(datastore: String, identifier: String, reason: String)
    /// A unique (one-to-one) index already maps `value` to another instance. The failed
    /// operation changed nothing. Outside ``Persistence/perform(_:)-9rdbv`` nothing was written;
    /// inside, the transaction goes on as before the call if you catch the error, and
    /// rolls back whole if the error leaves `perform`.
    case uniqueIndexConflict(datastore: String, index: String, value: String, existing: String, new: String)
    /// Two declarations of the same datastore in one persistence disagree, or the stored
    /// datastore cannot be read with the declared format (e.g. a different identifier type).
    case incompatibleDeclaration(datastore: String, reason: String)
    /// `delete` found no instance with this identifier.
    case instanceNotFound(datastore: String, identifier: String)
    /// A read-only persistence was asked to read through an index the writer has not built
    /// (yet), or that is declared differently than the store's. Never answered wrongly.
    case indexNotBuilt(datastore: String, index: String)
    /// A stored record or index entry is malformed (the engine's checksums passed, so this
    /// is a bug or a store written by something else).
    case corruptRecord(datastore: String, detail: String)
    /// A write was attempted inside `read { }`, which pins a read-only snapshot.
    case writeInReadOnlySnapshot
    /// No datastore with this key is in the store's catalog.
    case unknownDatastore(String)
    /// The datastore has no index with this name.
    case unknownIndex(datastore: String, index: String)
    /// A value given as text cannot be read as the type it must have.
    case invalidValue(text: String, type: String)
    /// The operation was cancelled (for example `migrateAndReindex` between two batches). Work already
    /// committed stays; calling it again continues.
    case cancelled
    /// A query's predicate threw while evaluating a record (`#Predicate` expressions such
    /// as a forced unwrap or a failing cast can).
    case predicateFailed(datastore: String, reason: String)
    /// A value of the key-value store (``Persistence/values``) could not be encoded; nothing
    /// was stored.
    case valueEncodingFailed(key: String, reason: String)
    /// The value stored under a key of the key-value store does not decode as the key's
    /// type (it was written with another type, or is damaged). The stored value and every
    /// other key are untouched; setting the key replaces it.
    case valueDecodingFailed(key: String, type: String, reason: String)
    /// A key name of the key-value store is longer than ``ValueKeys/maximumNameLength``
    /// bytes of UTF-8 (`key` holds its first 64 characters). Nothing was read or written.
    case keyTooLong(key: String, length: Int, maximum: Int)
    /// An argument of the call is outside what it accepts (a negative `limit` or `offset`):
    /// `name` is the parameter's name, `reason` what is wrong with its value. Nothing was
    /// read or written.
    case invalidArgument(name: String, reason: String)
    /// `undo()` or `redo()` would revert the commit `generation`, but later commits changed
    /// what it changed, in the records (`DATASTORE IDENTIFIER`), values (`value NAME`) or
    /// index entries named: reverting it would lose their changes. Nothing was written.
    case undoConflict(generation: UInt64, changedSince: [String])
    /// `undo()` or `redo()` cannot revert the commit `generation`: `reason` says why (a
    /// datastore was prepared since it, or the commit before it is no longer in the
    /// store's history).
    case cannotUndo(generation: UInt64, reason: String)
    /// An error of the storage engine (I/O, corruption, locks, format version).
    case storage(StorageError)

    public var description: String {
        switch self {
        case .decodingFailed(let datastore, let identifier, let version, let reason):
            return "\(datastore): record \(identifier) (version \(version)) cannot be decoded: \(reason)"
        case .unknownVersion(let datastore, let identifier, let version):
            return "\(datastore): record \(identifier) has version \(version), which the format does not declare"
        case .encodingFailed(let datastore, let identifier, let reason):
            return "\(datastore): instance \(identifier) cannot be encoded: \(reason)"
        case .uniqueIndexConflict(let datastore, let index, let value, let existing, let new):
            return "\(datastore): unique index \(index) already maps \(value) to \(existing); cannot map it to \(new)"
        case .incompatibleDeclaration(let datastore, let reason):
            return "\(datastore): incompatible declaration: \(reason)"
        case .instanceNotFound(let datastore, let identifier):
            return "\(datastore): no instance with identifier \(identifier)"
        case .indexNotBuilt(let datastore, let index):
            return
                "\(datastore): index \(index) is not built in this store (the writer builds it on first use or in migrateAndReindex)"
        case .corruptRecord(let datastore, let detail):
            return "\(datastore): malformed record: \(detail)"
        case .writeInReadOnlySnapshot:
            return "cannot write inside read { }: it pins a read-only snapshot (write in perform { }, "
                + "or from a task that does not inherit the snapshot: Task.detached)"
        case .unknownDatastore(let key):
            return "no datastore named \(key) in this store"
        case .unknownIndex(let datastore, let index):
            return "\(datastore) has no index named \(index)"
        case .invalidValue(let text, let type):
            return "\"\(text)\" is not a value of type \(type)"
        case .predicateFailed(let datastore, let reason):
            return "the query's predicate failed on a record of \(datastore): \(reason)"
        case .cancelled:
            return "cancelled"
        case .valueEncodingFailed(let key, let reason):
            return "value for key \"\(key)\" cannot be encoded: \(reason)"
        case .valueDecodingFailed(let key, let type, let reason):
            return "value stored under key \"\(key)\" cannot be decoded as \(type): \(reason)"
        case .keyTooLong(let key, let length, let maximum):
            return "key beginning \"\(key)\" is \(length) bytes of UTF-8; keys are at most \(maximum)"
        case .invalidArgument(let name, let reason):
            return "invalid \(name): \(reason)"
        case .undoConflict(let generation, let changed):
            return "cannot revert generation \(generation): later commits changed "
                + changed.joined(separator: ", ")
        case .cannotUndo(let generation, let reason):
            return "cannot revert generation \(generation): \(reason)"
        case .storage(let error):
            return error.description
        }
    }
}

extension FolioError {
    /// Runs an engine call, turning its errors into ``FolioError/storage(_:)``.
    @inline(__always)
    static func wrap<R>(_ body: () throws(StorageError) -> R) throws(FolioError) -> R {
        do { return try body() } catch { throw .storage(error) }
    }
}
