/// The Folio-level multi-writer workload (`folio-torture folio-writers` and its tests):
/// several writer processes commit numbered transactions into one store, each into a
/// datastore of its own and all of them into one shared datastore. The records are here,
/// in test support, so that the writers and the tests that check their store declare the
/// same instance types (the catalog records an instance type by its module-qualified name);
/// the datastore declarations live beside each, since this module does not know `Folio`.
///
/// Transaction n of writer w, in one `perform`:
///
/// - reads the shared ledger (record 0 of the shared datastore), adds one to its total and
///   to the writer's count, and records itself as the last transaction (w, n);
/// - persists entry n into the writer's own datastore, carrying the ledger's new total as
///   its place in the serial order of all writers' transactions;
/// - upserts, or (one in five) deletes, a slot of the writer in the shared datastore,
///   chosen by a seeded function of (seed, w, n): an upsert carries n and the total.
///
/// So whatever order the writers' turns took, a store holding c(w) transactions of each
/// writer has one exact content, but for the serial positions, which must be a permutation
/// of 1 ... total that keeps each writer's order.
public enum FolioWritersWorkload {
    /// Slots per writer in the shared datastore.
    public static let slots = 5
    /// The shared ledger's identifier in the shared datastore.
    public static let ledgerID = 0

    /// The shared datastore's identifier of writer `writer`'s slot `slot` (above the ledger's).
    public static func slotID(writer: Int, slot: Int) -> Int { 1 + writer * slots + slot }

    /// What transaction `n` of `writer` does to its slot: which one, and whether it deletes it.
    public static func slotStep(seed: UInt64, writer: Int, n: Int) -> (slot: Int, deletes: Bool) {
        var random = SplitMix64(seed: seed &+ UInt64(writer) << 40 &+ UInt64(n))
        return (random.index(slots), random.chance(1, in: 5))
    }

    /// The slots of `writer` after its transactions 0 ..< `count`: identifier -> the number
    /// of the transaction that last upserted it (absent: never written, or last deleted).
    public static func expectedSlots(seed: UInt64, writer: Int, count: Int) -> [Int: Int] {
        var slots: [Int: Int] = [:]
        for n in 0..<count {
            let step = slotStep(seed: seed, writer: writer, n: n)
            slots[slotID(writer: writer, slot: step.slot)] = step.deletes ? nil : n
        }
        return slots
    }
}

/// A transaction's entry in its writer's own datastore: `id` is the writer's transaction
/// number, `seq` the ledger's total after it (its place in the serial order of every
/// writer's transactions).
public struct WriterEntry: Codable, Identifiable, Sendable, Equatable {
    public var id: Int
    public var seq: Int

    public init(id: Int, seq: Int) {
        self.id = id
        self.seq = seq
    }
}

/// A record of the shared datastore: the ledger (``FolioWritersWorkload/ledgerID``), or a
/// writer's slot. The ledger's `writer` and `n` name the last transaction, `seq` is the
/// total, and `counts` each writer's number of transactions; a slot's `writer`, `n` and
/// `seq` are those of the transaction that last upserted it, and its `counts` are empty.
public struct SharedRecord: Codable, Identifiable, Sendable, Equatable {
    public var id: Int
    public var writer: Int
    public var n: Int
    public var seq: Int
    public var counts: [Int]

    public init(id: Int, writer: Int, n: Int, seq: Int, counts: [Int] = []) {
        self.id = id
        self.writer = writer
        self.n = n
        self.seq = seq
        self.counts = counts
    }

    /// The ledger of an empty store.
    public static let emptyLedger = SharedRecord(id: FolioWritersWorkload.ledgerID, writer: -1, n: -1, seq: 0)

    /// Transactions of `writer` this ledger counts.
    public func count(of writer: Int) -> Int { writer < counts.count ? counts[writer] : 0 }
}
