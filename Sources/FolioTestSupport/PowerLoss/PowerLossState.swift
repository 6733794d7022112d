// The power-loss file system's bookkeeping: durable and pending contents of each file
// and the namespace operations not yet synced.
extension PowerLossFileSystem {
    /// Everything a ``PowerLossFileSystem`` knows, guarded by its one lock.
    struct State {
        /// The names as the running process sees them.
        var live = PowerLossNamespace()
        /// The names that survive any crash.
        var durable = PowerLossNamespace()
        /// Namespace changes not yet made durable by a directory sync, oldest first.
        var pendingNames: [PowerLossNamespace.Operation] = []
        /// Every inode something still names (live, durable or pending creation).
        var inodes: [UInt64: PowerLossInode] = [:]
        var nextInode: UInt64 = 1
        var syncPoints = 0
    }
}

extension PowerLossFileSystem.State {
    mutating func newInode(_ data: PowerLossFileData = PowerLossFileData()) -> PowerLossInode {
        let inode = PowerLossInode(number: nextInode, data: data)
        nextInode += 1
        inodes[inode.number] = inode
        return inode
    }

    /// Creates an empty file at `path` (known to be free, in an existing directory).
    mutating func create(_ path: String) -> PowerLossInode {
        let inode = newInode()
        record(.create(path: path, inode: inode.number))
        return inode
    }

    /// Applies a namespace operation to the live view and remembers it as pending.
    mutating func record(_ operation: PowerLossNamespace.Operation) {
        live.apply(operation)
        pendingNames.append(operation)
    }

    /// Moves to the durable namespace every pending operation that changes `directory`,
    /// with the earlier operations they depend on, then forgets inodes nothing names.
    mutating func makeDurable(directory: String) {
        var touched: Set<String> = [directory]
        var selected = [Bool](repeating: false, count: pendingNames.count)
        for index in pendingNames.indices.reversed() {
            let directories = pendingNames[index].directories
            if directories.contains(where: touched.contains) {
                selected[index] = true
                touched.formUnion(directories)
            }
        }
        guard selected.contains(true) else { return }
        var remaining: [PowerLossNamespace.Operation] = []
        for (index, operation) in pendingNames.enumerated() {
            if selected[index] { durable.apply(operation) } else { remaining.append(operation) }
        }
        pendingNames = remaining
        var named = Set(live.files.values).union(durable.files.values)
        named.formUnion(pendingNames.compactMap(\.createdInode))
        inodes = inodes.filter { named.contains($0.key) }
    }
}
