import Synchronization
import FolioStorage

/// Decoded records kept in memory by datastore and identifier, so a repeated read of an
/// unchanged record costs a hash lookup instead of a tree descent and a JSON decode
/// (Docs/Cache.md, "The record cache").
///
/// **Exactness.** An entry is the instance decoded from a record's bytes as of generation
/// `since`, and it is only ever returned to a read of a generation `S` with
/// `since <= S <= known`, where `known` is the newest generation whose changes the cache
/// has applied. The argument, in three parts:
/// - *Own commits.* The store reports each generation this process creates before any read
///   can see it, and not earlier: at publication, in both durabilities
///   (`Store.onGenerationCreated(_:)`). `generationCreated` first raises `known`, then
///   drops every record the commit changed. So an entry still present when
///   `known` reaches `G` was not changed by any commit after `since` up to `G`.
/// - *Inserts cannot resurrect a stale value.* A read of generation `S` inserts only if
///   `known == S`, checked under the entry's shard lock, the lock the drop of that key also
///   takes. If a commit `G > S` raised `known` before the check, the insert is refused; if
///   after, its drop takes the shard lock after the insert and removes the entry.
/// - *Generations this cache never heard of* (another process's commits, seen by a
///   read-only persistence or after that process wrote): a read of `S > known` raises
///   `floor` to `S`, then `known`, then empties the cache. Entries older than `floor` are
///   never served, so a concurrent read of `S` cannot pick one from a shard not emptied yet.
///   Nothing is served for the read that found `S`.
/// - *Another history* (a read-only store that adopts the commits of a writer that fell
///   back to an older root after damage, whose generations may repeat ones read here):
///   reported as `replacesHistory`, it raises `floor` past that generation and empties the
///   cache, so nothing read in either history at that generation is served.
/// - *One listener.* The engine's generation reports reach this cache only (the hook is
///   package-internal, set once per store by `PersistenceCore`).
/// - *Closed stores.* Reads of a closed persistence fail before they reach the cache
///   (`Datastore.cachedNewest` asks the store for its generation only while it is open).
///
/// Entries remember the format that decoded them: two formats declaring the same datastore
/// key may decode the same bytes differently. Instances of class type are never cached
/// (every read returns a fresh object, as without a cache).
///
/// Reads inside a write transaction never use the cache (they must see the transaction's
/// own writes), and neither do reads of a transaction's snapshot.
final class RecordCache: Sendable {
    /// A record: its datastore's records tree and its identifier key.
    struct Key: Hashable, Sendable {
        let tree: String
        let identifier: [UInt8]

        // The identifier hashed in one call over its buffer: `[UInt8]`'s own hashing feeds
        // the hasher a byte at a time, which was a quarter of a cached key-value read.
        func hash(into hasher: inout Hasher) {
            hasher.combine(tree)
            identifier.withUnsafeBytes { hasher.combine(bytes: $0) }
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.identifier == rhs.identifier && lhs.tree == rhs.tree
        }
    }

    /// A decoded instance and the generation it was read in.
    struct Entry: Sendable {
        let instance: any Sendable
        let since: UInt64
        /// The format that decoded it (`ObjectIdentifier` of the format type).
        let format: ObjectIdentifier
    }

    private let entries: MemoryCache<Key, Entry>
    /// The newest generation whose changes the cache has applied.
    private let known: Atomic<UInt64>
    /// Entries read before this generation are not served: raised, before `known`, to a
    /// generation another process wrote (see the type's comment).
    private let floor = Atomic<UInt64>(0)

    /// Whether the cache holds entries of a tree: the commits' changes to other trees are
    /// not looked at.
    private let tracks: @Sendable (String) -> Bool

    /// A cache with `limits`, for a store whose newest generation is `generation`, of the
    /// trees `tracks` accepts (by default datastores' records trees; the key-value store's
    /// cache is another instance, over its tree).
    init(
        limits: RecordCacheLimits, generation: UInt64,
        tracks: @escaping @Sendable (String) -> Bool = DatastoreLayout.isRecordsTree
    ) {
        entries = MemoryCache(limits: MemoryCacheLimits(count: limits.count, cost: limits.bytes, age: limits.age))
        known = Atomic(generation)
        self.tracks = tracks
    }

    /// The instance of `identifier` in `tree` as of generation `generation`, if cached.
    func instance<Instance>(
        _ identifier: [UInt8], in tree: String, generation: UInt64, format: ObjectIdentifier
    ) -> Instance? {
        let newest = known.load(ordering: .acquiring)
        guard generation <= newest else {
            catchUp(to: generation)
            return nil
        }
        guard let entry = entries.value(forKey: Key(tree: tree, identifier: identifier)), entry.since <= generation,
            entry.format == format, entry.since >= floor.load(ordering: .acquiring)
        else {
            return nil
        }
        return entry.instance as? Instance
    }

    /// Keeps `instance`, decoded from `bytes` stored bytes of `identifier` in generation
    /// `generation`, unless the cache has seen a newer generation (see the type's comment).
    func insert(
        _ instance: some Sendable, _ identifier: [UInt8], in tree: String, generation: UInt64, bytes: Int,
        format: ObjectIdentifier
    ) {
        entries.insert(
            Entry(instance: instance, since: generation, format: format),
            forKey: Key(tree: tree, identifier: identifier),
            cost: bytes, if: { self.known.load(ordering: .acquiring) == generation })
    }

    /// A generation this process created, reported before any read can see it: raise
    /// `known` first, then drop what it changed (the order the type's comment relies on).
    func generationCreated(_ created: CreatedGeneration) {
        if created.replacesHistory {
            // Another history's `generation` may be one this cache has entries of: none of
            // them, nor any inserted by a read still on the first history, is ever served
            // again (floor above it); the next generation's first read empties the rest.
            Self.raise(floor, to: created.generation &+ 1)
            raiseKnown(to: created.generation)
            entries.removeAll()
            return
        }
        raiseKnown(to: created.generation)
        guard let changes = created.changes else { return }  // compaction: same records
        for changed in changes.trees where tracks(changed.tree) {
            // Any key of a tree changed wholesale may have changed: drop the tree's entries.
            if changed.isChangedWholesale {
                entries.removeAll { key, _ in key.tree == changed.tree }
                continue
            }
            entries.removeValues(forKeys: changed.entries.map { Key(tree: changed.tree, identifier: $0.key) })
        }
        for tree in changes.droppedTrees where tracks(tree) {
            entries.removeAll { key, _ in key.tree == tree }
        }
    }

    /// A read saw generation `generation`, newer than any reported: another process wrote
    /// it, and what it changed is unknown here, so nothing cached may be trusted past it.
    private func catchUp(to generation: UInt64) {
        Self.raise(floor, to: generation)  // first: a read that sees the new `known` sees this
        Self.raise(known, to: generation)
        entries.removeAll()
    }

    private func raiseKnown(to generation: UInt64) { Self.raise(known, to: generation) }

    private static func raise(_ value: borrowing Atomic<UInt64>, to generation: UInt64) {
        var current = value.load(ordering: .relaxed)
        while current < generation {
            let (exchanged, original) = value.compareExchange(
                expected: current, desired: generation, ordering: .acquiringAndReleasing)
            if exchanged { return }
            current = original
        }
    }

    /// Counts since the cache was made.
    var statistics: MemoryCacheStatistics { entries.statistics }
}
