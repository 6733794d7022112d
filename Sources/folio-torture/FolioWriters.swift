import Foundation
import Folio
import FolioTestSupport

/// `folio-torture folio-writers STORE WRITER N [--seed S] [--busy-timeout-ms M] [--compact-every K]`:
/// writer WRITER (0 ..< 4) of the Folio-level multi-writer workload (FolioWritersWorkload
/// in test support), to be killed while other writer processes write the same store:
/// commits its transactions until it has made N, each one `perform` over its own datastore
/// and the shared one. It continues from what the store holds (its own datastore's count),
/// so a writer restarted after a kill resumes its own sequence. Each turn waits up to M ms
/// (default 30,000) for the other processes' turns; full durability, so a transaction is
/// durable when `perform` returns. With K > 0, compacts after every K-th transaction.
///
/// Prints "open C G" once opened (C transactions of its own held, generation G), "ack n G"
/// once transaction n has returned (G: the generation this process saw just after, at
/// least the commit's), "compacted G" after each compaction, "done C G" at the end. A
/// store that disagrees with itself (the ledger's count of this writer unequal to its own
/// datastore's) fails the process.
func runFolioWriters(_ arguments: [String]) async throws {
    let usage =
        "usage: folio-torture folio-writers STORE WRITER N [--seed S] [--busy-timeout-ms M] [--compact-every K]"
    guard arguments.count >= 3, let writer = Int(arguments[1]), writerEntriesFormats.indices.contains(writer),
        let target = Int(arguments[2])
    else { fail(usage) }
    var seed: UInt64 = 0
    var busyTimeout = 30_000
    var compactEvery = 0
    var rest = arguments.dropFirst(3)
    while let option = rest.popFirst() {
        guard let value = rest.popFirst().flatMap({ UInt64($0) }) else { fail(usage) }
        switch option {
        case "--seed": seed = value
        case "--busy-timeout-ms": busyTimeout = Int(value)
        case "--compact-every": compactEvery = Int(value)
        default: fail(usage)
        }
    }
    var options = PersistenceOptions(log: { FileHandle.standardError.write(Data("log: \($0)\n".utf8)) })
    options.busyTimeout = .milliseconds(busyTimeout)
    let persistence = try Persistence(at: arguments[0], options: options)
    defer { persistence.close() }
    try await writeFolioTransactions(
        persistence, own: writerEntriesFormats[writer], writer: writer, target: target, seed: seed,
        compactEvery: compactEvery)
}

/// The writing loop of `folio-writers`, over writer `writer`'s own datastore `own`.
private func writeFolioTransactions<Own: WriterEntriesFormat>(
    _ persistence: Persistence<ReadWrite>, own ownFormat: Own.Type, writer: Int, target: Int, seed: UInt64,
    compactEvery: Int
) async throws {
    let own = persistence.datastore(for: ownFormat)
    let shared = persistence.datastore(for: SharedFormat.self)
    var next = try await own.count()
    say("open \(next) \(persistence.currentToken.generation)")
    while next < target {
        let n = next
        let step = FolioWritersWorkload.slotStep(seed: seed, writer: writer, n: n)
        // Everything read inside: a body that runs again after a conflict starts afresh.
        try await persistence.perform {
            var ledger = try await shared.load(FolioWritersWorkload.ledgerID) ?? SharedRecord.emptyLedger
            guard ledger.count(of: writer) == n else {
                fail("writer \(writer) at transaction \(n), but the ledger counts \(ledger.count(of: writer))")
            }
            ledger.seq += 1
            ledger.writer = writer
            ledger.n = n
            while ledger.counts.count <= writer { ledger.counts.append(0) }
            ledger.counts[writer] = n + 1
            try await shared.persist(ledger)
            try await own.persist(WriterEntry(id: n, seq: ledger.seq))
            let slot = FolioWritersWorkload.slotID(writer: writer, slot: step.slot)
            if step.deletes {
                try await shared.deleteIfPresent(slot)
            } else {
                try await shared.persist(SharedRecord(id: slot, writer: writer, n: n, seq: ledger.seq))
            }
        }
        say("ack \(n) \(persistence.currentToken.generation)")
        next += 1
        if compactEvery > 0 && next % compactEvery == 0 {
            try await persistence.compact()
            say("compacted \(persistence.currentToken.generation)")
        }
    }
    say("done \(next) \(persistence.currentToken.generation)")
}
