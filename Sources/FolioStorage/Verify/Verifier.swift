/// One thing wrong with a store, with where it is.
public struct VerificationProblem: Sendable, Equatable, CustomStringConvertible {
    /// The file holding the problem.
    public var file: String
    /// Byte offset in that file (of the page or record).
    public var offset: UInt64
    /// The tree involved, if any.
    public var tree: String?
    /// What is wrong.
    public var detail: String

    public var description: String {
        let place = tree.map { " (tree \"\($0)\")" } ?? ""
        return "\(file) @\(offset)\(place): \(detail)"
    }
}

/// The result of ``Store/verify(progress:)``.
public struct VerificationReport: Sendable {
    /// The generation checked.
    public var generation: UInt64
    /// Everything found wrong; empty for a sound store.
    public var problems: [VerificationProblem]
    /// Pages read and checked.
    public var pagesChecked: Int
    /// Bytes of those pages.
    public var bytesChecked: UInt64
    /// Trees checked.
    public var treesChecked: Int
    /// Commit pages checked along the commit chain.
    public var commitsChecked: Int

    /// True if nothing is wrong.
    public var isClean: Bool { problems.isEmpty }
}

/// Progress of a verification: bytes checked of about `totalBytes`.
public struct VerificationProgress: Sendable, Equatable {
    /// Bytes of pages checked so far.
    public var bytesChecked: UInt64
    /// About how many bytes there are to check (the live bytes).
    public var totalBytes: UInt64
}

extension Store {
    /// Checks the newest generation from the root file down: every page's checksum, kind and
    /// length; every tree's key order, separator fences, equal leaf depth and page size
    /// bounds; key counts and byte totals against the catalog; that no two reachable pages
    /// overlap and that live bytes match the root; the commit chain back to the start of
    /// the current snapshot file. Reads only: safe beside a writer in another process.
    public func verify(progress: ((VerificationProgress) -> Void)? = nil) -> VerificationReport {
        let root: CommittedRoot
        do throws(StorageError) {
            root = try read().root
        } catch {
            return VerificationReport(generation: 0, problems: [VerificationProblem(file: layout.root, offset: 0, tree: nil,
                                                                                   detail: "\(error)")],
                                      pagesChecked: 0, bytesChecked: 0, treesChecked: 0, commitsChecked: 0)
        }
        var verifier = TreeVerifier(pages: root.pages, total: root.record.liveBytes, progress: progress)
        // A grouped-mode writer publishes commits before the root file names them
        // (Docs/Durability.md §1.2): the root file must hold at least the newest durable
        // root, not the newest published one. Readers and full durability: the same root.
        let durable = state.withLock { $0.writer?.durableRecord } ?? root.record
        verifier.checkRootFile(layout: layout, fileSystem: fileSystem, durable: durable)
        if root.openedFromPreviousSlot { verifier.checkUnusableCurrentSlot(root.record, layout: layout, fileSystem: fileSystem) }
        verifier.checkFile(root.record)
        verifier.checkTrees(root.record)
        verifier.checkCommitChain(root.record)
        return VerificationReport(generation: root.record.generation, problems: verifier.problems,
                                  pagesChecked: verifier.pagesChecked, bytesChecked: verifier.bytesChecked,
                                  treesChecked: verifier.treesChecked, commitsChecked: verifier.commitsChecked)
    }
}

/// The walk behind ``Store/verify(progress:)``: reads pages without caching them and never
/// stops at the first problem (a damaged subtree is reported and skipped).
struct TreeVerifier {
    let pages: PageSource
    let total: UInt64
    let progress: ((VerificationProgress) -> Void)?
    var problems: [VerificationProblem] = []
    var pagesChecked = 0
    var bytesChecked: UInt64 = 0
    var treesChecked = 0
    var commitsChecked = 0
    private var reported: UInt64 = 0
    /// The reachable pages of the current overlap window (bounded: see ExtentWindow).
    private var extents: ExtentWindow
    /// Bytes of every reachable page, to check they add up to the root's live bytes.
    private var reachableBytes: UInt64 = 0
    /// Most reachable pages held in memory at once for the overlap check.
    let extentCapacity: Int

    /// `extentCapacity` bounds the memory of the overlap check (24 bytes an extent); tests
    /// set it small to exercise several windows.
    init(pages: PageSource, total: UInt64, progress: ((VerificationProgress) -> Void)?,
         extentCapacity: Int = 1 << 16, after: ExtentWindow.Position? = nil) {
        self.pages = pages
        self.total = total
        self.progress = progress
        self.extentCapacity = extentCapacity
        self.extents = ExtentWindow(capacity: extentCapacity, after: after)
    }

