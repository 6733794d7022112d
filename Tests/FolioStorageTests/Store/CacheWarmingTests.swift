import Testing
@testable import FolioStorage
import FolioTestSupport

/// A commit leaves its pages decoded in the cache by the time it returns (they are decoded
/// and inserted after the write section, not inside it), and the cache hands what an
/// insertion evicts back to its caller, to be freed outside the shard's lock.
@Suite struct CacheWarmingTests {
    @Test func aCommitsPagesAreCachedWhenItReturns() throws {
        let store = try Store.open(at: "/stores/s", options: testOptions(try memoryFileSystem()))
        defer { store.close() }
        // Enough keys for a tree of more than one level, so a commit writes leaves and branches.
        try store.write { txn in
            for i in 0..<3_000 {
                try txn.put(Array(repeating: UInt8(i & 0xFF), count: 60), for: KeyEncoding.encode(Int64(i)), in: "t")
            }
        }
        for i in stride(from: 0, to: 3_000, by: 397) {
            try store.write { try $0.put(bytes("changed \(i)"), for: KeyEncoding.encode(Int64(i)), in: "t") }
            // Everything this read needs (the catalog, the branches, the leaf just written)
            // came from the commit: nothing is read from the file.
            let before = store.ioStatistics
            #expect(try store.read().get(KeyEncoding.encode(Int64(i)), in: "t") == bytes("changed \(i)"))
            #expect(store.ioStatistics.since(before).pagesRead == 0, "the commit of key \(i) left its pages uncached")
        }
        #expect(store.verify().isClean)
    }

    @Test func aWrittenLeafIsCachedAsItsBytesUntilItIsRead() throws {
        let store = try Store.open(at: "/stores/s", options: testOptions(try memoryFileSystem()))
        defer { store.close() }
        try store.write { try $0.put(bytes("value"), for: bytes("key"), in: "t") }
        // One key: the tree is one leaf, its root.
        let tip = store.state.withLock { $0.tip }
        let leaf = try #require(try tip.descriptor(of: "t")).root
        let key = PageCache.Key(file: tip.file.cacheIdentity, offset: leaf.offset)
        guard case .writtenLeaf(let written)? = store.cache.get(key) else {
            Issue.record("the written leaf is not in the cache as its bytes")
            return
        }
        #expect(written.count == Int(leaf.length))
        let before = store.ioStatistics
        #expect(try store.read().get(bytes("key"), in: "t") == bytes("value"))
        #expect(store.ioStatistics.since(before).pagesRead == 0)
        // Read once: decoded, and cached decoded.
        guard case .node(.leaf(let decoded))? = store.cache.get(key) else {
            Issue.record("the leaf read is not cached decoded")
            return
        }
        #expect(decoded.keys.map { Array($0) } == [bytes("key")])
    }

    @Test func anInsertionHandsBackWhatItEvictsAndReplaces() {
        var shard = LRUShard(capacity: 100)
        var released: [CachedPage] = []
        let key = { (offset: UInt64) in PageCache.Key(file: 1, offset: offset) }
        shard.insert(key(0), .overflow([0]), cost: 40, releasing: &released)
        shard.insert(key(1), .overflow([1]), cost: 40, releasing: &released)
        #expect(released.isEmpty)
        // Past the capacity: the oldest page leaves the shard and comes back to the caller.
        shard.insert(key(2), .overflow([2]), cost: 40, releasing: &released)
        #expect(shard.get(key(0)) == nil)
        #expect(released.count == 1)
        if case .overflow(let value) = released.first { #expect(value == [0]) } else { Issue.record("not page 0") }
        // A newer decoding of a place replaces the older, which comes back too.
        released.removeAll()
        shard.insert(key(1), .overflow([9]), cost: 40, releasing: &released)
        if case .overflow(let value) = shard.get(key(1)) { #expect(value == [9]) } else { Issue.record("no page 1") }
        if case .overflow(let value) = released.first { #expect(value == [1]) } else { Issue.record("not page 1") }
        #expect(shard.used == 80)
    }
}
