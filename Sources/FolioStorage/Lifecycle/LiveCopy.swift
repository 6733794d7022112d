/// Writes the live pages of one committed generation into a fresh snapshot file: the
/// streaming copy behind compaction and backup. Memory holds one root-to-leaf path and one
/// write chunk; pages are read bypassing the cache, so a large copy does not evict hot pages
/// (Docs/Architecture.md invariant 5).
enum LiveCopy {
    /// Writes the header, every tree's pages (children first), a new catalog and a commit
    /// page (kind compaction, empty change record) into `file`, then fsyncs it. Returns the
    /// root record naming the copy, the number of pages written, and how many of them were
    /// moved whole (``PageAppender/appendPage(copying:from:kind:count:)``).
    static func write(
        _ base: CommittedRoot, into file: SnapshotFile, generation: UInt64, timestamp: UInt64,
        previous: CommitLocation?, crashPoint: CrashPoint,
        progress: ((CompactionProgress) -> Void)?
    ) throws(StorageError) -> (record: RootRecord, pages: Int, moved: Int) {
        try file.handle.write(
            SnapshotHeader(fileNumber: file.number, createdGeneration: generation, timestamp: timestamp).encoded(),
            at: 0)
        var appender = PageAppender(
            file: file, generation: generation, start: UInt64(SnapshotHeader.size),
            collectsCacheEntries: false, crashPoint: crashPoint)
        var copier = PageCopier(
            source: base.pages, window: PageWindow(source: base.pages, end: base.record.committedLength),
            total: base.record.liveBytes, progress: progress)
        let catalog = TreeState(name: "", descriptor: nil)
        let catalogEditor = TreeEditor(reader: base.reader)
        for (name, descriptor) in try base.allDescriptors() {
            let before = appender.bytesAppended
            let root =
                descriptor.root.isNone
                ? PageAddress.none : try copier.copy(descriptor.root, height: descriptor.depth, into: &appender)
            let copied = TreeDescriptor(
                root: root, depth: descriptor.depth, count: descriptor.count,
                bytes: appender.bytesAppended - before)
            _ = try catalogEditor.put(Array(name.utf8), .inline(copied.encoded()[...]), in: catalog)
        }
        let catalogRoot = try appender.writeTree(catalog.root)
        let commit = CommitRecord(
            generation: generation, timestamp: timestamp, kind: .compaction, catalogRoot: catalogRoot,
            liveBytes: 0, previous: previous, changes: ChangeRecord())
        let (commitPage, liveBytes, chain) = appender.appendCommit(commit, liveBytesBeforePage: appender.bytesAppended)
        try appender.flush()
        progress?(.switching)
        try file.handle.sync()
        let record = RootRecord(
            generation: generation, snapshotFile: file.number, committedLength: commitPage.end,
            commitPage: commitPage, catalogRoot: catalogRoot, liveBytes: liveBytes, timestamp: timestamp,
            previous: previous, chain: chain)
        return (record, appender.pageCount, appender.movedPages)
    }
}

/// Copies the pages of a tree from one snapshot file to another, children first: a leaf
/// with no overflow reference and every overflow page moved whole
/// (``PageAppender/appendPage(copying:from:kind:count:)``), branches and other leaves
/// written again with their children's new addresses. Reads go through a ``PageWindow``.
struct PageCopier {
    let source: PageSource
    var window: PageWindow
    let total: UInt64
    let progress: ((CompactionProgress) -> Void)?
    var copied: UInt64 = 0
    var reported: UInt64 = 0

    /// Copies the subtree at `address`, `height` levels tall (1: a leaf), into `appender`.
    mutating func copy(
        _ address: PageAddress, height: Int, into appender: inout PageAppender
    ) throws(StorageError) -> PageAddress {
        let result: PageAddress
        let path = source.file.path
        // A leaf of inline values is checked and moved where it lies in the window; any other
        // page is copied out and decoded.
        let read = try window.withPage(at: address, ahead: height <= 1) {
            (raw) throws(StorageError) -> (moved: PageAddress?, page: [UInt8], header: PageHeader.Fields) in
            let header = try PageHeader.validate(raw: raw, address: address, file: path)
            if header.kind == .leaf, TreePage.isInlineLeaf(raw, count: header.count) {
                let moved = try appender.appendPage(
                    copying: raw, from: address.offset, kind: .leaf, count: header.count)
                return (moved, [], header)
            }
            return (nil, Array(raw), header)
        }
        if let moved = read.moved {
            advance(UInt64(address.length))
            return moved
        }
        switch try TreePage.decode(read.page, checked: read.header, address: address, file: path) {
        case .leaf(let leaf):
            if let page = leaf.entries.unchangedPage {
                result = try appender.appendPage(
                    copying: page, from: address.offset, kind: .leaf, count: leaf.entries.count)
            } else {
                // A leaf's overflow pages lie just before it, behind the window, which reads
                // ahead from the leaf: read ahead from them, it would shrink at every leaf.
                let entries = try leaf.entries.movingOverflowPages { (overflow) throws(StorageError) in
                    let page = try window.page(at: overflow, ahead: false)
                    _ = try PageHeader.validate(page, address: overflow, file: source.file.path, expecting: .overflow)
                    let copy = try appender.appendPage(copying: page, from: overflow.offset, kind: .overflow, count: 0)
                    advance(UInt64(overflow.length))
                    return copy
                }
                result = try appender.appendLeaf(entries)
            }
        case .branch(let branch):
            var children: [PageAddress] = []
            children.reserveCapacity(branch.children.count)
            for child in branch.children { children.append(try copy(child, height: height - 1, into: &appender)) }
            result = try appender.appendBranch(keys: branch.keys, children: children)
        }
        advance(UInt64(address.length))
        return result
    }

    private mutating func advance(_ bytes: UInt64) {
        copied += bytes
        if let progress, copied - reported >= 1 << 20 {
            reported = copied
            progress(.copying(bytesCopied: copied, totalBytes: total))
        }
    }
}
