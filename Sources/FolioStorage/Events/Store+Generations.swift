// Telling a layer above of each generation this store object creates, before any reader
// of this process can see it: what Folio's record cache needs to stay exact (Docs/Cache.md).

/// A generation this store object created, as `Store.onGenerationCreated(_:)` reports it.
package struct CreatedGeneration: Sendable {
    /// The new generation.
    package var generation: UInt64
    /// What its commit changed; nil for a compaction (same contents, new file).
    package var changes: ChangeRecord?
    /// True when a store adopted a root of another history (a writer that fell
    /// back to an older root after damage wrote commits with generations this store had
    /// seen): nothing known of `generation` or any earlier one still holds.
    package var replacesHistory = false
    /// True for a generation a writer in another process created, reported by this
    /// writer's catch-up or by its following between turns (Store+CatchUp.swift): what
    /// this process concluded from the store's contents before it (a datastore's
    /// preparation) may no longer hold.
    package var byAnotherWriter = false

    /// A report of `generation`.
    package init(
        generation: UInt64, changes: ChangeRecord?, replacesHistory: Bool = false, byAnotherWriter: Bool = false
    ) {
        self.generation = generation
        self.changes = changes
        self.replacesHistory = replacesHistory
        self.byAnotherWriter = byAnotherWriter
    }

    /// Whether this generation may have changed `tree`: its changes list the tree (or drop
    /// it), or nothing is known of what it changed (another history). A compaction changes
    /// no tree.
    package func mayHaveChanged(_ tree: String) -> Bool {
        if replacesHistory { return true }
        guard let changes else { return false }
        return changes.trees.contains { $0.tree == tree } || changes.droppedTrees.contains(tree)
    }
}

/// The listener ``Store/onGenerationCreated(_:)`` installs.
struct GenerationListener: Sendable {
    let call: @Sendable (CreatedGeneration) -> Void
}

extension Store {
    /// Calls `listener` for every generation this store object creates from now on (its
    /// commits and compactions), before any read of this process can see the generation,
    /// and not before then: in grouped durability when a commit is appended (it is
    /// published at once), in full durability when the sync that makes it durable publishes
    /// it (the writer builds on its tip before that; its own reads see its changes directly),
    /// for a compaction before its root becomes current. Called in generation order, once per
    /// generation, in the write critical section or under the root file lock; it must be
    /// quick and must not call into the store. Generations written
    /// by another process are not reported to a read-only store: a reader sees them as a
    /// generation newer than any reported; except when it adopts another history (a fork
    /// after damage, ``CreatedGeneration/replacesHistory``), which may repeat a generation.
    /// A writer that catches up after another writer (Store+CatchUp.swift) reports the
    /// other's generations it adopts, replayed with their changes, or the history replaced.
    /// Package-internal and set once, by the persistence over this store: the
    /// record cache's exactness depends on being the one listener.
    package func onGenerationCreated(_ listener: @escaping @Sendable (CreatedGeneration) -> Void) {
        generationListener.withLock { current in
            precondition(current == nil, "a store reports its generations to one listener")
            current = GenerationListener(call: listener)
        }
    }

    /// Reports `generation` to the listener, if there is one.
    func reportCreated(_ generation: UInt64, changes: ChangeRecord?, byAnotherWriter: Bool = false) {
        guard let listener = generationListener.withLock({ $0 }) else { return }
        listener.call(CreatedGeneration(generation: generation, changes: changes, byAnotherWriter: byAnotherWriter))
    }

    /// Reports that the store is about to adopt `generation` of another history, before any
    /// read can see it (``refresh()`` or a writer's catch-up, under the root file lock).
    func reportHistoryReplaced(at generation: UInt64) {
        guard let listener = generationListener.withLock({ $0 }) else { return }
        listener.call(CreatedGeneration(generation: generation, changes: nil, replacesHistory: true))
    }
}
