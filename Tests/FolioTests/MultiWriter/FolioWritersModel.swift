import Foundation
import Testing
import Folio
import FolioTestSupport

// The datastores of `folio-torture folio-writers` (FolioWritersWorkload in test support),
// declared as Sources/folio-torture/FolioWritersFormats.swift declares them: same keys,
// instance types, versions and indexes, so that this process reads what the writers wrote
// without preparing anything again.

/// Writer `writer`'s own datastore.
protocol WriterEntriesFormat: DatastoreFormat where Instance == WriterEntry, Identifier == Int {
    static var writer: Int { get }
    var seq: Index<WriterEntry, Int> { get }
}

struct WriterEntries0: WriterEntriesFormat {
    static let key = "writer-0"
    static let writer = 0
    let seq = Index(\WriterEntry.seq)
}

struct WriterEntries1: WriterEntriesFormat {
    static let key = "writer-1"
    static let writer = 1
    let seq = Index(\WriterEntry.seq)
}

struct WriterEntries2: WriterEntriesFormat {
    static let key = "writer-2"
    static let writer = 2
    let seq = Index(\WriterEntry.seq)
}

/// The shared datastore: the ledger and every writer's slots.
struct SharedFormat: DatastoreFormat {
    static let key = "shared"
    typealias Instance = SharedRecord
    let writer = Index(\SharedRecord.writer)
    let n = Index(\SharedRecord.n)
}

/// What `folio-writers` processes leave in a store, checked after a kill and at the end.
enum FolioWritersModel {
    /// The own datastores of the writers the tests run, by writer.
    static let formats: [any WriterEntriesFormat.Type] = [
        WriterEntries0.self, WriterEntries1.self, WriterEntries2.self,
    ]

    /// Creates the store with the ledger and every datastore prepared, so that a read-only
    /// observer can open them before any writer has written.
    static func create(at path: String) async throws {
        let persistence = try Persistence(at: path, options: PersistenceOptions(log: { _ in }))
        defer { persistence.close() }
        try await persistence.perform {
            try await persistence.datastore(for: SharedFormat.self).persist(.emptyLedger)
            for format in formats { _ = try await count(persistence, format) }
        }
    }

