/// A call to `sync()` or `syncDirectory(_:)` on a ``PowerLossFileSystem``, as reported to its
/// ``PowerLossFileSystem/onSyncPoint`` observer just before the sync takes effect.
public struct SyncPoint: Hashable, Sendable, CustomStringConvertible {
    /// What was synced.
    public enum Kind: Hashable, Sendable {
        /// A file's data (``FolioStorage/StorageFile/sync()``).
        case file
        /// A directory's entries (``FolioStorage/FileSystem/syncDirectory(_:)``).
        case directory
    }

    /// 1-based: the first sync of the file system's life is number 1.
    public var number: Int
    /// The synced file's handle path, or the synced directory's path.
    public var path: String
    /// Whether a file or a directory was synced.
    public var kind: Kind

    /// Describes a sync point.
    public init(number: Int, path: String, kind: Kind) {
        self.number = number
        self.path = path
        self.kind = kind
    }

    /// `#3 sync /store/root.tmp` or `#4 syncdir /store`.
    public var description: String {
        "#\(number) \(kind == .file ? "sync" : "syncdir") \(path)"
    }
}