    private var file: String { pages.file.path }

    mutating func problem(_ offset: UInt64, _ tree: String?, _ detail: String, file: String? = nil) {
        problems.append(VerificationProblem(file: file ?? self.file, offset: offset, tree: tree, detail: detail))
    }

    mutating func problem(_ error: StorageError, tree: String?, at offset: UInt64) {
        if case .corruption(let corruption) = error {
            problems.append(VerificationProblem(file: corruption.file, offset: corruption.offset, tree: tree,
                                                detail: corruption.detail + checksumText(corruption)))
        } else {
            problem(offset, tree, "\(error)")
        }
    }

    private func checksumText(_ corruption: Corruption) -> String {
        guard let e = corruption.expectedChecksum, let a = corruption.actualChecksum else { return "" }
        return " (stored 0x\(String(e, radix: 16)), computed 0x\(String(a, radix: 16)))"
    }

    private mutating func counted(_ address: PageAddress) {
        pagesChecked += 1
        bytesChecked += UInt64(address.length)
        reachableBytes += UInt64(address.length)
        extents.add(offset: address.offset, length: address.length)
        if let progress, bytesChecked - reported >= 1 << 20 {
            reported = bytesChecked
            progress(VerificationProgress(bytesChecked: bytesChecked, totalBytes: total))
        }
    }

    // MARK: Files

    mutating func checkRootFile(layout: StoreLayout, fileSystem: any FileSystem, durable: RootRecord) {
        do throws(StorageError) {
            let handle = try fileSystem.open(layout.root, mode: .readOnly)
            defer { handle.close() }
            let bytes = try handle.readAll()
            guard bytes.count == RootRecord.fileSize || bytes.count == RootRecord.versionOneFileSize else {
                problem(0, nil, "root file is \(bytes.count) bytes, expected \(RootRecord.fileSize) "
                        + "(or \(RootRecord.versionOneFileSize) for format version 1)", file: layout.root)
                return
            }
            // Every slot that holds something decodes; the newest may hold a newer generation
            // than the one checked (a reader that has not refreshed), never an older one than
            // the newest durable root.
            var newest: UInt64 = 0
            for slot in 0..<2 where !RootRecord.slotIsEmpty(bytes, slot: slot) {
                do throws(StorageError) {
                    newest = max(newest, try RootRecord.decodeSlot(bytes, slot: slot, file: layout.root).generation)
                } catch {
                    problem(error, tree: nil, at: UInt64(RootRecord.slotOffset(slot, fileLength: bytes.count)))
                }
            }
            if newest > 0 && newest < durable.generation {
                problem(0, nil, "the newest root slot holds generation \(newest), older than the durable generation \(durable.generation)",
                        file: layout.root)
            }
        } catch {
            problem(0, nil, "cannot read the root file: \(error)", file: layout.root)
        }
        do throws(StorageError) {
            let info = try fileSystem.open(layout.info, mode: .readOnly)
            defer { info.close() }
            _ = try InfoFile.decode(try info.readAll(), path: layout.info)
        } catch {
            problem(0, nil, "info file: \(error)", file: layout.info)
        }
    }

    /// The store opened at root slot 1: the generation slot 0 names could not be read (its
    /// slot is damaged, which `checkRootFile` reports, or its snapshot file cannot be opened,
    /// reported here), so the newest commit is out of reach even if everything else is sound.
    mutating func checkUnusableCurrentSlot(_ opened: RootRecord, layout: StoreLayout, fileSystem: any FileSystem) {
        guard let handle = try? fileSystem.open(layout.root, mode: .readOnly) else { return }
        defer { handle.close() }
        guard let bytes = try? handle.readAll(),
              let current = (0..<2).compactMap({ try? RootRecord.decodeSlot(bytes, slot: $0, file: layout.root) })
                .filter({ $0.generation > opened.generation }).max(by: { $0.generation < $1.generation }) else {
            return  // a damaged newest slot: already reported by checkRootFile
        }
        let reason: String
        do throws(StorageError) {
            let file = try Store.openSnapshot(current.snapshotFile, layout: layout, fileSystem: fileSystem, writable: false)
            let size = try file.handle.size()
            reason = size < current.committedLength
                ? "it is \(size) bytes but \(current.committedLength) are committed"
                : "it could not be read when the store was opened"
        } catch {
            reason = "\(error)"
        }
        problem(0, nil, "the newest root slot names generation \(current.generation) in \(StoreLayout.snapshotName(current.snapshotFile)), "
                + "which cannot be used (\(reason)); the store opened at the previous root, generation \(opened.generation), "
                + "and that is the generation checked", file: layout.root)
    }

