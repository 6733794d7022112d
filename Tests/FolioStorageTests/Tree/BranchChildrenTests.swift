import Foundation
import Testing
@testable import FolioStorage
import FolioTestSupport

/// A mutable branch's children (`BranchChildren`): the committed page's addresses shared
/// until a child changes, and only the changed children held as nodes. The same edits
/// applied to it and to a plain array of references give the same children, and copying a
/// committed branch copies neither its addresses nor its size's entries.
@Suite struct BranchChildrenTests {
    static func same(_ a: NodeRef, _ b: NodeRef) -> Bool {
        switch (a, b) {
        case (.stored(let x), .stored(let y)): return x == y
        case (.mutable(let x), .mutable(let y)): return x === y
        default: return false
        }
    }

    static func expectSame(_ children: BranchChildren, _ model: [NodeRef], _ step: String) {
        #expect(children.count == model.count, "\(step): \(children.count) children, expected \(model.count)")
        guard children.count == model.count else { return }
        let mismatches = model.indices.filter { !same(children[$0], model[$0]) }
        #expect(mismatches.isEmpty, "\(step): children \(mismatches) differ")
        // The changed children stay in strictly ascending index order, each within range.
        let indexes = children.changed.map(\.index)
        #expect(zip(indexes, indexes.dropFirst()).allSatisfy { $0 < $1 } && indexes.allSatisfy { $0 < model.count })
    }

    @Test func editsMatchAnArrayOfReferences() {
        var random = SplitMix64(seed: 27)
        let nodes = (0..<12).map { _ in MutableNode(leafKeys: [], values: [], epoch: 0) }
        func randomRef() -> NodeRef {
            random.next() % 2 == 0
                ? .stored(PageAddress(offset: 64 + random.next() % 10_000, length: 600))
                : .mutable(nodes[Int(random.next() % UInt64(nodes.count))])
        }
        func randomRefs(_ count: Int) -> [NodeRef] { (0..<count).map { _ in randomRef() } }
        let start = (0..<40).map { PageAddress(offset: 64 + 600 * UInt64($0), length: 600) }
        var children = BranchChildren(stored: start)
        var model = start.map { NodeRef.stored($0) }
        for step in 0..<2_000 {
            let count = model.count
            switch random.next() % 8 {
            case 0 where count > 0, 1 where count > 0:
                let index = Int(random.next() % UInt64(count))
                let ref = randomRef()
                children[index] = ref
                model[index] = ref
            case 2:
                let index = Int(random.next() % UInt64(count + 1))
                let refs = randomRefs(Int(random.next() % 4))
                children.insert(contentsOf: refs, at: index)
                model.insert(contentsOf: refs, at: index)
            case 3 where count > 1:
                let index = Int(random.next() % UInt64(count))
                children.remove(at: index)
                model.remove(at: index)
            case 4 where count > 1:
                let index = 1 + Int(random.next() % UInt64(count - 1))
                children.removeSubrange(index...)
                model.removeSubrange(index...)
            case 5 where count > 1:
                let low = Int(random.next() % UInt64(count)), high = low + Int(random.next() % UInt64(count - low))
                let refs = randomRefs(Int(random.next() % 4))
                children.replaceSubrange(low...high, with: refs)
                model.replaceSubrange(low...high, with: refs)
            case 6:
                let other = randomRefs(Int(random.next() % 5))
                children = children + BranchChildren(other)
                model += other
            default:
                // Every child changed: the branch a transaction built itself.
                let refs = (0..<Int(random.next() % 6 + 2)).map { _ in
                    NodeRef.mutable(nodes[Int(random.next() % UInt64(nodes.count))])
                }
                children = BranchChildren(refs)
                model = refs
            }
            if model.count > 200 {
                children.removeSubrange(100...)
                model.removeSubrange(100...)
            }
            Self.expectSame(children, model, "step \(step)")
            // A slice of the children, as a split takes its right half.
            if step % 50 == 0 && model.count > 2 {
                let from = model.count / 2
                Self.expectSame(BranchChildren(children[from...]), Array(model[from...]), "suffix at \(step)")
            }
        }
    }

    /// A copy of a committed branch shares the page's address array (no array of
    /// references is built), and a copy of a committed page takes the page's length as its
    /// size, which is what its entries encode to.
    @Test func aCopiedPageSharesItsChildrenAndTakesItsLengthAsItsSize() throws {
        let separators = (0..<20).map { Array("separator-\(100 + $0)".utf8)[...] }
        let addresses = (0...20).map { PageAddress(offset: UInt64(64 + 600 * $0), length: 600) }
        var writer = ByteWriter()
        TreePage.encodeBranch(keys: separators, children: addresses, generation: 3, into: &writer, at: 1 << 20)
        let branchPage = writer.bytes
        let branchAddress = PageAddress(offset: 1 << 20, length: UInt32(branchPage.count))
        let storedBranch = try TreePage.decode(branchPage, address: branchAddress, file: "test")
        guard case .branch(let branch) = storedBranch else {
            Issue.record("a branch page decoded as a leaf")
            return
        }
        let copy = MutableNode(copying: storedBranch, epoch: 1)
        #expect(copy.size == branchPage.count && copy.size == MutableNode.branchSize(keys: copy.keys))
        let shared = copy.children.addresses.withUnsafeBufferPointer { copied in
            branch.children.withUnsafeBufferPointer { $0.baseAddress == copied.baseAddress }
        }
        #expect(shared, "copying a committed branch copied its child addresses")
        #expect(copy.children.changed.isEmpty)
        // Changing one child holds one node; the others are still the page's addresses.
        let leaf = MutableNode(leafKeys: [], values: [], epoch: 1)
        copy.children[7] = .mutable(leaf)
        #expect(copy.children.changed.count == 1)
        #expect(Self.same(copy.children[7], .mutable(leaf)) && Self.same(copy.children[8], .stored(addresses[8])))

        let keys = (0..<30).map { Array("key-\(1_000 + $0)".utf8)[...] }
        let values = (0..<30).map { LeafValue.inline(Array(repeating: UInt8($0), count: 20 + $0)[...]) }
        writer = ByteWriter()
        TreePage.encodeLeaf(keys: keys, values: values, generation: 3, into: &writer, at: 1 << 20)
        let leafPage = writer.bytes
        let leafAddress = PageAddress(offset: 1 << 20, length: UInt32(leafPage.count))
        let leafCopy = MutableNode(copying: try TreePage.decode(leafPage, address: leafAddress, file: "test"), epoch: 1)
        #expect(leafCopy.size == leafPage.count)
        #expect(leafCopy.size == PageHeader.size + leafCopy.entries.measuredEntryBytes())
    }
}
