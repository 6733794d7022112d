import Foundation
import Synchronization
import Testing
@testable import FolioStorage
import FolioKeys
import FolioTestSupport

/// Pages read in place: a decoded page's keys, values and separators are slices of the
/// page's own bytes (no array per key or value), and the inline comparison the tree searches
/// with orders keys exactly as ``KeyBytes/compare(_:_:)-(UnsafeRawBufferPointer,UnsafeRawBufferPointer)``.
@Suite struct InPlacePageTests {
    static let offset: UInt64 = 4_096

    /// Where the array a slice belongs to starts in memory: slices of one array share it,
    /// while a copied key or value is a new array of its own.
    static func storage(of slice: ArraySlice<UInt8>) -> UnsafeRawPointer? {
        slice.withUnsafeBytes { $0.baseAddress.map { $0 - slice.startIndex } }
    }

    /// True if every slice is the page's own bytes at the place the slice says.
    static func inPlace(_ slices: [ArraySlice<UInt8>], of page: [UInt8]) -> Bool {
        let shared = Set(slices.filter { !$0.isEmpty }.map { storage(of: $0) })
        return shared.count == 1
            && slices.allSatisfy { $0.endIndex <= page.count && Array($0) == Array(page[$0.indices]) }
    }

    @Test func aDecodedLeafHoldsSlicesOfItsPage() throws {
        let keys = (0..<40).map { Array("key-\(1_000 + $0)".utf8)[...] }
        let values = (0..<40).map { LeafValue.inline(Array(repeating: UInt8($0), count: 30 + $0)[...]) }
        var writer = ByteWriter()
        TreePage.encodeLeaf(keys: keys, values: values, generation: 7, into: &writer, at: Self.offset)
        let page = writer.bytes
        let address = PageAddress(offset: Self.offset, length: UInt32(page.count))
        guard case .leaf(let leaf) = try TreePage.decode(page, address: address, file: "test") else {
            Issue.record("a leaf page decoded as a branch")
            return
        }
        #expect(leaf.keys == keys)
        #expect(leaf.values == values)
        // The node keeps the page alive and points into it: the decode copied no key or value.
        let inline = leaf.values.compactMap { value -> ArraySlice<UInt8>? in
            if case .inline(let bytes) = value { return bytes }
            return nil
        }
        #expect(inline.count == values.count)
        let leafInPlace = Self.inPlace(leaf.keys + inline, of: page)
        #expect(leafInPlace, "a leaf's keys and values are not slices of its page")
    }

    @Test func aDecodedBranchHoldsSlicesOfItsPage() throws {
        let separators = (0..<20).map { Array("separator-\(100 + $0)".utf8)[...] }
        let children = (0...20).map { PageAddress(offset: UInt64(64 + 600 * $0), length: 600) }
        var writer = ByteWriter()
        TreePage.encodeBranch(keys: separators, children: children, generation: 3, into: &writer, at: 1 << 20)
        let page = writer.bytes
        let address = PageAddress(offset: 1 << 20, length: UInt32(page.count))
        guard case .branch(let branch) = try TreePage.decode(page, address: address, file: "test") else {
            Issue.record("a branch page decoded as a leaf")
            return
        }
        #expect(branch.keys == separators && branch.children == children)
        let branchInPlace = Self.inPlace(branch.keys, of: page)
        #expect(branchInPlace, "a branch's separators are not slices of its page")
    }

