/// A mutable branch's children: the committed pages' addresses, and the nodes this
/// transaction changed, by index.
///
/// Why not an array of ``NodeRef``: copying a committed branch to change one child would
/// build an array of a hundred references, and releasing it after the commit would destroy
/// them one by one (with the commit's encoding of the branch, a tenth of a single-record
/// commit's instructions). Here the copy shares the decoded page's address array (plain
/// integers: copied, if ever, by one `memcpy`, and freed without a loop), and only the
/// changed children are references.
///
/// Invariant: `changed` is sorted by strictly ascending index, every index is below
/// `addresses.count`, and a child in `changed` is the child at its index (its address slot
/// holds whatever the page had there, and is never read).
struct BranchChildren: RandomAccessCollection {
    /// A child this transaction changed.
    struct Changed {
        var index: Int
        var node: MutableNode
    }

    /// Child `i`'s committed page (stale where `changed` holds child `i`).
    private(set) var addresses: [PageAddress]
    /// The changed children, by ascending index.
    private(set) var changed: [Changed]

    /// No children (a leaf's).
    init() {
        addresses = []
        changed = []
    }

    /// The children of a committed branch: shares its array.
    init(stored addresses: [PageAddress]) {
        self.addresses = addresses
        changed = []
    }

    /// The children `refs`, in order.
    init(_ refs: some Sequence<NodeRef>) {
        addresses = []
        changed = []
        for ref in refs {
            switch ref {
            case .stored(let address): addresses.append(address)
            case .mutable(let node):
                changed.append(Changed(index: addresses.count, node: node))
                addresses.append(.none)
            }
        }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { addresses.count }

    /// Where child `index` is or would go in `changed`, and whether it is there.
    @inline(__always)
    private func position(of index: Int) -> (found: Bool, at: Int) {
        // Every child changed (a branch this transaction built): `changed[i]` is child `i`.
        if changed.count == addresses.count { return (true, index) }
        var low = 0, high = changed.count
        while low < high {
            let mid = (low + high) >> 1
            if changed[mid].index < index { low = mid + 1 } else { high = mid }
        }
        return (low < changed.count && changed[low].index == index, low)
    }

    /// The first position in `changed` whose index is at least `index`.
    private func firstChanged(atOrAfter index: Int) -> Int {
        var low = 0, high = changed.count
        while low < high {
            let mid = (low + high) >> 1
            if changed[mid].index < index { low = mid + 1 } else { high = mid }
        }
        return low
    }

    subscript(index: Int) -> NodeRef {
        get {
            let (found, at) = position(of: index)
            return found ? .mutable(changed[at].node) : .stored(addresses[index])
        }
        set {
            precondition(index >= 0 && index < addresses.count, "child index out of range")
            let (found, at) = position(of: index)
            switch newValue {
            case .mutable(let node):
                if found {
                    // Most edits hand back the child they were given (changed in place):
                    // nothing to store.
                    if changed[at].node !== node { changed[at].node = node }
                } else if at == changed.count {
                    // Cheaper than an insertion at the end (which takes the generic path).
                    changed.append(Changed(index: index, node: node))
                } else {
                    changed.insert(Changed(index: index, node: node), at: at)
                }
            case .stored(let address):
                if found { changed.remove(at: at) }
                addresses[index] = address
            }
        }
    }

    /// Replaces the children in `range` by `refs`.
    mutating func replaceSubrange(_ range: Range<Int>, with refs: some Collection<NodeRef>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= addresses.count, "child range out of bounds")
        let first = firstChanged(atOrAfter: range.lowerBound)
        let end = firstChanged(atOrAfter: range.upperBound)
        var newAddresses: [PageAddress] = []
        var newChanged: [Changed] = []
        newAddresses.reserveCapacity(refs.count)
        for ref in refs {
            switch ref {
            case .stored(let address): newAddresses.append(address)
            case .mutable(let node):
                newChanged.append(Changed(index: range.lowerBound + newAddresses.count, node: node))
                newAddresses.append(.none)
            }
        }
        // The children after the range move by the difference in length.
        let shift = refs.count - range.count
        if shift != 0 {
            for position in end..<changed.count { changed[position].index += shift }
        }
        changed.replaceSubrange(first..<end, with: newChanged)
        addresses.replaceSubrange(range, with: newAddresses)
    }

    mutating func replaceSubrange(_ range: ClosedRange<Int>, with refs: some Collection<NodeRef>) {
        replaceSubrange(range.lowerBound..<(range.upperBound + 1), with: refs)
    }

    mutating func insert(contentsOf refs: some Collection<NodeRef>, at index: Int) {
        replaceSubrange(index..<index, with: refs)
    }

    mutating func remove(at index: Int) {
        replaceSubrange(index..<(index + 1), with: EmptyCollection())
    }

    mutating func removeSubrange(_ range: PartialRangeFrom<Int>) {
        replaceSubrange(range.lowerBound..<addresses.count, with: EmptyCollection())
    }

    /// The children of `left` followed by those of `right`.
    static func + (left: BranchChildren, right: BranchChildren) -> BranchChildren {
        var joined = left
        joined.addresses.append(contentsOf: right.addresses)
        joined.changed.reserveCapacity(left.changed.count + right.changed.count)
        for child in right.changed {
            joined.changed.append(Changed(index: child.index + left.addresses.count, node: child.node))
        }
        return joined
    }
}
