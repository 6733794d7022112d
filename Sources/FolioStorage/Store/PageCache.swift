import Synchronization

/// A decoded page as the cache holds it.
enum CachedPage: Sendable {
    case node(StoredNode)
    case overflow([UInt8])
    /// A leaf this process's writer just wrote, as its bytes (in storage of their own),
    /// decoded on its first read (``PageSource/node(at:)``): most leaves a commit writes are
    /// not read again before they are replaced or evicted (an index leaf of a random update),
    /// and decoding one costs a pass over its entries and an offset table.
    case writtenLeaf([UInt8])

    /// What holding the page costs, in bytes, for a page of `pageBytes` bytes: the page
    /// itself (a node's keys and values are read in it) plus its offset table (one offset
    /// per leaf entry; one slice per separator and one address per child of a branch) and a
    /// fixed overhead.
    func cost(pageBytes: Int) -> Int {
        switch self {
        case .node(.leaf(let leaf)):
            return pageBytes + 64 + leaf.entries.count * MemoryLayout<UInt32>.stride
        case .node(.branch(let branch)):
            return pageBytes + 64 + branch.keys.count * MemoryLayout<ArraySlice<UInt8>>.stride
                + branch.children.count * MemoryLayout<PageAddress>.stride
        case .overflow, .writtenLeaf: return pageBytes + 64
        }
    }
}

/// Decoded pages, least-recently-used first out, under a byte limit set at open: the one
/// place reads keep pages in memory (Docs/Architecture.md invariant 5).
///
/// Pages are immutable (nothing committed is rewritten, Docs/Format.md §3), so an entry
/// never needs invalidation: a page's (file, offset) names the same bytes forever along one
/// chain of commits, and a file is known here by the open file object's identity, which a
/// reader renews when it adopts another history (``SnapshotFile/cacheIdentity``). The cache
/// is split into shards by key hash, each behind its own lock, so readers on several threads
/// rarely contend (Dflat measured most contention gone at 12 shards; we use 16).
final class PageCache: Sendable {
    struct Key: Hashable, Sendable {
        /// The open file's ``SnapshotFile/cacheIdentity`` (not its number).
        var file: UInt64
        var offset: UInt64
    }

    /// A shard's lock; a class, because a `Mutex` cannot be copied into an array.
    private final class Shard: Sendable {
        let lock: Mutex<LRUShard>
        init(capacity: Int) { lock = Mutex(LRUShard(capacity: capacity)) }
    }

    private static let shardCount = 16
    private let shards: [Shard]
    /// The byte limit the cache was created with.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        let perShard = max(1, capacity / Self.shardCount)
        shards = (0..<Self.shardCount).map { _ in Shard(capacity: perShard) }
    }

    private func shard(for key: Key) -> Int {
        // Offsets are multiples of small numbers; mix before taking the shard index.
        var x = key.offset &* 0x9E37_79B9_7F4A_7C15 ^ key.file
        x ^= x >> 29
        return Int(x % UInt64(Self.shardCount))
    }

    func get(_ key: Key) -> CachedPage? {
        shards[shard(for: key)].lock.withLock { $0.get(key) }
    }

    func insert(_ key: Key, _ page: CachedPage, cost: Int) {
        var released: [CachedPage] = []
        insert(key, page, cost: cost, releasing: &released)
    }

    /// Inserts a commit's pages. What they evict is freed once every shard's lock is
    /// released: freeing a decoded page (a release per key and value) was most of an
    /// insertion's time, and other threads wait for the shard meanwhile.
    func insert(contentsOf pages: [(key: Key, page: CachedPage, cost: Int)]) {
        var released: [CachedPage] = []
        for page in pages { insert(page.key, page.page, cost: page.cost, releasing: &released) }
    }

    private func insert(_ key: Key, _ page: CachedPage, cost: Int, releasing released: inout [CachedPage]) {
        // A value bigger than a shard would only evict everything else: don't cache it.
        guard cost <= capacity / Self.shardCount else {
            remove(key)  // and never leave an older page of the same place behind
            return
        }
        shards[shard(for: key)].lock.withLock { $0.insert(key, page, cost: cost, releasing: &released) }
        // The caller's `released` goes out of scope after the lock: evicted pages are freed there.
    }

    /// Forgets the page at `key`. A writer calls it for every place it writes a page that
    /// no committed root references yet (a spill): bytes past the committed end are
    /// rewritten when a transaction is rolled back and the next one writes its run there,
    /// and a decoded page of the rolled-back transaction must not be found for them.
    func remove(_ key: Key) {
        shards[shard(for: key)].lock.withLock { $0.remove(key) }
    }

    /// Forgets every page of the open file `file` at `offset` or after: what a writer read
    /// past its committed end, once another writer may have written there.
    func removePages(ofFile file: UInt64, from offset: UInt64) {
        for shard in shards {
            shard.lock.withLock { $0.removeAll { $0.file == file && $0.offset >= offset } }
        }
    }

    /// Bytes currently held, summed over shards.
    var usedBytes: Int { shards.reduce(0) { total, shard in total + shard.lock.withLock { $0.used } } }

    /// Drops every entry.
    func removeAll() {
        for shard in shards { shard.lock.withLock { $0.removeAll() } }
    }
}

