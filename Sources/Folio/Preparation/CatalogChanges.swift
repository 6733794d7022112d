import Synchronization

/// How many times this process has learnt that a writer in another process changed the
/// store's catalog (or replaced the history it knew), and the newest generation that did:
/// the clock of datastore readiness.
///
/// A datastore prepared in this process stays prepared only while no other writer touches
/// the catalog: another process may declare the datastore differently (an app and its
/// extension of different releases) and prepare it again. Each such change reaches this
/// process through its generation listener (the catch-up at a turn's start, or its
/// following between turns) and moves this count; every datastore is then compared with
/// the catalog again at its next use.
///
/// The report comes before the generation is published, so a read view taken after the
/// count moved may still be older than the change. A preparation that compares a view
/// therefore marks the datastore ready only if the view includes ``newestGeneration``
/// (``includesChanges(upTo:)``); a transaction's view always does (its turn's catch-up
/// published what it reported before the transaction began).
final class CatalogChanges: Sendable {
    private let changes = Atomic<Int>(0)
    private let generation = Atomic<UInt64>(0)

    /// The changes noted so far.
    var count: Int { changes.load(ordering: .acquiring) }

    /// Notes a change made by the commit of `generation`.
    func note(at generation: UInt64) {
        // The generation first: whoever sees the count moved sees at least this generation.
        _ = self.generation.max(generation, ordering: .releasing)
        changes.add(1, ordering: .releasing)
    }

    /// Whether a view of `viewGeneration` includes every change counted by now.
    func includesChanges(upTo viewGeneration: UInt64) -> Bool {
        viewGeneration >= generation.load(ordering: .acquiring)
    }
}
