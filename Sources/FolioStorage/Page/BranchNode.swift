import Synchronization

/// A decoded branch page: `children.count == keys.count + 1`; child `i` holds the keys `k`
/// with `keys[i-1] <= k < keys[i]`. Its separators are slices of the page, like a leaf's keys.
///
/// A committed branch also pins the children that are branches themselves, once a descent
/// has read them: the next descent through this node takes the pinned child without the
/// page cache (no shard lock, no hash, no recency update), so a lookup touches the cache only
/// for its leaf, and for the root. Leaves are never pinned: the cache's byte limit governs them
/// (Docs/Architecture.md, "Pages read in place").
///
/// Why pinning is safe without a lock: a committed page never changes (Docs/Format.md §3),
/// so the child at `children[i]` is the same page forever, and any decoding of it is as good
/// as any other. Each slot is set at most once (a compare-and-exchange from empty); two readers that race to fill
/// one both decode the same page, one wins, and the other uses the winner. A reader that sees
/// an empty slot takes the cache path, as before pinning. The slots are released with the node.
///
/// What it holds: a pinned branch lives as long as a parent that pins it, so beyond the
/// cache's limit the pins keep at most the branch pages of the trees being read (about one
/// page in a fan-out's worth, under 1 % of a store of small records).
final class BranchNode: @unchecked Sendable {
    let keys: [ArraySlice<UInt8>]
    let children: [PageAddress]
    /// Bytes of the page this node was decoded from or encoded to: what its entries encode
    /// to, which a copy-on-write copy takes as its size without reading them.
    let pageLength: Int
    /// The page's bytes, header included, when the node has them (decoded from them, or
    /// written as them): a copy-on-write copy whose separators did not change encodes as
    /// this page with its changed children's addresses replaced (``TreePage``'s
    /// `encodeBranch(copying:…)`), a copy instead of a write per separator.
    let page: [UInt8]?
    /// `children.count` slots, each 0 until the child at that index is read and found to be
    /// a branch, then the address of that child, retained once by its slot. An integer
    /// atomic rather than `AtomicLazyReference`, whose load is a generic call (metadata
    /// lookups included) costing more than the cache lookup it saves; this one is inlined.
    /// `@unchecked Sendable` covers this pointer only: it is allocated and initialised in
    /// `init`, touched afterwards only through the atomics, and freed in `deinit`, when no
    /// other reference to the node remains.
    private let pins: UnsafeMutablePointer<Atomic<UInt>>

    init(keys: [ArraySlice<UInt8>], children: [PageAddress], pageLength: Int, page: [UInt8]? = nil) {
        self.keys = keys
        self.children = children
        self.pageLength = pageLength
        self.page = page
        pins = .allocate(capacity: children.count)
        for index in 0..<children.count { (pins + index).initialize(to: Atomic(0)) }
    }

    deinit {
        for index in 0..<children.count {
            let bits = pins[index].load(ordering: .relaxed)
            if let pointer = UnsafeRawPointer(bitPattern: bits) {
                Unmanaged<BranchNode>.fromOpaque(pointer).release()
            }
        }
        pins.deinitialize(count: children.count)
        pins.deallocate()
    }

    /// A branch of no separators and one child, the committed root at `root`: what a
    /// committed generation keeps per tree it reads, so that descents take the tree's root
    /// (once it is known to be a branch) as a pinned child, without the page cache. A
    /// descent starts at the anchor as at any branch: with no separator, every key goes to
    /// child 0, and no fence is taken from it.
    static func anchor(of root: PageAddress) -> BranchNode {
        BranchNode(keys: [], children: [root], pageLength: TreePage.emptyBranchSize)
    }

    /// The branch at child `index`, if a descent has pinned it.
    ///
    /// The returned reference is safe to take without a lock: the slot's own retain keeps
    /// the child alive for as long as this node lives, and the caller holds this node.
    @inline(__always)
    func pinnedChild(_ index: Int) -> BranchNode? {
        // Acquiring: the child's fields, written before it was published, are visible.
        let bits = pins[index].load(ordering: .acquiring)
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
        return Unmanaged<BranchNode>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Pins `child`, the decoded page at `children[index]`; returns the pinned node (another
    /// reader's, if it pinned one first).
    @discardableResult
    func pin(_ child: BranchNode, at index: Int) -> BranchNode {
        let retained = Unmanaged.passRetained(child)
        let bits = UInt(bitPattern: retained.toOpaque())
        let (exchanged, current) = pins[index].compareExchange(
            expected: 0, desired: bits, ordering: .acquiringAndReleasing)
        if exchanged { return child }
        // Another reader pinned first: keep its node, give back the retain taken for ours.
        retained.release()
        guard let pointer = UnsafeRawPointer(bitPattern: current) else { return child }
        return Unmanaged<BranchNode>.fromOpaque(pointer).takeUnretainedValue()
    }
}
