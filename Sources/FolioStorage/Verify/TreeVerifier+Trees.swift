// The walk over every tree of a root: each tree against its catalog descriptor (key
// count, bytes, depth), then the reachable pages against each other (no overlap) and
// against the root's live bytes.

extension TreeVerifier {
    /// Every tree of `record` (`walkTrees`), then its reachable pages as a whole (`checkExtents`).
    mutating func checkTrees(_ record: RootRecord) {
        walkTrees(record)
        checkExtents(record)
    }

    /// Every reachable page of `record`, checked and counted, in an order that is the same
    /// on every call (the overlap windows depend on it).
    mutating func walkTrees(_ record: RootRecord) {
        counted(record.commitPage)
        var catalogEntries: [([UInt8], [UInt8])] = []
        let catalogStats = walk(record.catalogRoot, tree: "(catalog)") { key, value in
            catalogEntries.append((key, value))
        }
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
                problem(
                    descriptor.root.offset, name, "catalog says \(descriptor.count) keys, the tree holds \(stats.count)"
                )
            }
            if stats.bytes != descriptor.bytes {
                problem(
                    descriptor.root.offset, name,
                    "catalog says \(descriptor.bytes) bytes of pages, the tree has \(stats.bytes)")
            }
            if stats.depth != descriptor.depth && stats.complete {
                problem(
                    descriptor.root.offset, name, "catalog says depth \(descriptor.depth), the tree has \(stats.depth)")
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
                if extent.offset < end {
                    problem(extent.offset, nil, "page overlaps another reachable page (which ends at \(end))")
                }
                end = max(end, extent.offset + UInt64(extent.length))
            }
            seen += window.count
            guard seen < totalExtents, let last = window.last else { break }
            var pass = TreeVerifier(
                pages: pages, total: total, progress: nil, extentCapacity: extentCapacity, after: last.position)
            pass.walkTrees(record)  // its problems were reported by the first walk
            window = pass.extents.sorted()
        }
        let live = reachableBytes
        if end > record.committedLength {
            problem(end, nil, "a reachable page ends past the committed length \(record.committedLength)")
        }
        if problems.isEmpty && live != record.liveBytes {
            problem(
                record.commitPage.offset, nil, "root says \(record.liveBytes) live bytes, reachable pages hold \(live)")
        }
    }
}
