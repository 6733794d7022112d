import Synchronization

/// How many times this process has learnt that a writer in another process changed the
/// store's catalog (or replaced the history it knew): the clock of datastore readiness.
///
/// A datastore prepared in this process stays prepared only while no other writer touches
/// the catalog: another process may declare the datastore differently (an app and its
/// extension of different releases) and prepare it again. Each such change reaches this
/// process through its generation listener, before any read can see it (the catch-up at a
/// turn's start, or its following between turns), and moves this count; every datastore
/// is then compared with the catalog again at its next use.
final class CatalogChanges: Sendable {
    private let changes = Atomic<Int>(0)

    /// The changes noted so far.
    var count: Int { changes.load(ordering: .acquiring) }

    /// Notes one change.
    func note() { changes.add(1, ordering: .releasing) }
}
