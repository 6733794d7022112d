/// What a write transaction holds: its trees, whether it may go on, what is frozen for
/// savepoints and cursors, the running statement and the spill state. Every access happens
/// under `guarded` (WriteTransaction.swift), one call at a time, so its properties need no
/// runtime exclusivity check (`@exclusivity(unchecked)`, argued at TreeState).
extension WriteTransaction {
    final class Contents {
        /// The commit the transaction reads (`WriteTransaction.base`); set once by `init`,
        /// then only moved forward by `advanceToTip()`.
        @exclusivity(unchecked) var base: CommittedRoot

        // The trees.

        /// Keyed by the name's UTF-8 bytes, as the catalog compares names (see CommittedRoot).
        @exclusivity(unchecked) var trees: [[UInt8]: TreeState] = [:]
        /// The trees used most recently, checked before `trees`: a datastore write touches
        /// the same few trees over and over, and comparing a name's UTF-8 in place is
        /// cheaper than allocating and hashing its bytes.
        @exclusivity(unchecked) var recent: [TreeState] = []

        // Whether it may go on.

        @exclusivity(unchecked) var finished = false
        /// Set when an edit failed part-way (a page could not be read): the trees may be
        /// inconsistent, so nothing but a rollback is allowed until one restores a state
        /// from before the failure.
        @exclusivity(unchecked) var broken: String?
        /// Set when a spill found the end of the file held by another transaction: this one
        /// cannot go on (its writes may be over the spill budget), and everything but a
        /// rollback throws `writeConflict` (retryable).
        @exclusivity(unchecked) var conflicted = false

        // Undoing part of it, and spilling.

        /// Which mutable nodes savepoints and cursors keep from being edited in place.
        @exclusivity(unchecked) var freezing = Freezing()
        /// The statement running (``atomically(_:)``): how to undo it.
        @exclusivity(unchecked) var statement: StatementUndo?
        /// The log `statement` points at while one runs.
        let statementLog = StatementUndo()
        /// Pages spilled so far (see WriteTransaction+Spill.swift).
        @exclusivity(unchecked) var spill = SpillState()

        init(base: CommittedRoot) {
            self.base = base
        }

        /// The change logs may be compacted: no savepoint or statement counts their entries.
        var mayCompactChanges: Bool { freezing.savepoints.isEmpty && statement == nil }
    }

    /// The epochs of mutable nodes (WriteTransaction+Savepoint.swift): every node records the
    /// epoch it was created in; a savepoint or a cursor bumps the epoch, and an edit copies
    /// a node of an epoch below ``mutableFrom`` instead of changing it.
    struct Freezing {
        /// The epoch new mutable nodes are created in; bumped by every savepoint and cursor.
        var epoch: UInt64 = 0
        /// Nodes older than this epoch may be referenced by a cursor: frozen for good.
        var cursorFloor: UInt64 = 0
        /// Live savepoints, oldest first (their levels increase).
        var savepoints: [SavedState] = []
        var nextSavepoint: UInt64 = 1

        /// Mutable nodes below this epoch are frozen: a live savepoint or a cursor may
        /// reference them, so an edit copies them first.
        var mutableFrom: UInt64 { max(cursorFloor, savepoints.last?.level ?? 0) }
    }
}