    @Test func inlineComparisonOrdersAsKeyBytes() {
        var rng = SplitMix64(seed: 26)
        var pairs: [([UInt8], [UInt8])] = [([], []), ([], [0]), ([0], [0, 0]), ([0xFF], [0xFF, 0])]
        for _ in 0..<20_000 {
            // Shared prefixes of every length around the 8-byte step, so that the word-wise
            // loop, the byte-wise tail and the length rule all decide some pairs.
            let prefix = (0..<Int.random(in: 0...20, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            func tail() -> [UInt8] {
                (0..<Int.random(in: 0...3, using: &rng)).map { _ in UInt8.random(in: 0...2, using: &rng) * 127 }
            }
            pairs.append((prefix + tail(), prefix + tail()))
        }
        for (a, b) in pairs {
            let expected = a.withUnsafeBytes { x in b.withUnsafeBytes { y in KeyBytes.compare(x, y) } }
            #expect(ByteOrder.compare(a[...], b[...]) == expected, "\(a) vs \(b)")
            #expect(ByteOrder.compare(b[...], a[...]) == -expected, "\(b) vs \(a)")
            #expect((expected < 0) == a.lexicographicallyPrecedes(b))
        }
    }
}

/// Pinned branches: a descent through a committed branch pins the child branches it reads
/// (so the next descent takes them without the page cache) and never pins a leaf; reads
/// through pins answer as reads through the cache do.
@Suite struct PinnedBranchTests {
    static func key(_ n: Int) -> [UInt8] { Array(String(format: "key-%07d", n).utf8) }

    @Test func descentsPinBranchesAndNeverLeaves() throws {
        let fileSystem = MemoryFileSystem()
        try fileSystem.createDirectory("/stores")
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        let transaction = try store.beginWrite()
        // Values of 200 bytes: about 18 entries a leaf, so 30,000 keys make three levels.
        for n in 0..<30_000 {
            _ = try transaction.put([UInt8](repeating: UInt8(n % 251), count: 200), for: Self.key(n), in: "t")
        }
        try transaction.commit()
        let view = try store.read()
        let root = try #require(try view.descriptor(of: "t")).root
        guard case .branch(let top) = try view.root.pages.node(at: root) else {
            Issue.record("a tree of 30,000 keys has a leaf for its root")
            return
        }
        #expect((0..<top.children.count).allSatisfy { top.pinnedChild($0) == nil })
        for n in stride(from: 0, to: 30_000, by: 7) {
            #expect(try view.get(Self.key(n), in: "t") == [UInt8](repeating: UInt8(n % 251), count: 200))
        }
        // The generation's anchor for the tree pins its root: the cached node itself.
        let anchor = try #require(try view.root.anchoredDescriptor(of: "t").anchor)
        #expect(anchor.pinnedChild(0) === top)
        // Every child of the root was passed through, and is a branch: all pinned, each the
        // page at its address; their own children are leaves: none pinned.
        for index in top.children.indices {
            guard let child = top.pinnedChild(index) else {
                Issue.record("child \(index) of the root is not pinned after reads through it")
                continue
            }
            guard case .branch(let cached) = try view.root.pages.node(at: top.children[index]) else {
                Issue.record("child \(index) of the root is a leaf in a three-level tree")
                continue
            }
            #expect(child.children == cached.children && child.keys == cached.keys)
            #expect((0..<child.children.count).allSatisfy { child.pinnedChild($0) == nil }, "a leaf was pinned")
        }
        // With the cache emptied, reads through the pins still answer right.
        view.root.pages.cache.removeAll()
        for n in stride(from: 3, to: 30_000, by: 11) {
            #expect(try view.get(Self.key(n), in: "t") == [UInt8](repeating: UInt8(n % 251), count: 200))
        }
        #expect(try view.get(Self.key(30_000), in: "t") == nil)
    }

    /// Readers on several threads race to pin the same children: every read answers right
    /// and each slot ends with one pinned node (the loser's is released, not leaked into use).
    @Test func racingReadersPinOnce() throws {
        let fileSystem = MemoryFileSystem()
        try fileSystem.createDirectory("/stores")
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        let transaction = try store.beginWrite()
        for n in 0..<20_000 { _ = try transaction.put(Array(Self.key(n).reversed()), for: Self.key(n), in: "t") }
        try transaction.commit()
        let view = try store.read()
        let wrong = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var misses = 0
            for n in stride(from: thread, to: 20_000, by: 3) {
                if (try? view.get(Self.key(n), in: "t")) != Array(Self.key(n).reversed()) { misses += 1 }
            }
            wrong.withLock { $0 += misses }
        }
        #expect(wrong.withLock { $0 } == 0)
        let root = try #require(try view.descriptor(of: "t")).root
        guard case .branch(let top) = try view.root.pages.node(at: root) else { return }
        for index in top.children.indices {
            let first = top.pinnedChild(index)
            #expect(first == nil || first === top.pinnedChild(index))
        }
    }
}
