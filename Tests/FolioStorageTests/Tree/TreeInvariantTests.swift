import Foundation
import Testing
@testable import FolioStorage
import FolioTestSupport

/// The debug-build check of a write transaction's trees (`TreeState+Invariants.swift`):
/// it names each rule a tree built wrong by hand breaks, finds nothing wrong in trees the
/// editor builds under random puts, removes, drops, savepoints and spills, and stops the
/// process when a commit is handed a broken tree.
@Suite struct TreeInvariantTests {
    /// A value that makes a one-entry leaf about 630 bytes: over the minimum fill alone.
    static let filler = LeafValue.inline([UInt8](repeating: 7, count: 600)[...])

    static func leaf(_ keys: [String], value: LeafValue = filler) -> MutableNode {
        MutableNode(leafKeys: keys.map { bytes($0)[...] }, values: keys.map { _ in value }, epoch: 0)
    }

    static func branch(_ separators: [String], _ children: [MutableNode]) -> MutableNode {
        MutableNode(branchKeys: separators.map { bytes($0)[...] }, children: children.map { .mutable($0) }, epoch: 0)
    }

    /// A new tree holding `root`, its count and change log made to agree with `keys`.
    static func tree(_ root: MutableNode, keys: [String]) -> TreeState {
        let tree = TreeState(name: "made", descriptor: nil)
        tree.root = .mutable(root)
        tree.exists = true
        tree.count = UInt64(keys.count)
        for key in keys { tree.recordChange(bytes(key), existed: false, existsNow: true) }
        return tree
    }

    /// Two levels, three leaves: `a b | m n | x`.
    static func soundTree() -> TreeState {
        tree(
            branch(["m", "x"], [leaf(["a", "b"]), leaf(["m", "n"]), leaf(["x"])]), keys: ["a", "b", "m", "n", "x"])
    }

    static func violations(_ tree: TreeState) -> [String] { tree.invariantViolations() }

    static func expectViolation(_ tree: TreeState, _ phrase: String, sourceLocation: SourceLocation = #_sourceLocation)
    {
        let found = tree.invariantViolations()
        #expect(
            found.contains { $0.contains(phrase) }, "expected \"\(phrase)\" in \(found)", sourceLocation: sourceLocation
        )
    }

    @Test func aSoundTreeBreaksNoRule() {
        #expect(Self.violations(Self.soundTree()) == [])
    }

    @Test func keysOutOfOrderInALeafAreReported() {
        let tree = Self.tree(
            Self.branch(["m"], [Self.leaf(["b", "a"]), Self.leaf(["m", "n"])]), keys: ["a", "b", "m", "n"])
        Self.expectViolation(tree, "node 0: key 1 0x61 does not follow the key before it, 0x62")
    }

    @Test func aKeyOutsideItsSeparatorsIsReported() {
        // "c" sorts before the separator "m" that leads to the second leaf.
        let tree = Self.tree(
            Self.branch(["m"], [Self.leaf(["a", "b"]), Self.leaf(["c", "n"])]), keys: ["a", "b", "c", "n"])
        Self.expectViolation(tree, "node 1: key 0 0x63 is below its separator 0x6d")
        // The key after the separator's left child must stay below it, too.
        let other = Self.tree(
            Self.branch(["m"], [Self.leaf(["a", "q"]), Self.leaf(["r", "s"])]), keys: ["a", "q", "r", "s"])
        Self.expectViolation(other, "node 0: key 1 0x71 is not below the next separator 0x6d")
    }

    @Test func separatorsOutOfOrderOrOutsideTheirBranchAreReported() {
        let unordered = Self.tree(
            Self.branch(["x", "m"], [Self.leaf(["a"]), Self.leaf(["m"]), Self.leaf(["x"])]), keys: ["a", "m", "x"])
        Self.expectViolation(unordered, "root: separator 1 0x6d does not follow 0x78")
        // A branch below a separator "m" whose own separator "c" lies left of it.
        let inner = Self.branch(["c"], [Self.leaf(["m"]), Self.leaf(["n"])])
        let outside = Self.tree(
            Self.branch(["m"], [Self.branch(["b"], [Self.leaf(["a"]), Self.leaf(["b"])]), inner]),
            keys: ["a", "b", "m", "n"])
        Self.expectViolation(outside, "node 1: separator 0 0x63 is not above the lower bound 0x6d")
    }

    @Test func anUnderfullNodeBelowTheRootIsReported() {
        let tree = Self.tree(
            Self.branch(["m"], [Self.leaf(["a"]), Self.leaf(["m"], value: .inline([1, 2, 3]))]), keys: ["a", "m"])
        Self.expectViolation(tree, "node 1: 35 bytes, under the 500-byte minimum fill")
        // The root alone may be that small.
        #expect(Self.violations(Self.tree(Self.leaf(["m"], value: .inline([1])), keys: ["m"])) == [])
    }

    @Test func anOversizedNodeIsReported() {
        let keys = (0..<8).map { "k\($0)" }
        let tree = Self.tree(Self.leaf(keys), keys: keys)
        Self.expectViolation(tree, "over the 4096-byte split size")
    }

