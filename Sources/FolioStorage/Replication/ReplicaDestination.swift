/// Where a ``Replicator`` ships a store: a directory (``DirectoryReplica``), or another
/// place a separate package implements (object storage, a server) without the core
/// depending on it.
///
/// The replicator calls these in a fixed order, which is what keeps the replica valid at
/// every step: it writes a run's bytes (``write(_:toSnapshot:at:)``), makes them durable
/// (``synchronize()``), and only then publishes the root slot that names them
/// (``publish(rootSlot:generation:)``). So a replica killed or cut off at any moment still
/// holds the last root it published and every byte that root reaches. Bytes written but
/// not yet named by a published root are untrusted: the replicator sends them again.
///
/// A session begins with ``holdings()`` and ends with ``finish()``. Every call comes from one
/// thread at a time (the replicator's); a destination need not be safe to share between two
/// replicators, and should refuse a second replicator while one ships (as
/// ``DirectoryReplica`` does with a lock).
public protocol ReplicaDestination: AnyObject, Sendable {
    /// A description for messages (a path or an address).
    var name: String { get }

    /// What the destination holds now, or nil if it holds no store yet (nothing, or an
    /// empty directory). Throws if it holds something that is not a replica of a store.
    func holdings() throws(StorageError) -> ReplicaHoldings?

    /// Starts an empty replica: records the source's info file (Docs/Format.md §2), byte for
    /// byte. Called once, before anything else is written to a destination that holds
    /// nothing.
    func begin(info: [UInt8]) throws(StorageError)

    /// Writes `bytes` into snapshot file `number` at `offset`, creating the file if needed.
    /// Bytes past `offset + bytes.count` that the file already holds may stay (they are
    /// never named by a published root).
    func write(_ bytes: [UInt8], toSnapshot number: UInt64, at offset: UInt64) throws(StorageError)

    /// Makes every byte written so far durable, and the names of files created so far.
    func synchronize() throws(StorageError)

    /// Publishes `rootSlot` (one 128-byte root slot, Docs/Format.md §8) of `generation`:
    /// from now on the replica opens at it. Everything it names was written and
    /// synchronized before. A destination may publish lazily (the slot durable later), as
    /// long as some earlier published slot stays durable until then.
    func publish(rootSlot: [UInt8], generation: UInt64) throws(StorageError)

    /// Makes the last published root durable: after a power cut the replica opens at it
    /// (or later). Called before a snapshot file that an earlier root named is removed.
    func makePublishedRootDurable() throws(StorageError)

    /// Removes snapshot file `number`: no root the replica may open at names it, or reaches
    /// it along the chain (the root naming the file after it is durable).
    func removeSnapshot(_ number: UInt64) throws(StorageError)

    /// Makes the last published root durable and lets go of what the destination holds
    /// open (its lock included). Called when the replicator stops; the next call after it
    /// is ``holdings()``.
    func finish() throws(StorageError)
}

/// What a replica destination holds (``ReplicaDestination/holdings()``).
public struct ReplicaHoldings: Sendable, Equatable {
    /// The info file it recorded.
    public var info: [UInt8]
    /// Its root file, as Docs/Format.md §8 lays it out (4224 bytes: the slots at 0 and 4096).
    public var rootFile: [UInt8]
    /// Its snapshot files: number and length in bytes.
    public var snapshots: [UInt64: UInt64]

    /// A destination's holdings.
    public init(info: [UInt8], rootFile: [UInt8], snapshots: [UInt64: UInt64]) {
        self.info = info
        self.rootFile = rootFile
        self.snapshots = snapshots
    }
}