    mutating func checkFile(_ record: RootRecord) {
        do throws(StorageError) {
            _ = try SnapshotHeader.decode(try pages.file.handle.read(at: 0, count: SnapshotHeader.size), file: file)
            let size = try pages.file.handle.size()
            if size < record.committedLength {
                problem(size, nil, "file is \(size) bytes but \(record.committedLength) are committed")
            }
        } catch {
            problem(error, tree: nil, at: 0)
        }
    }

    // MARK: Trees

    mutating func checkTrees(_ record: RootRecord) {
        walkTrees(record)
        checkExtents(record)
    }

    /// Every reachable page of `record`, checked and counted, in an order that is the same
    /// on every call (the overlap windows depend on it).
    private mutating func walkTrees(_ record: RootRecord) {
        counted(record.commitPage)
        var catalogEntries: [([UInt8], [UInt8])] = []
        let catalogStats = walk(record.catalogRoot, tree: "(catalog)") { key, value in catalogEntries.append((key, value)) }
        _ = catalogStats
        for (key, value) in catalogEntries {
            let name = String(decoding: key, as: UTF8.self)
            treesChecked += 1
            let descriptor: TreeDescriptor
            do throws(StorageError) {
                descriptor = try TreeDescriptor.decode(value, tree: name, file: file, offset: record.catalogRoot.offset)
            } catch {
                problem(error, tree: name, at: record.catalogRoot.offset)
                continue
            }
            let stats = walk(descriptor.root, tree: name) { _, _ in }
            if stats.count != descriptor.count {
                problem(descriptor.root.offset, name, "catalog says \(descriptor.count) keys, the tree holds \(stats.count)")
            }
            if stats.bytes != descriptor.bytes {
                problem(descriptor.root.offset, name, "catalog says \(descriptor.bytes) bytes of pages, the tree has \(stats.bytes)")
            }
            if stats.depth != descriptor.depth && stats.complete {
                problem(descriptor.root.offset, name, "catalog says depth \(descriptor.depth), the tree has \(stats.depth)")
            }
        }
    }

    /// Reachable pages must not overlap, and must add up to the live bytes of the root.
    /// Streams in windows of `extentCapacity` extents in file order: the first from the
    /// walk that checked the pages, each further one from another walk that only collects.
    private mutating func checkExtents(_ record: RootRecord) {
        var end: UInt64 = UInt64(SnapshotHeader.size)
        let totalExtents = extents.visits
        var window = extents.sorted()
        var seen = 0
        while true {
            for extent in window {
                if extent.offset < end { problem(extent.offset, nil, "page overlaps another reachable page (which ends at \(end))") }
                end = max(end, extent.offset + UInt64(extent.length))
            }
            seen += window.count
            guard seen < totalExtents, let last = window.last else { break }
            var pass = TreeVerifier(pages: pages, total: total, progress: nil, extentCapacity: extentCapacity, after: last.position)
            pass.walkTrees(record)  // its problems were reported by the first walk
            window = pass.extents.sorted()
        }
        let live = reachableBytes
        if end > record.committedLength { problem(end, nil, "a reachable page ends past the committed length \(record.committedLength)") }
        if problems.isEmpty && live != record.liveBytes {
            problem(record.commitPage.offset, nil, "root says \(record.liveBytes) live bytes, reachable pages hold \(live)")
        }
    }

    struct WalkStatistics {
        var count: UInt64 = 0
        var bytes: UInt64 = 0
        var depth = 0
        var complete = true
    }

    /// Walks a tree depth-first, checking each page and calling `visit` for each entry.
    private mutating func walk(_ root: PageAddress, tree: String,
                               visit: ([UInt8], [UInt8]) -> Void) -> WalkStatistics {
        var stats = WalkStatistics()
        guard !root.isNone else { return stats }
        var leafDepth: Int? = nil
        check(root, tree: tree, level: 1, isRoot: true, lower: nil, upper: nil, leafDepth: &leafDepth, stats: &stats, visit: visit)
        stats.depth = leafDepth ?? 0
        return stats
    }

