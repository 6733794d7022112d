// One shipment: the stretch of the commit chain between the replica's published root and
// the source's newest, written in file order, synced, then published.
extension ReplicationSession {
    /// A range of one source file to write to the replica.
    struct Segment {
        var file: SnapshotFile
        var from: UInt64
        var to: UInt64
    }

    func ship(_ replicator: Replicator) throws(StorageError) -> ReplicationReport {
        let destination = replicator.destination
        _ = try source.refresh()
        let newest = try source.read().root
        let from = position?.record.generation
        if let position, Store.sameCommit(position.record, newest.record) {
            // Nothing to ship, but a replicator killed after its last publish may have left
            // files the source has let go since.
            let removed = try removeFilesTheSourceLetGo(keeping: newest.record.snapshotFile, replicator)
            return ReplicationReport(
                fromGeneration: from, generation: from ?? 0, bytesShipped: 0, filesWritten: [], filesRemoved: removed)
        }
        if let position, newest.record.generation <= position.record.generation {
            throw .replicaDiverged(
                destination: destination.name,
                reason:
                    "the source is at generation \(newest.record.generation), the replica at \(position.record.generation)"
            )
        }
        let segments = try plan(to: newest, replicator: replicator)
        var bytes: UInt64 = 0
        var written: [UInt64] = []
        for segment in segments {
            replicaFiles.insert(segment.file.number)
            if !written.contains(segment.file.number) { written.append(segment.file.number) }
            var at = segment.from
            while at < segment.to {
                let count = Int(min(UInt64(Replicator.chunkSize), segment.to - at))
                let chunk = try segment.file.handle.read(at: at, count: count)
                guard chunk.count == count else {
                    throw .corruption(
                        Corruption(
                            file: segment.file.path, offset: at + UInt64(chunk.count),
                            detail: "source file ends before its committed length \(segment.to)"))
                }
                try destination.write(chunk, toSnapshot: segment.file.number, at: at)
                at += UInt64(count)
                bytes += UInt64(count)
                if at < segment.to { CrashPoint.replicateMidFile.reach() }
            }
        }
        // Every byte the new root reaches is durable before the root is published: the
        // replica is a valid store at every moment (ReplicaDestination's contract).
        try destination.synchronize()
        CrashPoint.replicateBeforePublish.reach()
        try destination.publish(rootSlot: newest.record.encodedSlot(), generation: newest.record.generation)
        position = Position(record: newest.record, file: newest.file)
        CrashPoint.replicateAfterPublish.reach()

        let removed = try removeFilesTheSourceLetGo(keeping: newest.record.snapshotFile, replicator)
        return ReplicationReport(
            fromGeneration: from, generation: newest.record.generation, bytesShipped: bytes,
            filesWritten: written.sorted(), filesRemoved: removed)
    }

    /// Removes from the replica the files the source no longer has, once the replica's
    /// root is past them: every one but `current`, the published root's (a reader of the
    /// replica that still reads one keeps it open: POSIX keeps an unlinked file readable,
    /// as for the source's own retention). Returns their numbers.
    private func removeFilesTheSourceLetGo(
        keeping current: UInt64, _ replicator: Replicator
    ) throws(StorageError) -> [UInt64] {
        var removed: [UInt64] = []
        for number in replicaFiles.sorted() where number != current {
            if replicator.options.fileSystem.itemKind(at: replicator.sourceLayout.snapshot(number)) == nil {
                try replicator.destination.removeSnapshot(number)
                replicaFiles.remove(number)
                removed.append(number)
            }
        }
        return removed
    }

    /// The segments that take the replica from its published root to `newest`, oldest
    /// first: walking the chain back from `newest`, the rest of each file down to the
    /// replica's root, and whole files for every file in between. A fresh replica gets
    /// every file the source's chain still reaches (its retained history). The walk stops
    /// at a file the source no longer has: the replica's history then starts after it.
    private func plan(to newest: CommittedRoot, replicator: Replicator) throws(StorageError) -> [Segment] {
        let name = replicator.destination.name
        var segments: [Segment] = []
        var file = newest.file
        var end = newest.record.committedLength
        while true {
            if let position, file.number == position.record.snapshotFile {
                let at = position.record.committedLength
                // The replica's root must be a commit of this chain: at or before where the
                // chain leaves this file, with the same chain value (Docs/Format.md §7).
                let chain = try? file.storedChecksum(at: position.record.commitPage)
                guard end >= at, chain == position.record.chain else {
                    throw .replicaDiverged(
                        destination: name,
                        reason: "its generation \(position.record.generation) is not in the source's history")
                }
                segments.append(Segment(file: file, from: at, to: end))
                break
            }
            // Compaction numbers files upwards, so the chain that continues the replica's
            // root reaches its file before any older one, even when the source has let that
            // file go: a chain that passes below it (or starts, below) is another history,
            // such as the store put back to an older copy of its directory.
            if let position, file.number < position.record.snapshotFile {
                throw .replicaDiverged(
                    destination: name,
                    reason: "the source's history passes from file \(file.number) over the replica's file "
                        + "\(position.record.snapshotFile)")
            }
            segments.append(Segment(file: file, from: 0, to: end))
            let first = try Self.firstCommit(in: file, before: end)
            guard let previous = first.previous else {
                if let position {
                    throw .replicaDiverged(
                        destination: name,
                        reason:
                            "the source's history does not reach the replica's generation \(position.record.generation)"
                    )
                }
                break
            }
            let older: SnapshotFile?
            if let position, previous.fileNumber == position.record.snapshotFile {
                older = position.file
            } else {
                older = try ReplicationSession.openSourceFile(
                    previous.fileNumber, layout: replicator.sourceLayout, fileSystem: replicator.options.fileSystem)
            }
            guard let older else { break }
            file = older
            end = previous.address.end
        }
        return segments.reversed()
    }

    /// The first commit page of `file` (its creation or compaction commit), found by walking
    /// the page headers from the first page, as they tile the file (Docs/Format.md §3).
    static func firstCommit(in file: SnapshotFile, before end: UInt64) throws(StorageError) -> CommitRecord {
        func corrupt(_ offset: UInt64, _ detail: String) -> StorageError {
            .corruption(Corruption(file: file.path, offset: offset, detail: detail))
        }
        var at = UInt64(SnapshotHeader.size)
        var block: [UInt8] = []
        var blockStart = at
        while end - at >= UInt64(PageHeader.size) {
            if at < blockStart || at + UInt64(PageHeader.size) > blockStart + UInt64(block.count) {
                blockStart = at
                block = try file.handle.read(at: at, count: Int(min(UInt64(Replicator.chunkSize), end - at)))
                guard block.count >= PageHeader.size else { throw corrupt(at, "file ends inside a page header") }
            }
            let index = Int(at - blockStart)
            let kind = block[index + 4]
            let length = UInt64(block.littleEndianUInt32(at: index + 8))
            guard length >= UInt64(PageHeader.size), length <= end - at else {
                throw corrupt(at, "page length \(length) does not fit before the committed length \(end)")
            }
            if kind == PageKind.commit.rawValue {
                let address = PageAddress(offset: at, length: UInt32(length))
                let bytes = try file.handle.read(at: at, count: Int(length))
                return try CommitRecord.decode(bytes, address: address, file: file.path)
            }
            guard PageKind(rawValue: kind) != nil else { throw corrupt(at, "page of unknown kind \(kind)") }
            at += length
        }
        throw corrupt(at, "no commit page before the committed length \(end)")
    }
}