    @Test func aWrongRecordedSizeIsReported() {
        let tree = Self.soundTree()
        guard case .mutable(let root)? = tree.root, case .mutable(let first) = root.children[0] else {
            Issue.record("the tree is built of mutable nodes")
            return
        }
        // A leaf's recorded size is the byte count its entries keep.
        first.entries.entryBytes += 1
        Self.expectViolation(tree, "node 0: recorded size")
    }

    @Test func leavesAtDifferentDepthsAreReported() {
        let deep = Self.branch(["n"], [Self.leaf(["m"]), Self.leaf(["n"])])
        let tree = Self.tree(Self.branch(["m"], [Self.leaf(["a"]), deep]), keys: ["a", "m", "n"])
        Self.expectViolation(tree, "a leaf at depth 3, another at depth 2")
    }

    @Test func aCountThatDisagreesIsReported() {
        let tree = Self.soundTree()
        tree.count += 1
        Self.expectViolation(tree, "root: count is 6, the leaves hold 5 keys")
        Self.expectViolation(tree, "root: count is 6, the change log makes it 5")
    }

    @Test func aBranchOfTheWrongShapeIsReported() {
        let oneChild = Self.tree(Self.branch([], [Self.leaf(["a"])]), keys: ["a"])
        Self.expectViolation(oneChild, "root: a root branch with one child")
        let missing = Self.branch(["m", "x"], [Self.leaf(["a"]), Self.leaf(["m"])])
        Self.expectViolation(Self.tree(missing, keys: ["a", "m"]), "a branch with 2 separators, 2 children")
    }

    /// Random puts (a few values large enough for overflow pages), removes, ranged removes
    /// and drops, with savepoints rolled back and statements that fail, over a store that
    /// spills every 32 KiB: every tree is checked after every operation, not only at the
    /// commit.
    @Test(arguments: 0..<6)
    func randomEditsKeepEveryRule(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed &+ 101)
        let fileSystem = MemoryFileSystem()
        try fileSystem.createDirectory("/stores")
        let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
        defer { store.close() }
        let names = ["one", "two"]
        var checked = 0, spills = 0
        for _ in 0..<6 {
            let transaction = try store.beginWrite()
            var savepoint: Savepoint?
            for _ in 0..<500 {
                let name = names[Int.random(in: 0..<names.count, using: &rng)]
                let key = Array("key\(Int.random(in: 0..<900, using: &rng))".utf8)
                let roll = Int.random(in: 0..<1_000, using: &rng)
                if roll < 560 {
                    let length = roll < 10 ? 3_000 : Int.random(in: 0...400, using: &rng)
                    try transaction.put([UInt8](repeating: UInt8(roll % 256), count: length), for: key, in: name)
                } else if roll < 940 {
                    try transaction.remove(key, from: name)
                } else if roll < 960 {
                    let upper = Array("key\(Int.random(in: 0..<900, using: &rng))".utf8)
                    try transaction.removeAll(in: KeyRange(lower: .included(key), upper: .excluded(upper)), from: name)
                } else if roll < 963 {
                    try transaction.dropTree(name)
                } else if roll < 975 {
                    if let savepoint { transaction.rollback(to: savepoint) }
                    savepoint = try transaction.savepoint()
                } else {
                    // A statement that fails after its writes: they are undone key by key.
                    struct Failed: Error {}
                    _ = try? transaction.atomically { () throws(Failed) in
                        _ = try? transaction.put([1, 2, 3], for: key, in: name)
                        _ = try? transaction.remove(Array("key\(roll)".utf8), from: name)
                        throw Failed()
                    }
                }
                for tree in transaction.contents.trees.values {
                    #expect(tree.invariantViolations() == [], "seed \(seed), tree \(tree.name)")
                    checked += 1
                }
            }
            spills += transaction.contents.spill.count
            try transaction.commit()
        }
        #expect(checked > 0 && spills > 0)
        #expect(store.verify().isClean)
    }

    #if DEBUG
    /// The check runs at every commit of a debug build: a commit handed a broken tree stops
    /// the process, naming the tree and the rule, before it writes a page.
    @Test func aCommitOfABrokenTreeStopsTheProcess() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let fileSystem = MemoryFileSystem()
            try fileSystem.createDirectory("/stores")
            let store = try Store.open(at: "/stores/s", options: testOptions(fileSystem))
            let transaction = try store.beginWrite()
            try transaction.put([1], for: [2], in: "broken")
            try transaction.put([1], for: [1], in: "broken")
            let tree = try #require(transaction.contents.trees[Array("broken".utf8)])
            guard case .mutable(let leaf)? = tree.root else { return }
            leaf.entries.starts.reverse()
            try transaction.commit()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("tree \"broken\" breaks its invariants"), "\(message)")
        #expect(message.contains("root: key 1 0x01 does not follow the key before it, 0x02"), "\(message)")
    }
    #endif
}
