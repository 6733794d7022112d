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
    /// Keyed by the tree name's UTF-8 bytes: the catalog compares names as bytes, so two
    /// canonically equivalent spellings (which Swift's `String ==` equates) are two trees.
    private let descriptors = Mutex<[[UInt8]: TreeDescriptor?]>([:])

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
        let name = Array(tree.utf8)
        if let cached = descriptors.withLock({ $0[name] }) { return cached }
        let root: NodeRef? = record.catalogRoot.isNone ? nil : .stored(record.catalogRoot)
        var descriptor: TreeDescriptor? = nil
        if let value = try reader.get(root: root, key: name) {
            descriptor = try TreeDescriptor.decode(
                Array(try reader.resolve(value)), tree: tree, file: file.path,
                offset: record.catalogRoot.offset)
        }
        descriptors.withLock { $0[name] = .some(descriptor) }
        return descriptor
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
