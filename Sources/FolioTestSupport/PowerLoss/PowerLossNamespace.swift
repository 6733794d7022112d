import FolioStorage

/// Names of a ``PowerLossFileSystem``: file paths mapped to inode numbers, and directories.
///
/// Entries are kept even when their directory is missing (a durable entry in a directory
/// whose own creation is not durable yet); ``reachable()`` drops those when an image is built.
struct PowerLossNamespace: Sendable, Equatable {
    /// A change to the names, as issued by the running process.
    enum Operation: Sendable, Equatable {
        case create(path: String, inode: UInt64)
        case makeDirectory(path: String)
        case rename(from: String, to: String)
        case unlink(path: String)

        /// The directories whose entries the operation changes; syncing any of them makes
        /// the operation durable.
        var directories: [String] {
            switch self {
            case .create(let path, _), .makeDirectory(let path), .unlink(let path):
                return [StoragePath.parent(of: path)]
            case .rename(let from, let to):
                let source = StoragePath.parent(of: from), destination = StoragePath.parent(of: to)
                return source == destination ? [source] : [source, destination]
            }
        }

        /// The inode a creation introduces.
        var createdInode: UInt64? {
            if case .create(_, let inode) = self { return inode }
            return nil
        }
    }

    var files: [String: UInt64] = [:]
    var directories: Set<String> = ["/"]

    /// Applies `operation` if it still makes sense here (a rename or unlink needs its file, a
    /// creation needs its name free); returns whether it did.
    @discardableResult
    mutating func apply(_ operation: Operation) -> Bool {
        switch operation {
        case .create(let path, let inode):
            guard files[path] == nil, !directories.contains(path) else { return false }
            files[path] = inode
        case .makeDirectory(let path):
            guard files[path] == nil, !directories.contains(path) else { return false }
            directories.insert(path)
        case .rename(let from, let to):
            guard let inode = files[from], !directories.contains(to) else { return false }
            files[from] = nil
            files[to] = inode
        case .unlink(let path):
            guard files.removeValue(forKey: path) != nil else { return false }
        }
        return true
    }

    /// The namespace without entries that cannot be reached from `/` (their directory, or
    /// one above it, is missing).
    func reachable() -> PowerLossNamespace {
        var reachableDirectories: Set<String> = ["/"]
        for directory in directories.sorted() where directory != "/" {
            // Sorted order visits a directory's parent before the directory itself.
            if reachableDirectories.contains(StoragePath.parent(of: directory)) {
                reachableDirectories.insert(directory)
            }
        }
        var result = PowerLossNamespace()
        result.directories = reachableDirectories
        result.files = files.filter { reachableDirectories.contains(StoragePath.parent(of: $0.key)) }
        return result
    }

    /// Names (not paths) directly inside `directory`, sorted.
    func entries(of directory: String) -> [String] {
        var names: [String] = []
        for path in files.keys where StoragePath.parent(of: path) == directory {
            names.append(StoragePath.lastComponent(of: path))
        }
        for path in directories where path != directory && StoragePath.parent(of: path) == directory {
            names.append(StoragePath.lastComponent(of: path))
        }
        return names.sorted()
    }
}
