import FolioStorage

/// One call through the file-system seam, as ``RecordingFileSystem`` logs it.
///
/// Paths are exactly as the caller passed them (for file-system calls) or as the handle
/// reports them (for handle calls). ``description`` is compact and complete, for example
/// `write snapshots/1.folio @4096 +8192` once made relative with ``relative(to:)``;
/// ``summary`` drops offsets, counts and modes (`write snapshots/1.folio`) so tests can
/// assert on readable sequences such as `["write root.tmp", "sync root.tmp",
/// "rename root.tmp→root", "syncdir ."]`.
public enum FileOperation: Hashable, Sendable, CustomStringConvertible {
    /// ``FileSystem/open(_:mode:)``.
    case open(path: String, mode: FileOpenMode)
    /// ``StorageFile/read(at:count:)``; `count` is the number of bytes asked for.
    case read(path: String, offset: UInt64, count: Int)
    /// ``StorageFile/write(_:at:)``; `count` is the number of bytes to write.
    case write(path: String, offset: UInt64, count: Int)
    /// ``StorageFile/sync()``.
    case sync(path: String)
    /// ``StorageFile/truncate(to:)``.
    case truncate(path: String, length: UInt64)
    /// ``StorageFile/size()``.
    case size(path: String)
    /// ``StorageFile/close()``.
    case close(path: String)
    /// ``FileSystem/rename(_:to:)``.
    case rename(from: String, to: String)
    /// ``FileSystem/remove(_:)``.
    case remove(path: String)
    /// ``FileSystem/syncDirectory(_:)``.
    case syncDirectory(path: String)
    /// ``FileSystem/createDirectory(_:)``.
    case createDirectory(path: String)
    /// ``FileSystem/contentsOfDirectory(_:)``.
    case list(path: String)
    /// ``FileSystem/itemKind(at:)``.
    case itemKind(path: String)
    /// ``FileSystem/lock(_:)``.
    case lock(path: String)
    /// ``FileLock/unlock()`` or ``LockFile/unlock()``; `path` is the lock file's path.
    case unlock(path: String)
    /// ``FileSystem/identity(of:)``.
    case identity(path: String)
    /// ``FileSystem/openLockFile(_:)``. The lock file's ``LockFile/close()`` is logged as
    /// ``close(path:)``.
    case openLockFile(path: String)
    /// ``LockFile/tryLock()``.
    case tryLock(path: String)
    /// ``StorageFile/identity()``.
    case fileIdentity(path: String)

    /// What kind of call this is, without its arguments.
    public var kind: Kind {
        switch self {
        case .open: return .open
        case .read: return .read
        case .write: return .write
        case .sync: return .sync
        case .truncate: return .truncate
        case .size: return .size
        case .close: return .close
        case .rename: return .rename
        case .remove: return .remove
        case .syncDirectory: return .syncDirectory
        case .createDirectory: return .createDirectory
        case .list: return .list
        case .itemKind: return .itemKind
        case .lock: return .lock
        case .unlock: return .unlock
        case .identity: return .identity
        case .openLockFile: return .openLockFile
        case .tryLock: return .tryLock
        case .fileIdentity: return .fileIdentity
        }
    }

    /// The path the call acts on (the source, for a rename).
    public var path: String {
        switch self {
        case .open(let path, _), .read(let path, _, _), .write(let path, _, _), .sync(let path),
            .truncate(let path, _), .size(let path), .close(let path), .rename(let path, _),
            .remove(let path), .syncDirectory(let path), .createDirectory(let path), .list(let path),
            .itemKind(let path), .lock(let path), .unlock(let path), .identity(let path),
            .openLockFile(let path), .tryLock(let path), .fileIdentity(let path):
            return path
        }
    }

    /// True if the call can change what is stored: write, sync, truncate, rename, remove,
    /// syncDirectory, createDirectory, lock and openLockFile (which may create the lock file),
    /// and open with ``FileOpenMode/create``, ``FileOpenMode/truncate`` or
    /// ``FileOpenMode/createNew``. These are the calls a persistent
    /// fault keeps failing (see ``FaultPlan/Persistence/persistent``).
    public var isMutating: Bool {
        switch self {
        case .open(_, let mode): return mode == .create || mode == .truncate || mode == .createNew
        default: return kind.isMutating
        }
    }

    /// The same operation with every path made relative to `root`: `"."` for `root` itself,
    /// the remainder for paths inside it, other paths unchanged.
    public func relative(to root: String) -> FileOperation {
        func r(_ path: String) -> String { TestFilePath.relative(path, to: root) }
        switch self {
        case .open(let path, let mode): return .open(path: r(path), mode: mode)
        case .read(let path, let offset, let count): return .read(path: r(path), offset: offset, count: count)
        case .write(let path, let offset, let count): return .write(path: r(path), offset: offset, count: count)
        case .sync(let path): return .sync(path: r(path))
        case .truncate(let path, let length): return .truncate(path: r(path), length: length)
        case .size(let path): return .size(path: r(path))
        case .close(let path): return .close(path: r(path))
        case .rename(let from, let to): return .rename(from: r(from), to: r(to))
        case .remove(let path): return .remove(path: r(path))
        case .syncDirectory(let path): return .syncDirectory(path: r(path))
        case .createDirectory(let path): return .createDirectory(path: r(path))
        case .list(let path): return .list(path: r(path))
        case .itemKind(let path): return .itemKind(path: r(path))
        case .lock(let path): return .lock(path: r(path))
        case .unlock(let path): return .unlock(path: r(path))
        case .identity(let path): return .identity(path: r(path))
        case .openLockFile(let path): return .openLockFile(path: r(path))
        case .tryLock(let path): return .tryLock(path: r(path))
        case .fileIdentity(let path): return .fileIdentity(path: r(path))
        }
    }

