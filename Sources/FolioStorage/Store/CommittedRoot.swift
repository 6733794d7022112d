import Synchronization

/// A committed generation, as readers pin it: the root record, its open snapshot file and
/// a cache of the catalog's tree descriptors. Immutable apart from that cache, whose
/// entries never change once filled (the generation they describe never changes).
final class CommittedRoot: Sendable {
    let record: RootRecord
    let pages: PageSource
    /// Opened from an older root slot because the newest was damaged (or what it names).
    let openedFromPreviousSlot: Bool
    /// The root slot this root was read from (0 for roots this process made).
    let slot: Int
    /// Trees looked up so far, by the name's UTF-8 bytes: the catalog compares names as
    /// bytes, so two canonically equivalent spellings (which Swift's `String ==` equates) are
    /// two trees. A list, searched by comparing bytes in place: a store has a handful of
    /// trees, and a read looks one up per call, where hashing a name (after copying its bytes
    /// into an array) cost a quarter of a point read's storage work.
    /// Each entry also holds the tree's anchor (``BranchNode/anchor(of:)``): reads of this
    /// generation descend from it, so the tree's root is pinned once and not looked up in
    /// the page cache per read.
    private let descriptors = Mutex<[Entry]>([])

    private typealias Entry = (name: [UInt8], descriptor: TreeDescriptor?, anchor: BranchNode?)

    init(record: RootRecord, pages: PageSource, openedFromPreviousSlot: Bool = false, slot: Int = 0) {
        self.record = record
        self.pages = pages
        self.openedFromPreviousSlot = openedFromPreviousSlot
        self.slot = slot
    }

    var file: SnapshotFile { pages.file }
    var reader: TreeReader { TreeReader(pages: pages) }

    /// The catalog entry of `tree`, or nil if the tree does not exist in this generation.
    func descriptor(of tree: String) throws(StorageError) -> TreeDescriptor? {
        try anchoredDescriptor(of: tree).descriptor
    }

    /// The catalog entry of `tree` and the anchor to read it from (nil if the tree does not
    /// exist or is empty).
    func anchoredDescriptor(of tree: String) throws(StorageError) -> (descriptor: TreeDescriptor?, anchor: BranchNode?)
    {
        if let cached = cachedEntry(of: tree) { return (cached.descriptor, cached.anchor) }
        let name = Array(tree.utf8)
        let root: NodeRef? = record.catalogRoot.isNone ? nil : .stored(record.catalogRoot)
        var descriptor: TreeDescriptor? = nil
        if let value = try reader.get(root: root, key: name) {
            descriptor = try TreeDescriptor.decode(
                Array(try reader.resolve(value)), tree: tree, file: file.path,
                offset: record.catalogRoot.offset)
        }
        let anchor = descriptor.flatMap { $0.root.isNone ? nil : BranchNode.anchor(of: $0.root) }
        return descriptors.withLock { entries in
            // Another reader may have added it meanwhile: keep its anchor, pins and all.
            if let existing = entries.first(where: { $0.name == name }) {
                return (existing.descriptor, existing.anchor)
            }
            entries.append((name, descriptor, anchor))
            return (descriptor, anchor)
        }
    }

    /// Fills the trees looked up with what the commit that made this root knows without a
    /// lookup: `written`, the catalog entries it wrote (nil: the tree was removed, or never
    /// existed), and every entry `base` looked up for a tree it did not touch (its catalog
    /// entry is unchanged: the commit edits the catalog for the trees it changed only). So
    /// the next transaction, which begins on this root, looks none of its trees up again.
    /// Called before the root is published.
    func prime(from base: CommittedRoot, written: [(name: [UInt8], descriptor: TreeDescriptor?)]) {
        var entries = base.descriptors.withLock { $0 }
        for (name, descriptor) in written {
            let anchor = descriptor.flatMap { $0.root.isNone ? nil : BranchNode.anchor(of: $0.root) }
            let entry: Entry = (name, descriptor, anchor)
            if let index = entries.firstIndex(where: { $0.name == name }) {
                entries[index] = entry
            } else {
                entries.append(entry)
            }
        }
        descriptors.withLock { $0 = entries }
    }

    /// The entry already looked up for `tree` (its descriptor nil: the tree does not exist),
    /// or nil if it has not been.
    private func cachedEntry(of tree: String) -> Entry? {
        var tree = tree
        return tree.withUTF8 { name in
            descriptors.withLock { entries -> Entry? in
                for entry in entries where entry.name.count == name.count {
                    let equal = entry.name.withUnsafeBytes { ByteOrder.compare($0, UnsafeRawBufferPointer(name)) == 0 }
                    if equal { return entry }
                }
                return nil
            }
        }
    }

    /// Every tree name and descriptor, in name order.
    func allDescriptors() throws(StorageError) -> [(name: String, descriptor: TreeDescriptor)] {
        let root: NodeRef? = record.catalogRoot.isNone ? nil : .stored(record.catalogRoot)
        var cursor = Cursor(reader: reader, root: { root }, range: .all, reverse: false)
        var result: [(String, TreeDescriptor)] = []
        while let entry = try cursor.next() {
            let name = String(decoding: entry.key, as: UTF8.self)
            result.append(
                (
                    name,
                    try TreeDescriptor.decode(
                        entry.value, tree: name, file: file.path,
                        offset: record.catalogRoot.offset)
                ))
        }
        return result
    }
}