    /// Checks the store in one snapshot of `persistence`: each writer's entries are exactly
    /// its transactions 0 ..< c (no gap), c as the ledger counts it (no half transaction)
    /// and past every acknowledged one; the serial positions of all entries are exactly
    /// 1 ... the ledger's total (no lost update: the transactions ran in some serial order),
    /// in each writer's own order, and the last of them is the ledger's last transaction;
    /// the shared slots are what the writers' transactions leave in that order; and every
    /// index query agrees with a scan. Returns each writer's count and the ledger.
    static func check(
        _ persistence: Persistence<some AccessMode>, seed: UInt64, acknowledged: [Int], context: String
    ) async throws -> (counts: [Int], ledger: SharedRecord) {
        try await persistence.read {
            let shared = persistence.datastore(for: SharedFormat.self)
            let all = try await shared.load(...).collect()
            let ledger = try #require(all.first { $0.id == FolioWritersWorkload.ledgerID }, "\(context): no ledger")
            var counts: [Int] = []
            var positions: [Int] = []
            var slotsHeld: [Int: SharedRecord] = [:]
            for record in all where record.id != FolioWritersWorkload.ledgerID { slotsHeld[record.id] = record }
            for (writer, format) in formats.enumerated() {
                let entries = try await entries(persistence, format)
                let count = ledger.count(of: writer)
                #expect(
                    entries.map(\.id) == Array(0..<count),
                    "\(context): writer \(writer) holds \(entries.count) entries, the ledger counts \(count) (a gap or half a transaction): \(entries.map(\.id).suffix(5))"
                )
                #expect(
                    count > acknowledged[writer],
                    "\(context): writer \(writer) lost acknowledged transactions (\(count), acknowledged \(acknowledged[writer]))"
                )
                #expect(
                    entries.map(\.seq) == entries.map(\.seq).sorted(),
                    "\(context): writer \(writer)'s transactions are out of its order in the serial order")
                counts.append(count)
                positions += entries.map(\.seq)
                if entries.contains(where: { $0.seq == ledger.seq }) {
                    #expect(
                        ledger.writer == writer && entries.last?.seq == ledger.seq,
                        "\(context): the ledger names \(ledger.writer).\(ledger.n) last, not writer \(writer)")
                }
                // The slots, as its transactions leave them, each with its transaction's position.
                let expected = FolioWritersWorkload.expectedSlots(seed: seed, writer: writer, count: count)
                let held = slotsHeld.values.filter { $0.writer == writer }
                #expect(
                    Dictionary(uniqueKeysWithValues: held.map { ($0.id, $0.n) }) == expected,
                    "\(context): writer \(writer)'s slots")
                for slot in held where slot.n < entries.count {
                    #expect(slot.seq == entries[slot.n].seq, "\(context): slot \(slot.id) of another transaction")
                }
                try await expectIndexAgrees(persistence, format, entries: entries, context: context)
            }
            #expect(
                positions.sorted() == Array(0..<ledger.seq).map { $0 + 1 },
                "\(context): serial positions of \(positions.count) transactions against a total of \(ledger.seq)")
            #expect(ledger.seq == counts.reduce(0, +), "\(context): the ledger's total is not its counts' sum")
            try await expectIndexesAgree(shared, all: all, context: context)
            return (counts, ledger)
        }
    }

    /// The shared datastore's indexes against a scan: by writer (the ledger's moves with
    /// each transaction) and by ranges of n.
    private static func expectIndexesAgree<Access: AccessMode>(
        _ shared: Datastore<SharedFormat, Access>, all: [SharedRecord], context: String
    ) async throws {
        let writers = Set(all.map(\.writer))
        for writer in writers {
            let found = try await shared.load(writer, from: \.writer).collect()
            #expect(found == all.filter { $0.writer == writer }, "\(context): index writer = \(writer)")
        }
        let bound = (all.map(\.n).max() ?? 0) + 1
        for range in [-1..<0, 0..<3, 3..<(bound / 2), (bound / 2)..<bound] where !range.isEmpty {
            let found = try await shared.load(range, from: \.n).collect()
            let scanned = all.filter { range.contains($0.n) }
            #expect(
                found.map(\.id).sorted() == scanned.map(\.id).sorted() && found.map(\.n) == found.map(\.n).sorted(),
                "\(context): index n in \(range)")
        }
        #expect(try await shared.load(..., from: \.n).collect().count == all.count, "\(context): index n over all")
    }

    /// A writer's own datastore's index of serial positions against a scan.
    private static func expectIndexAgrees<Own: WriterEntriesFormat>(
        _ persistence: Persistence<some AccessMode>, _ format: Own.Type, entries: [WriterEntry], context: String
    ) async throws {
        let own = persistence.datastore(for: format)
        let bySeq = try await own.load(..., from: \.seq).collect()
        #expect(bySeq == entries.sorted { $0.seq < $1.seq }, "\(context): \(Own.key)'s index over all")
        guard let middle = entries.dropFirst(entries.count / 2).first?.seq else { return }
        let upper = try await own.load(middle..., from: \.seq).collect()
        #expect(upper == entries.filter { $0.seq >= middle }, "\(context): \(Own.key)'s index from \(middle)")
    }

    private static func entries<Own: WriterEntriesFormat>(
        _ persistence: Persistence<some AccessMode>, _ format: Own.Type
    ) async throws -> [WriterEntry] {
        try await persistence.datastore(for: format).load(...).collect()
    }

    private static func count<Own: WriterEntriesFormat>(
        _ persistence: Persistence<ReadWrite>, _ format: Own.Type
    ) async throws -> Int {
        try await persistence.datastore(for: format).count()
    }
}
