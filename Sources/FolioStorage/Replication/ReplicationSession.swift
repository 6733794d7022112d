/// One replicator's view of a source and a destination between shipments: the source,
/// open read-only, and the root the replica last published, with the source's file of
/// that root held open (so a compaction's retention removing it by name cannot stop the
/// next shipment from finishing that file).
///
/// Used only under the replicator's lock.
final class ReplicationSession: @unchecked Sendable {
    // Unchecked: every use is under Replicator's mutex.
    let source: Store
    /// The replica's published root, nil if it has published none.
    var position: Position?
    /// The snapshot files the destination holds (or may hold, partly written), by number.
    var replicaFiles: Set<UInt64>

    struct Position {
        var record: RootRecord
        /// The source's file of `record`, nil if the source no longer had it when shipping
        /// resumed (the replica's root is then not on the source's chain any more).
        var file: SnapshotFile?
    }

    private init(source: Store, position: Position?, replicaFiles: Set<UInt64>) {
        self.source = source
        self.position = position
        self.replicaFiles = replicaFiles
    }

    func close() { source.close() }

    /// Opens the source and reads what the destination holds: a new destination gets the
    /// source's info file; one that holds a replica resumes at its published root, after
    /// checking that the source's history continues it.
    static func start(_ replicator: Replicator) throws(StorageError) -> ReplicationSession {
        let source = try Store.openReadOnly(at: replicator.sourcePath, options: replicator.options)
        do throws(StorageError) {
            let fs = replicator.options.fileSystem
            let layout = replicator.sourceLayout
            let info = try fs.readAll(at: layout.info)
            let newest = try source.read().root.record
            guard newest.formatVersion >= 2 else {
                throw .notAStore(
                    path: replicator.sourcePath,
                    reason: "it is a version 1 store, which replication does not read; open it for writing once to "
                        + "upgrade it")
            }
            let destination = replicator.destination
            guard let holdings = try destination.holdings() else {
                // A replica this replicator has seen is not started over when it disappears:
                // more likely an unmounted drive than a wish for a new one.
                if replicator.hasSeenReplica {
                    throw .io(operation: "open replica", path: destination.name, code: SystemError.notFound)
                }
                try destination.begin(info: info)
                replicator.hasSeenReplica = true
                return ReplicationSession(source: source, position: nil, replicaFiles: [])
            }
            replicator.hasSeenReplica = true
            guard holdings.info == info else {
                throw .replicaDiverged(
                    destination: destination.name, reason: "it holds a replica of another store (its info file differs)"
                )
            }
            let files = Set(holdings.snapshots.keys)
            guard let published = try publishedRoot(holdings, destination: destination.name) else {
                return ReplicationSession(source: source, position: nil, replicaFiles: files)
            }
            let sourceFile = try openSourceFile(published.snapshotFile, layout: layout, fileSystem: fs)
            if let sourceFile {
                // The source still has the file of the replica's root: its commit page there
                // must be the one the replica published (same chain value), or the source is
                // another history (restored from an older copy, or replaced). The source's
                // own root may be older than the replica's for a while (a torn or lost slot
                // that its writer's recovery rewrites): that is no divergence.
                let chain = try? sourceFile.storedChecksum(at: published.commitPage)
                guard chain == published.chain else {
                    throw .replicaDiverged(
                        destination: destination.name,
                        reason: "its generation \(published.generation) is not in the source's history")
                }
            }
            return ReplicationSession(
                source: source, position: Position(record: published, file: sourceFile), replicaFiles: files)
        } catch {
            source.close()
            throw error
        }
    }

    /// The root a replica opens at (Docs/Format.md §8): the candidate slot with the higher
    /// generation whose snapshot file the destination holds, long enough. Nil if no slot
    /// was published (then the replica starts over).
    private static func publishedRoot(
        _ holdings: ReplicaHoldings, destination: String
    ) throws(StorageError)
        -> RootRecord?
    {
        let bytes = holdings.rootFile
        guard !bytes.isEmpty else { return nil }
        let path = StoragePath.join(destination, "root")
        guard bytes.count == RootRecord.fileSize else {
            throw .corruption(
                Corruption(
                    file: path, offset: 0,
                    detail: "replica root file is \(bytes.count) bytes, expected \(RootRecord.fileSize)"))
        }
        return ReplicaRoots.usable(bytes, file: path, snapshots: holdings.snapshots)?.record
    }

    /// Source snapshot file `number`, open, or nil if the source no longer has it.
    static func openSourceFile(
        _ number: UInt64, layout: StoreLayout, fileSystem fs: any FileSystem
    )
        throws(StorageError) -> SnapshotFile?
    {
        let path = layout.snapshot(number)
        let handle: any StorageFile
        do throws(StorageError) {
            handle = try fs.open(path, mode: .readOnly)
        } catch .io(_, _, let code) where code == SystemError.notFound {
            return nil
        }
        let file = SnapshotFile(number: number, path: path, handle: handle)
        let header = try SnapshotHeader.decode(try handle.read(at: 0, count: SnapshotHeader.size), file: path)
        guard header.fileNumber == number else {
            throw .corruption(
                Corruption(file: path, offset: 16, detail: "snapshot header names file \(header.fileNumber)"))
        }
        return file
    }
}
