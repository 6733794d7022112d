/// A read-only view pinned to one committed generation (snapshot isolation).
///
/// Everything read through a view comes from that generation, however long the view is
/// kept and whatever commits or compactions happen meanwhile: its pages are never rewritten
/// and its snapshot file stays open (and readable even if compaction unlinks it). Views are
/// cheap (no I/O to take one), immutable and safe to share between threads.
public final class ReadView: Sendable {
    let root: CommittedRoot
    /// True for a view of a generation older than the store's newest when it was taken
    /// (``Store/read(at:)``): caches that know the newest generations must not serve it or
    /// learn from it.
    package let isPast: Bool

    init(root: CommittedRoot, isPast: Bool = false) {
        self.root = root
        self.isPast = isPast
    }

    /// The generation the view sees.
    public var generation: UInt64 { root.record.generation }

    /// When that generation was committed, in microseconds since 1970.
    public var commitTimestamp: UInt64 { root.record.timestamp }

    /// Where that generation's commit page is.
    public var commitLocation: CommitLocation { root.record.location }

    /// The value under `key` in `tree`, or nil.
    public func get(_ key: [UInt8], in tree: String) throws(StorageError) -> [UInt8]? {
        try getInPlace(key, in: tree).map { Array($0) }
    }

    /// The value under `key` in `tree` as a slice of the page that holds it (read in place,
    /// no copy), or nil.
    package func getInPlace(_ key: [UInt8], in tree: String) throws(StorageError) -> ArraySlice<UInt8>? {
        guard let anchor = try root.anchoredDescriptor(of: tree).anchor else { return nil }
        guard let value = try root.reader.get(anchor: anchor, key: key) else { return nil }
        return try root.reader.resolve(value)
    }

    /// A cursor over `range` of `tree` (empty if the tree does not exist).
    public func cursor(
        in tree: String, range: KeyRange = .all, direction: ScanDirection = .forward
    ) throws(StorageError) -> Cursor {
        let reader = root.reader
        guard let anchor = try root.anchoredDescriptor(of: tree).anchor else {
            return Cursor(reader: reader, root: { nil }, range: range, reverse: direction == .reverse)
        }
        return Cursor(
            fetch: { (target) throws(StorageError) in try reader.seek(anchor: anchor, target) },
            resolve: { (value) throws(StorageError) in try reader.resolve(value) },
            range: range, direction: direction)
    }

    /// Number of keys in `tree` (0 if it does not exist). Reads no tree page.
    public func count(in tree: String) throws(StorageError) -> UInt64 {
        try root.descriptor(of: tree)?.count ?? 0
    }

    /// The catalog entry of `tree`, or nil if it does not exist.
    public func descriptor(of tree: String) throws(StorageError) -> TreeDescriptor? {
        try root.descriptor(of: tree)
    }

    /// Every tree and its catalog entry, in name order.
    public func trees() throws(StorageError) -> [(name: String, descriptor: TreeDescriptor)] {
        try root.allDescriptors()
    }

    /// What the commit that created this generation changed.
    public func changes() throws(StorageError) -> ChangeRecord {
        try root.pages.commit(at: root.record.commitPage).changes
    }
}
