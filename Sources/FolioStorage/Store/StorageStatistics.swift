// The space a store uses: ``StorageStatistics`` and ``Store/statistics()``, which computes it.

/// Space used by a store.
public struct StorageStatistics: Sendable, Equatable {
    /// The generation described.
    public var generation: UInt64
    /// Bytes reachable from the current root (its pages and commit page).
    public var liveBytes: UInt64
    /// Bytes of the current snapshot file that no current page uses: replaced pages kept
    /// for older roots, and old commit pages. Compaction reclaims them.
    public var deadBytes: UInt64
    /// Length of the current snapshot file.
    public var currentFileBytes: UInt64
    /// Snapshot files on disk, the current one included.
    public var fileCount: Int
    /// Bytes of all snapshot files on disk.
    public var totalFileBytes: UInt64
    /// Number of named trees.
    public var treeCount: Int
}

extension Store {
    /// Live and dead bytes, files and trees of the newest generation.
    public func statistics() throws(StorageError) -> StorageStatistics {
        let root = try read().root
        var fileCount = 0
        var total: UInt64 = 0
        for name in try fileSystem.contentsOfDirectory(layout.snapshots)
        where StoreLayout.snapshotNumber(fromName: name) != nil {
            fileCount += 1
            if let handle = try? fileSystem.open(StoragePath.join(layout.snapshots, name), mode: .readOnly) {
                total += (try? handle.size()) ?? 0
                handle.close()
            }
        }
        let committed = root.record.committedLength
        let live = root.record.liveBytes
        let overhead = UInt64(SnapshotHeader.size)
        return StorageStatistics(
            generation: root.record.generation, liveBytes: live,
            deadBytes: committed >= live + overhead ? committed - live - overhead : 0,
            currentFileBytes: committed, fileCount: fileCount, totalFileBytes: total,
            treeCount: try root.allDescriptors().count)
    }
}
