import Dispatch
import Synchronization

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
        if let position, newest.record.generation <= position.record.generation {
            // Nothing to ship, if the source still holds the replica's root: the same commit
            // (the usual case: a wake-up with nothing new), or an older slot its reader sees
            // for a while (a torn read of the slot a writer is writing, or a lost slot write
            // its recovery rewrites). Files a killed shipment left to remove go now.
            let holds =
                Store.sameCommit(position.record, newest.record)
                ? true : try sourceHolds(position.record, replicator: replicator)
            guard holds else {
                throw .replicaDiverged(
                    destination: destination.name,
                    reason: "its generation \(position.record.generation) is not in the source's history")
            }
            let removed = try removeFilesTheSourceLacks(keeping: position.record.snapshotFile, replicator: replicator)
            return ReplicationReport(
                fromGeneration: from, generation: position.record.generation, bytesShipped: 0, filesWritten: [],
                filesRemoved: removed)
        }
        var segments = try plan(to: newest, replicator: replicator)
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
        let left = RetiredFiles(
            ([position?.file].compactMap { $0 } + segments.map(\.file)).filter { $0 !== newest.file })
        position = Position(record: newest.record, file: newest.file)
        segments = []  // `left` holds the last references, for release(_:)
        CrashPoint.replicateAfterPublish.reach()
        Self.release(left)

        let removed = try removeFilesTheSourceLacks(keeping: newest.record.snapshotFile, replicator: replicator)
        return ReplicationReport(
            fromGeneration: from, generation: newest.record.generation, bytesShipped: bytes,
            filesWritten: written.sorted(), filesRemoved: removed)
    }

    /// Lets go of source files the shipment moved past, on another thread: if the source's
    /// retention removed one, closing its last descriptor frees its blocks, milliseconds for a
    /// file of megabytes, which the next commit's shipment would otherwise wait for.
    private static func release(_ retired: RetiredFiles) {
        DispatchQueue.global(qos: .utility).async { retired.empty() }
    }

    /// Files handed to another thread to let go of: the box is what the shipment keeps until
    /// it returns, not the files, so their last reference is dropped by ``empty()`` on that
    /// thread whenever the shipment's own references end.
    final class RetiredFiles: Sendable {
        private let files: Mutex<[SnapshotFile]>
        init(_ files: [SnapshotFile]) { self.files = Mutex(files) }
        func empty() {
            let files = self.files.withLock { files in
                defer { files = [] }
                return files
            }
            _ = files  // released here, outside the lock
        }
    }

    /// Files the source no longer has go from the replica too, once the root that moved
    /// past them is durable (so no root the replica may open at after a power cut names one),
    /// and only when the source says "no such file": any other failure to open it keeps it.
    /// A reader of the replica still reading one keeps it open: POSIX keeps an unlinked file
    /// readable, as for the source's own retention.
    private func removeFilesTheSourceLacks(
        keeping current: UInt64, replicator: Replicator
    ) throws(StorageError)
        -> [UInt64]
    {
        let fs = replicator.options.fileSystem
        let gone = replicaFiles.sorted().filter { number in
            guard number != current else { return false }
            do throws(StorageError) {
                try fs.open(replicator.sourceLayout.snapshot(number), mode: .readOnly).close()
                return false
            } catch {
                if case .io(_, _, let code) = error, code == SystemError.notFound { return true }
                return false
            }
        }
        guard !gone.isEmpty else { return [] }
        try replicator.destination.makePublishedRootDurable()
        for number in gone {
            try replicator.destination.removeSnapshot(number)
            replicaFiles.remove(number)
        }
        return gone
    }

    /// Whether the source's file of `record` (the one at its path; the file held open if the
    /// name is gone) holds `record`'s commit page with its chain value.
    private func sourceHolds(_ record: RootRecord, replicator: Replicator) throws(StorageError) -> Bool {
        guard let file = try sourceFile(record.snapshotFile, replicator: replicator) else { return false }
        return (try? file.storedChecksum(at: record.commitPage)) == record.chain
    }

    /// Source snapshot file `number`: the file at its path, or, if the name is gone and it
    /// is the file of the replica's root, the one held open since (a compaction's retention
    /// removed it before the shipment that finishes it). The path comes first: a source
    /// replaced by another copy has another file under the same name, which the chain
    /// checks then meet.
    private func sourceFile(_ number: UInt64, replicator: Replicator) throws(StorageError) -> SnapshotFile? {
        if let opened = try ReplicationSession.openSourceFile(
            number, layout: replicator.sourceLayout, fileSystem: replicator.options.fileSystem)
        {
            return opened
        }
        if let position, number == position.record.snapshotFile { return position.file }
        return nil
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
        var last = newest.record.commitPage
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
            // File numbers only grow along a chain: one that passes below the replica's file
            // without reaching it is another history.
            if let position, file.number < position.record.snapshotFile {
                throw .replicaDiverged(
                    destination: name,
                    reason: "the source's history passes from file \(file.number) over the replica's file "
                        + "\(position.record.snapshotFile)")
            }
            segments.append(Segment(file: file, from: 0, to: end))
            let first = try Self.firstCommit(in: file, before: end, backFrom: last)
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
            guard let older = try sourceFile(previous.fileNumber, replicator: replicator) else {
                // The source no longer has the file: the replica's history starts after it.
                // A continuation of the replica's root reaches it at or past that root.
                if let position,
                    previous.fileNumber < position.record.snapshotFile
                        || (previous.fileNumber == position.record.snapshotFile
                            && (previous.address.end < position.record.committedLength
                                || first.generation <= position.record.generation))
                {
                    throw .replicaDiverged(
                        destination: name,
                        reason: "its generation \(position.record.generation) is not in the source's history")
                }
                break
            }
            file = older
            end = previous.address.end
            last = previous.address
        }
        return segments.reversed()
    }

    /// Commit pages ``firstCommit(in:before:backFrom:)`` reads back along the chain before it
    /// walks the page headers instead.
    static let chainStepsToFirstCommit = 8

    /// The first commit page of `file`, found back along the chain from the commit page at
    /// `last` when that takes a few reads: a file a compaction began shortly before, which
    /// is where a shipment meets a new file. Further back, by the page headers: reading the
    /// whole file once costs less than a read per commit. Both find the same page, since the
    /// first commit of a file (its creation or compaction) is on every chain through it.
    static func firstCommit(
        in file: SnapshotFile, before end: UInt64, backFrom last: PageAddress
    ) throws(StorageError) -> CommitRecord {
        var address = last
        for _ in 0..<chainStepsToFirstCommit {
            // A page on the way that does not decode (damage to a commit page costs only its
            // change record, Docs/Format.md §7) sends the search to the page headers, which
            // read no commit page but the first.
            guard
                let bytes = try? file.handle.read(
                    at: address.offset, count: try address.byteCount(file: file.path)),
                let record = try? CommitRecord.decode(bytes, address: address, file: file.path)
            else { break }
            guard let previous = record.previous, previous.fileNumber == file.number else { return record }
            guard previous.address.end <= address.offset else { break }
            address = previous.address
        }
        return try firstCommit(in: file, before: end)
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
