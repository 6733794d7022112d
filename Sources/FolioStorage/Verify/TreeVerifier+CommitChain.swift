// The checks of the commit chain: commit pages back from the newest within the current
// snapshot file, their generations, order, agreement with the root slot, and run checksums.

extension TreeVerifier {
    /// The run checksum of the bytes from the end of the commit page at `previous` to
    /// `end`, read in 1 MiB pieces.
    func runChecksum(from previous: PageAddress, to end: UInt64) throws(StorageError) -> UInt32 {
        var crc = RunChecksum.seeded(with: try pages.file.storedChecksum(at: previous))
        var position = previous.end
        while position < end {
            let bytes = try pages.file.handle.read(at: position, count: Int(min(end - position, 1 << 20)))
            guard !bytes.isEmpty else { break }
            crc = bytes.withUnsafeBytes { RunChecksum.update(crc, $0) }
            position += UInt64(bytes.count)
        }
        return RunChecksum.finish(crc)
    }

    /// Walks the commit pages back from the newest while they are in the current file:
    /// each must decode, generations must step down by one, each earlier commit must lie
    /// before the later one, the newest must agree with the root slot, each version 2 (or
    /// 3) run must match its checksum, and no commit may record a tree wholesale unless the
    /// slots say version 3.
    mutating func checkCommitChain(_ record: RootRecord) {
        var location: CommitLocation? = record.location
        var expected = record.generation
        while let current = location, current.fileNumber == pages.file.number {
            do throws(StorageError) {
                let commit = try pages.commit(at: current.address)
                commitsChecked += 1
                if commit.generation != expected {
                    problem(
                        current.address.offset, nil,
                        "commit chain: generation \(commit.generation) where \(expected) was expected")
                    return
                }
                var chainDiffers = false
                if expected == record.generation && record.chain != 0 {
                    let stored = try pages.file.storedChecksum(at: current.address)
                    chainDiffers = stored != record.chain
                }
                if expected == record.generation,
                    commit.catalogRoot != record.catalogRoot || commit.liveBytes != record.liveBytes
                        || commit.previous != record.previous || commit.timestamp != record.timestamp || chainDiffers
                {
                    problem(
                        current.address.offset, nil,
                        "commit page of generation \(expected) disagrees with the root slot")
                }
                // A tree recorded wholesale is format version 3: a store whose slots say 2
                // was never upgraded, so a version 2 reader would take this page as corrupt.
                if StorageFormat.version(after: record.formatVersion, recording: commit.changes) > record.formatVersion,
                    let tree = commit.changes.trees.first(where: \.isChangedWholesale)
                {
                    problem(
                        current.address.offset, nil,
                        "commit page of generation \(expected) records tree \"\(tree.tree)\" as changed wholesale "
                            + "(format version \(StorageFormat.wholesaleVersion)), but the root slots say format "
                            + "version \(record.formatVersion)")
                }
                // Format version 2: the run before a transaction's commit page checksums
                // to what the page says, seeded with the previous commit page's checksum.
                if commit.kind == .transaction, commit.runChecksum != 0, let previous = commit.previous,
                    previous.fileNumber == current.fileNumber, previous.address.ends(atOrBefore: current.address.offset)
                {
                    let computed = try runChecksum(from: previous.address, to: current.address.offset)
                    if computed != commit.runChecksum {
                        problem(
                            current.address.offset, nil,
                            "commit chain: the run of generation \(expected) does not match its checksum")
                    }
                }
                if let previous = commit.previous, previous.fileNumber == current.fileNumber,
                    !previous.address.ends(atOrBefore: current.address.offset)
                {
                    problem(
                        current.address.offset, nil, "commit chain: the previous commit does not lie before this one")
                    return
                }
                expected -= 1
                location = commit.previous
            } catch {
                problem(error, tree: nil, at: current.address.offset)
                return
            }
        }
    }
}
