import Synchronization

/// What a write transaction read: every tree it read or wrote, with the catalog entry it
/// found for it at its first touch (nil: the tree did not exist), and whether it read the
/// list of trees itself (``WriteTransaction/treeNames()``): its read set.
///
/// Why it is enough for serializability (Docs/Architecture.md invariant 7): a tree's whole
/// state is its catalog entry, whose root is the address of a page that is never rewritten
/// (invariant 1). If, at commit, every tree this transaction touched still has the entry
/// it saw, then no commit since its base changed anything it read or wrote, and running it
/// after them, on the tip, gives the same reads and so the same writes: the commit may be
/// rebased onto the tip. Reads count as much as writes: a transaction that read X and
/// wrote Y must not commit over a commit that changed X since (write skew).
///
/// A tree only *written blind* (``WriteTransaction/putBlind(_:for:in:)``, never read through
/// the transaction, not even a write's result) is not read: its writes do not depend on
/// its contents, so a commit since the base that changed it is no conflict; the commit
/// replays the blind writes onto the tip's version of it instead (the last commit wins,
/// Docs/Architecture.md invariant 7).
///
/// Shared with the ``TransactionSnapshot``s the transaction takes (a range read of a tree
/// the transaction never touched goes to the base through its snapshot), hence a lock.
final class TreeReads: Sendable {
    private struct Entry {
        /// The base's catalog entry for the tree (nil: it did not exist).
        let descriptor: TreeDescriptor?
        /// Read through the transaction (false: only written blind so far).
        var read: Bool
    }

    private struct State {
        /// By the name's UTF-8 bytes: the first entry seen wins.
        var trees: [[UInt8]: Entry] = [:]
        var readCatalog = false
    }

    /// What a commit finds of the trees this transaction touched, against the tip.
    struct Changes {
        /// Trees read and changed since the base: the commit conflicts.
        var conflicting: [String] = []
        /// Trees only written blind and changed since the base: the commit replays their
        /// writes onto the tip's version.
        var writtenBlind: [String] = []
    }

    private let state = Mutex(State())

    /// Records that `tree` was touched, whose catalog entry in the base is `descriptor`:
    /// read (`read`), or only written blind. Only the first touch's entry counts (the base
    /// never changes); a read makes the tree read for good.
    func note(_ tree: [UInt8], _ descriptor: TreeDescriptor?, read: Bool = true) {
        state.withLock { state in
            if state.trees[tree] == nil {
                state.trees[tree] = Entry(descriptor: descriptor, read: read)
            } else if read {
                state.trees[tree]?.read = true
            }
        }
    }

    /// Records that `tree`, touched already, was read.
    func noteRead(_ tree: [UInt8]) {
        state.withLock { $0.trees[tree]?.read = true }
    }

    /// Records that the list of trees was read: any tree created or dropped since the base
    /// conflicts.
    func noteCatalog() {
        state.withLock { $0.readCatalog = true }
    }

    /// The trees whose catalog entries differ between `base` (what this transaction read)
    /// and `tip`, in name order, split into the read ones and the ones only written blind;
    /// both empty if the transaction may be committed onto `tip` as it is.
    func changes(base: CommittedRoot, tip: CommittedRoot) throws(StorageError) -> Changes {
        let (trees, readCatalog) = state.withLock { ($0.trees, $0.readCatalog) }
        var conflicting: Set<String> = []
        var writtenBlind: Set<String> = []
        for (name, entry) in trees {
            let text = String(decoding: name, as: UTF8.self)
            guard try tip.descriptor(of: text) != entry.descriptor else { continue }
            if entry.read {
                conflicting.insert(text)
            } else {
                writtenBlind.insert(text)
            }
        }
        // The list of trees says which exist, not what they hold: only creations and drops
        // since the base change what it read.
        if readCatalog && tip.record.catalogRoot != base.record.catalogRoot {
            let before = Set(try base.allDescriptors().map(\.name))
            let after = Set(try tip.allDescriptors().map(\.name))
            conflicting.formUnion(before.symmetricDifference(after))
        }
        let order = { (a: String, b: String) in ByteOrder.compare(Array(a.utf8), Array(b.utf8)) < 0 }
        return Changes(
            conflicting: conflicting.sorted(by: order),
            writtenBlind: writtenBlind.subtracting(conflicting).sorted(by: order))
    }
}
