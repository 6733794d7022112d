/// A store's identification and files, as tools show them (`folio info`).
public struct StoreDescription: Sendable, Equatable {
    /// The format version the store's info file records (Docs/Format.md §2): the version
    /// it was created with, never rewritten.
    public var formatVersion: UInt32
    /// The format version the store is in now, as its root slots say (Docs/Format.md §18):
    /// the highest version of a slot. A version 1 store becomes 2 at its first commit, and a
    /// store becomes 3 at its first commit that records a tree as changed wholesale.
    public var rootFormatVersion: UInt32
    /// When the store was created (ISO 8601, UTC), as its info file records it; empty if
    /// the info file does not say.
    public var created: String
    /// The snapshot file that holds the newest generation this store object knows.
    public var currentSnapshot: String
    /// Every file in the store's directory and its `snapshots` directory, in path order.
    public var files: [StoreFileDescription]
}

/// One file of a store.
public struct StoreFileDescription: Sendable, Equatable {
    /// The path, relative to the store's directory (`root`, `snapshots/0000000000000001.folio`).
    public var name: String
    /// Its length in bytes (0 if it could not be read).
    public var bytes: UInt64
}

extension Store {
    /// The store's format version, creation time and files. Reads the info file and lists
    /// the directory; takes no lock and writes nothing.
    public func describe() throws(StorageError) -> StoreDescription {
        let root = try read().root
        let fs = fileSystem
        let infoHandle = try fs.open(layout.info, mode: .readOnly)
        let info: InfoFile
        do throws(StorageError) {
            info = try InfoFile.decode(try infoHandle.readAll(), path: layout.info)
        } catch {
            infoHandle.close()
            throw error
        }
        infoHandle.close()
        var files: [StoreFileDescription] = []
        func add(_ name: String, at path: String) {
            var bytes: UInt64 = 0
            if let handle = try? fs.open(path, mode: .readOnly) {
                bytes = (try? handle.size()) ?? 0
                handle.close()
            }
            files.append(StoreFileDescription(name: name, bytes: bytes))
        }
        for name in try fs.contentsOfDirectory(layout.directory) {
            let path = StoragePath.join(layout.directory, name)
            if fs.itemKind(at: path) == .file { add(name, at: path) }
        }
        if fs.itemKind(at: layout.snapshots) == .directory {
            for name in try fs.contentsOfDirectory(layout.snapshots) {
                let path = StoragePath.join(layout.snapshots, name)
                if fs.itemKind(at: path) == .file { add("snapshots/" + name, at: path) }
            }
        }
        return StoreDescription(
            formatVersion: info.formatVersion, rootFormatVersion: root.record.formatVersion, created: info.created,
            currentSnapshot: "snapshots/" + StoreLayout.snapshotName(root.record.snapshotFile),
            files: files.sorted { $0.name < $1.name })
    }
}