    /// The call's name and path(s) only: `write root.tmp`, `rename root.tmp→root`, `syncdir .`.
    public var summary: String {
        switch self {
        case .rename(let from, let to): return "rename \(from)→\(to)"
        default: return "\(kind.name) \(path)"
        }
    }

    /// The call with all its arguments: `write snapshots/1.folio @4096 +8192`,
    /// `read root @0 +64`, `truncate data to 128`, `open root.tmp (truncate)`; calls without
    /// other arguments read as their ``summary``.
    public var description: String {
        switch self {
        case .open(let path, let mode): return "open \(path) (\(Self.name(of: mode)))"
        case .read(let path, let offset, let count): return "read \(path) @\(offset) +\(count)"
        case .write(let path, let offset, let count): return "write \(path) @\(offset) +\(count)"
        case .truncate(let path, let length): return "truncate \(path) to \(length)"
        default: return summary
        }
    }

    private static func name(of mode: FileOpenMode) -> String {
        switch mode {
        case .readOnly: return "readOnly"
        case .readWrite: return "readWrite"
        case .create: return "create"
        case .truncate: return "truncate"
        case .createNew: return "createNew"
        }
    }
}

extension FileOperation {
    /// The kinds of seam call, without arguments; used to filter logs and fault counting.
    public enum Kind: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// ``FileOperation/open(path:mode:)``.
        case open
        /// ``FileOperation/read(path:offset:count:)``.
        case read
        /// ``FileOperation/write(path:offset:count:)``.
        case write
        /// ``FileOperation/sync(path:)``.
        case sync
        /// ``FileOperation/truncate(path:length:)``.
        case truncate
        /// ``FileOperation/size(path:)``.
        case size
        /// ``FileOperation/close(path:)``.
        case close
        /// ``FileOperation/rename(from:to:)``.
        case rename
        /// ``FileOperation/remove(path:)``.
        case remove
        /// ``FileOperation/syncDirectory(path:)``.
        case syncDirectory
        /// ``FileOperation/createDirectory(path:)``.
        case createDirectory
        /// ``FileOperation/list(path:)``.
        case list
        /// ``FileOperation/itemKind(path:)``.
        case itemKind
        /// ``FileOperation/lock(path:)``.
        case lock
        /// ``FileOperation/unlock(path:)``.
        case unlock
        /// ``FileOperation/identity(path:)``.
        case identity
        /// ``FileOperation/openLockFile(path:)``.
        case openLockFile
        /// ``FileOperation/tryLock(path:)``.
        case tryLock
        /// ``FileOperation/fileIdentity(path:)``.
        case fileIdentity

        /// The short name used in descriptions: `syncdir` for ``syncDirectory``, `mkdir` for
        /// ``createDirectory``, `kind` for ``itemKind``, the case name otherwise.
        public var name: String {
            switch self {
            case .syncDirectory: return "syncdir"
            case .createDirectory: return "mkdir"
            case .itemKind: return "kind"
            default: return rawValue
            }
        }

        /// Same as ``name``.
        public var description: String { name }

        /// The name of the system call this seam call stands for, as the engine's real
        /// errors spell it (`pwrite`, `fsync`, `unlink`, ...).
        public var systemCallName: String {
            switch self {
            case .open: return "open"
            case .read: return "pread"
            case .write: return "pwrite"
            case .sync: return "fsync"
            case .truncate: return "ftruncate"
            case .size: return "fstat"
            case .close: return "close"
            case .rename: return "rename"
            case .remove: return "unlink"
            case .syncDirectory: return "fsync directory"
            case .createDirectory: return "mkdir"
            case .list: return "opendir"
            case .itemKind: return "stat"
            case .lock: return "flock"
            case .unlock: return "flock"
            case .identity: return "stat"
            case .openLockFile: return "open lock file"
            case .tryLock: return "flock"
            case .fileIdentity: return "fstat"
            }
        }

        /// True if the call can fail: everything but ``close``, ``unlock`` and ``itemKind``,
        /// whose seam signatures do not throw.
        public var canFail: Bool {
            self != .close && self != .unlock && self != .itemKind
        }

        /// True for kinds that always change what is stored (see ``FileOperation/isMutating``;
        /// an open is mutating only in create or truncate mode, so ``open`` is false here).
        public var isMutating: Bool {
            switch self {
            case .write, .sync, .truncate, .rename, .remove, .syncDirectory, .createDirectory, .lock, .openLockFile:
                return true
            default: return false
            }
        }

        /// The kinds that change stored bytes or names, or make them durable: write, truncate,
        /// sync, rename, remove, syncDirectory, createDirectory. Filtering a log to these
        /// gives the durability-relevant sequence of a commit.
        public static let durabilityRelevant: Set<Kind> = [
            .write, .truncate, .sync, .rename, .remove, .syncDirectory, .createDirectory,
        ]

        /// Every kind.
        public static let all: Set<Kind> = Set(allCases)
    }
}