/// One shard: a hash map into a slab of entries linked in recency order.
struct LRUShard: ~Copyable {
    private struct Entry {
        var key: PageCache.Key
        var page: CachedPage?
        var cost: Int
        var newer: Int
        var older: Int
    }

    private var index: [PageCache.Key: Int] = [:]
    private var entries: [Entry] = []
    private var free: [Int] = []
    private var newest = -1
    private var oldest = -1
    private(set) var used = 0
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    mutating func get(_ key: PageCache.Key) -> CachedPage? {
        guard let slot = index[key] else { return nil }
        moveToFront(slot)
        return entries[slot].page
    }

    /// Inserts `page`, moving what it replaces or evicts into `released`, for the caller to
    /// free once it no longer holds the shard's lock.
    mutating func insert(
        _ key: PageCache.Key, _ page: CachedPage, cost: Int, releasing released: inout [CachedPage]
    ) {
        if let slot = index[key] {
            // The newest decoding of the place wins: a commit that wrote a page where a
            // rolled-back transaction's spilled page was cached replaces it here.
            used += cost - entries[slot].cost
            if let old = entries[slot].page.take() { released.append(old) }
            entries[slot].page = page
            entries[slot].cost = cost
            moveToFront(slot)
            return
        }
        while used + cost > capacity && oldest >= 0 { evictOldest(releasing: &released) }
        let entry = Entry(key: key, page: page, cost: cost, newer: -1, older: newest)
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            entries[slot] = entry
        } else {
            slot = entries.count
            entries.append(entry)
        }
        if newest >= 0 { entries[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
        index[key] = slot
        used += cost
    }

    mutating func remove(_ key: PageCache.Key) {
        guard let slot = index.removeValue(forKey: key) else { return }
        unlink(slot)
        used -= entries[slot].cost
        entries[slot].page = nil
        free.append(slot)
    }

    mutating func removeAll(where matches: (PageCache.Key) -> Bool) {
        for key in index.keys where matches(key) { remove(key) }
    }

    mutating func removeAll() {
        index = [:]
        entries = []
        free = []
        newest = -1
        oldest = -1
        used = 0
    }

    private mutating func unlink(_ slot: Int) {
        let entry = entries[slot]
        if entry.newer >= 0 { entries[entry.newer].older = entry.older } else { newest = entry.older }
        if entry.older >= 0 { entries[entry.older].newer = entry.newer } else { oldest = entry.newer }
    }

    private mutating func moveToFront(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        entries[slot].older = newest
        entries[slot].newer = -1
        if newest >= 0 { entries[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    private mutating func evictOldest(releasing released: inout [CachedPage]) {
        let slot = oldest
        unlink(slot)
        index[entries[slot].key] = nil
        used -= entries[slot].cost
        if let page = entries[slot].page.take() { released.append(page) }
        free.append(slot)
    }
}