    private mutating func check(_ address: PageAddress, tree: String, level: Int, isRoot: Bool,
                                lower: [UInt8]?, upper: [UInt8]?, leafDepth: inout Int?,
                                stats: inout WalkStatistics, visit: ([UInt8], [UInt8]) -> Void) {
        let node: StoredNode
        do throws(StorageError) {
            node = try pages.nodeBypassingCache(at: address)
        } catch {
            problem(error, tree: tree, at: address.offset)
            stats.complete = false
            return
        }
        counted(address)
        stats.bytes += UInt64(address.length)
        let keys: [[UInt8]]
        switch node {
        case .leaf(let leaf): keys = leaf.keys
        case .branch(let branch): keys = branch.keys
        }
        // Order within the page, and fences from the parent: lower <= key < upper.
        for index in keys.indices {
            if index > 0 && ByteOrder.compare(keys[index - 1], keys[index]) >= 0 {
                problem(address.offset, tree, "keys \(index - 1) and \(index) are out of order")
            }
            if let lower, ByteOrder.compare(keys[index], lower) < 0 {
                problem(address.offset, tree, "key \(index) sorts before its separator in the parent")
            }
            if let upper, ByteOrder.compare(keys[index], upper) >= 0 {
                problem(address.offset, tree, "key \(index) sorts at or after the next separator in the parent")
            }
        }
        if UInt64(address.length) > UInt64(StorageLimits.maximumPageSize) {
            problem(address.offset, tree, "page of \(address.length) bytes exceeds the \(StorageLimits.maximumPageSize)-byte bound")
        }
        if !isRoot && UInt64(address.length) < UInt64(StorageLimits.minimumPageFill) {
            problem(address.offset, tree, "non-root page of \(address.length) bytes is under the \(StorageLimits.minimumPageFill)-byte fill bound")
        }
        switch node {
        case .leaf(let leaf):
            if let depth = leafDepth, depth != level {
                problem(address.offset, tree, "leaf at depth \(level), other leaves at depth \(depth): the tree is unbalanced")
            }
            leafDepth = leafDepth ?? level
            stats.count += UInt64(leaf.keys.count)
            for index in leaf.keys.indices {
                switch leaf.values[index] {
                case .inline(let value):
                    visit(leaf.keys[index], value)
                case .overflow(let overflow):
                    do throws(StorageError) {
                        let value = try pages.overflowBypassingCache(at: overflow)
                        counted(overflow)
                        stats.bytes += UInt64(overflow.length)
                        visit(leaf.keys[index], value)
                    } catch {
                        problem(error, tree: tree, at: overflow.offset)
                        stats.complete = false
                    }
                case .pendingOverflow:
                    problem(address.offset, tree, "impossible pending value in a stored page")
                }
            }
        case .branch(let branch):
            for index in branch.children.indices {
                let childLower = index == 0 ? lower : branch.keys[index - 1]
                let childUpper = index == branch.keys.count ? upper : branch.keys[index]
                check(branch.children[index], tree: tree, level: level + 1, isRoot: false, lower: childLower,
                      upper: childUpper, leafDepth: &leafDepth, stats: &stats, visit: visit)
            }
        }
    }

    // MARK: Commit chain

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
    /// before the later one, the newest must agree with the root slot, and each version 2
    /// run must match its checksum.
    mutating func checkCommitChain(_ record: RootRecord) {
        var location: CommitLocation? = record.location
        var expected = record.generation
        while let current = location, current.fileNumber == pages.file.number {
            do throws(StorageError) {
                let commit = try pages.commit(at: current.address)
                commitsChecked += 1
                if commit.generation != expected {
                    problem(current.address.offset, nil, "commit chain: generation \(commit.generation) where \(expected) was expected")
                    return
                }
                var chainDiffers = false
                if expected == record.generation && record.chain != 0 {
                    let stored = try pages.file.storedChecksum(at: current.address)
                    chainDiffers = stored != record.chain
                }
                if expected == record.generation,
                   commit.catalogRoot != record.catalogRoot || commit.liveBytes != record.liveBytes
                    || commit.previous != record.previous || commit.timestamp != record.timestamp || chainDiffers {
                    problem(current.address.offset, nil, "commit page of generation \(expected) disagrees with the root slot")
                }
                // Format version 2: the run before a transaction's commit page checksums
                // to what the page says, seeded with the previous commit page's checksum.
                if commit.kind == .transaction, commit.runChecksum != 0, let previous = commit.previous,
                   previous.fileNumber == current.fileNumber, previous.address.ends(atOrBefore: current.address.offset) {
                    let computed = try runChecksum(from: previous.address, to: current.address.offset)
                    if computed != commit.runChecksum {
                        problem(current.address.offset, nil, "commit chain: the run of generation \(expected) does not match its checksum")
                    }
                }
                if let previous = commit.previous, previous.fileNumber == current.fileNumber,
                   !previous.address.ends(atOrBefore: current.address.offset) {
                    problem(current.address.offset, nil, "commit chain: the previous commit does not lie before this one")
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
