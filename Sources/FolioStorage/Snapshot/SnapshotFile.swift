import Synchronization

/// The next ``SnapshotFile/cacheIdentity``.
private let snapshotFileIdentities = Atomic<UInt64>(1)

/// An open snapshot file, shared by every root that lives in it.
///
/// Readers pin a root, and the root holds this object; the handle closes when the last
/// root using it is released. Compaction may unlink the file while views still read it:
/// POSIX keeps an unlinked file's data readable through open descriptors (Docs/Architecture.md,
/// invariant 6), so a pinned view never sees its pages vanish.
final class SnapshotFile: Sendable {
    let number: UInt64
    let path: String
    let handle: any StorageFile
    /// What the page cache knows this open file by: unique to this object, never reused in
    /// the process. Pages are cached by (file, offset) because committed bytes never change
    /// along one chain of commits; a reader that adopts another history (a writer that fell
    /// back to an older root appends over bytes this reader may have cached) opens the file
    /// anew, so that neither its new views nor the old ones still reading can be served, or
    /// fill the cache with, the other history's pages (Store+Open.swift, `refresh`).
    let cacheIdentity: UInt64
    private let allocated: Atomic<UInt64>

    init(number: UInt64, path: String, handle: any StorageFile, allocatedLength: UInt64 = 0) {
        self.number = number
        self.path = path
        self.handle = handle
        self.cacheIdentity = snapshotFileIdentities.wrappingAdd(1, ordering: .relaxed).oldValue
        self.allocated = Atomic(allocatedLength)
    }

    /// The writer's knowledge of the file's length: committed bytes plus the zeros that
    /// preallocation wrote after them (see ``PageAppender``). Only the writer uses it.
    var allocatedLength: UInt64 {
        get { allocated.load(ordering: .relaxed) }
        set { allocated.store(newValue, ordering: .relaxed) }
    }

    deinit { handle.close() }

    /// The checksum stored in the first four bytes of the page at `address`.
    func storedChecksum(at address: PageAddress) throws(StorageError) -> UInt32 {
        let bytes = try handle.read(at: address.offset, count: 4)
        guard bytes.count == 4 else {
            throw StorageError.corruption(Corruption(file: path, offset: address.offset, detail: "page missing"))
        }
        return bytes.littleEndianUInt32(at: 0)
    }

    /// The chain value of `record`, a root in this file: its commit page's stored checksum,
    /// which the slot carries (a version 1 slot does not: then it is read from the page).
    func chainValue(of record: RootRecord) throws(StorageError) -> UInt32 {
        record.chain != 0 ? record.chain : try storedChecksum(at: record.commitPage)
    }
}

/// Reads and decodes pages of one snapshot file through the shared page cache.
struct PageSource: Sendable {
    let file: SnapshotFile
    let cache: PageCache
    let counters: IOCounters

    /// The decoded leaf or branch page at `address`.
    func node(at address: PageAddress) throws(StorageError) -> StoredNode {
        let key = PageCache.Key(file: file.cacheIdentity, offset: address.offset)
        let node: StoredNode, pageBytes: Int
        switch cache.get(key) {
        case .node(let cached)?: return cached
        case .writtenLeaf(let bytes)?:
            node = try TreePage.decodeWritten(bytes, address: address, file: file.path)
            pageBytes = bytes.count
        default:
            let bytes = try file.handle.read(at: address.offset, count: try address.byteCount(file: file.path))
            counters.recordPageRead(bytes: bytes.count)
            node = try TreePage.decode(bytes, address: address, file: file.path)
            pageBytes = bytes.count
        }
        let page = CachedPage.node(node)
        cache.insert(key, page, cost: page.cost(pageBytes: pageBytes))
        return node
    }

    /// The decoded page at `address`, from the cache if it is there, without adding it
    /// (for whole-store walks such as compaction and verification, which would otherwise
    /// evict every hot page).
    func nodeBypassingCache(at address: PageAddress) throws(StorageError) -> StoredNode {
        switch cache.get(PageCache.Key(file: file.cacheIdentity, offset: address.offset)) {
        case .node(let node)?: return node
        case .writtenLeaf(let bytes)?: return try TreePage.decodeWritten(bytes, address: address, file: file.path)
        default: break
        }
        let bytes = try file.handle.read(at: address.offset, count: try address.byteCount(file: file.path))
        counters.recordPageRead(bytes: bytes.count)
        return try TreePage.decode(bytes, address: address, file: file.path)
    }

    /// The overflow value at `address`, without adding it to the cache.
    func overflowBypassingCache(at address: PageAddress) throws(StorageError) -> [UInt8] {
        if case .overflow(let bytes)? = cache.get(PageCache.Key(file: file.cacheIdentity, offset: address.offset)) {
            return bytes
        }
        let raw = try file.handle.read(at: address.offset, count: try address.byteCount(file: file.path))
        counters.recordPageRead(bytes: raw.count)
        return try TreePage.decodeOverflow(raw, address: address, file: file.path)
    }

    /// The overflow page at `address` as it is in the file, checked (Format.md §4): for a
    /// copy that moves it whole. Nil when the cache holds its value, which the copy encodes
    /// instead (``overflowBypassingCache(at:)``).
    func overflowPageBypassingCache(at address: PageAddress) throws(StorageError) -> [UInt8]? {
        if case .overflow? = cache.get(PageCache.Key(file: file.cacheIdentity, offset: address.offset)) { return nil }
        let raw = try file.handle.read(at: address.offset, count: try address.byteCount(file: file.path))
        counters.recordPageRead(bytes: raw.count)
        _ = try PageHeader.validate(raw, address: address, file: file.path, expecting: .overflow)
        return raw
    }

    /// The value stored in the overflow page at `address`.
    func overflow(at address: PageAddress) throws(StorageError) -> [UInt8] {
        let key = PageCache.Key(file: file.cacheIdentity, offset: address.offset)
        if case .overflow(let bytes)? = cache.get(key) { return bytes }
        let raw = try file.handle.read(at: address.offset, count: try address.byteCount(file: file.path))
        counters.recordPageRead(bytes: raw.count)
        let value = try TreePage.decodeOverflow(raw, address: address, file: file.path)
        cache.insert(key, .overflow(value), cost: value.count + 64)
        return value
    }

    /// The commit record at `address` (not cached: read once per open or replay).
    func commit(at address: PageAddress) throws(StorageError) -> CommitRecord {
        let bytes = try file.handle.read(at: address.offset, count: try address.byteCount(file: file.path))
        counters.recordPageRead(bytes: bytes.count)
        return try CommitRecord.decode(bytes, address: address, file: file.path)
    }
}
