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
/// Shared with the ``TransactionSnapshot``s the transaction takes (a range read of a tree
/// the transaction never touched goes to the base through its snapshot), hence a lock.
final class TreeReads: Sendable {
    private struct State {
        /// By the name's UTF-8 bytes: the first entry seen wins.
        var trees: [[UInt8]: TreeDescriptor?] = [:]
        var readCatalog = false
    }

    private let state = Mutex(State())

    /// Records that `tree` was read or written, whose catalog entry in the base is
    /// `descriptor`. Only the first touch counts: the base never changes.
    func note(_ tree: [UInt8], _ descriptor: TreeDescriptor?) {
        state.withLock { state in
            if state.trees[tree] == nil { state.trees[tree] = .some(descriptor) }
        }
    }

    /// Records that the list of trees was read: any tree created or dropped since the base
    /// conflicts.
    func noteCatalog() {
        state.withLock { $0.readCatalog = true }
    }

    /// The trees whose catalog entries differ between `base` (what this transaction read)
    /// and `tip`, in name order; empty if the transaction may be rebased onto `tip`.
    func conflicts(base: CommittedRoot, tip: CommittedRoot) throws(StorageError) -> [String] {
        let (trees, readCatalog) = state.withLock { ($0.trees, $0.readCatalog) }
        var changed: Set<String> = []
        for (name, seen) in trees {
            let text = String(decoding: name, as: UTF8.self)
            if try tip.descriptor(of: text) != seen { changed.insert(text) }
        }
        // The list of trees says which exist, not what they hold: only creations and drops
        // since the base change what it read.
        if readCatalog && tip.record.catalogRoot != base.record.catalogRoot {
            let before = Set(try base.allDescriptors().map(\.name))
            let after = Set(try tip.allDescriptors().map(\.name))
            changed.formUnion(before.symmetricDifference(after))
        }
        return changed.sorted { ByteOrder.compare(Array($0.utf8), Array($1.utf8)) < 0 }
    }
}
