import Foundation
import Synchronization
@_spi(Engine) import Folio
import FolioTestSupport

/// `folio-torture folio-observer STORE WRITERS [--seed S]`: a read-only process beside the
/// writers of `folio-writers` (FolioWriters.swift): observes the shared datastore with
/// `observe()` and, meanwhile, reads snapshots of the whole store. Prints, each line before
/// the next:
///
///     start T G       observing, the ledger's total then T, at generation G
///     tx G T W N      a commit (generation G) changed the ledger to total T, as the
///                     transaction N of writer W
///     reload G T      a `reload` event at generation G; the ledger re-read holds total T
///     failure G E     a `failure` event
///     torn G R        the changes of commit G are not one whole transaction (reason R)
///     torn-snapshot R a snapshot disagrees with itself: the ledger's count of a writer is
///                     not its own datastore's count, or the total is not their sum, or
///                     went backwards
///     end T G S       at end of standard input: caught up with the store (ledger total
///                     T, generation G), every event up to it consumed; S snapshots read
///
/// Whether the "tx" totals run without a gap is the parent's to check (it also knows what
/// was acknowledged); the one transaction of each commit is checked here, since only here
/// are the commit's changes seen together: a commit changes the ledger, and the writer's
/// slot it chose (FolioWritersWorkload.slotStep) with its n and total, or deletes it.
func runFolioObserver(_ arguments: [String]) async throws {
    let usage = "usage: folio-torture folio-observer STORE WRITERS [--seed S]"
    guard arguments.count >= 2, let writers = Int(arguments[1]), writers <= writerEntriesFormats.count else {
        fail(usage)
    }
    var seed: UInt64 = 0
    if arguments.count == 4 && arguments[2] == "--seed", let value = UInt64(arguments[3]) {
        seed = value
    } else if arguments.count != 2 {
        fail(usage)
    }
    let options = PersistenceOptions(log: { FileHandle.standardError.write(Data("log: \($0)\n".utf8)) })
    let persistence = try Persistence(readingFrom: arguments[0], options: options)
    defer { persistence.close() }
    let shared = persistence.datastore(for: SharedFormat.self)
    let events = try await shared.observe(bufferLimit: 1_000_000)
    let start = try await shared.load(FolioWritersWorkload.ledgerID) ?? .emptyLedger
    say("start \(start.seq) \(persistence.currentToken.generation)")

    let (endOfInput, signal) = AsyncStream<Void>.makeStream()
    Thread {
        while readLine() != nil {}
        signal.finish()
    }.start()
    let state = ObserverLock(ObserverState(total: start.seq))
    let consumer = Task {
        for await event in events {
            switch event {
            case .change(let change):
                state.withLock { $0.take(change, seed: seed) }
            case .reload(let token):
                // What the consumer re-reads: at least as new as `token`.
                let total = (try? await shared.load(FolioWritersWorkload.ledgerID))?.seq ?? -1
                state.withLock { $0.reloaded(at: token, total: total) }
            case .failure(let error, let token):
                state.withLock { $0.print("failure \(token.generation) \(error)") }
            }
        }
    }
    let snapshots = Task { try await readSnapshots(persistence, writers: writers, state: state) }

    for await _ in endOfInput {}
    // The writers are done: nothing depends on the watch noticing their last commit.
    persistence.store.catchUp()
    let final = try await shared.load(FolioWritersWorkload.ledgerID) ?? .emptyLedger
    let generation = persistence.currentToken.generation
    let deadline = ContinuousClock.now + .seconds(60)
    while !state.withLock({ $0.hasConsumed(total: final.seq) }) && ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(2))
    }
    snapshots.cancel()
    let read = (try? await snapshots.value) ?? -1
    state.withLock { state in
        state.print("end \(final.seq) \(generation) \(read)")
        state.ended = true
    }
    consumer.cancel()
}

/// The observer's state, shared by its tasks.
private final class ObserverLock: Sendable {
    private let state: Mutex<ObserverState>

    init(_ state: ObserverState) { self.state = Mutex(state) }

    func withLock<R>(_ body: (inout ObserverState) -> R) -> R { state.withLock { body(&$0) } }
}

/// What the observer's consumer knows, and its printing (under the same lock, so that
/// nothing is printed after "end").
private struct ObserverState {
    /// The ledger's total after the newest commit the consumer has taken in.
    var total: Int
    /// The newest commit that changed the ledger, and what its slot change must be.
    var commit: (generation: UInt64, slot: Int, upsert: SharedRecord?, seen: Bool)?
    var ended = false

    init(total: Int) { self.total = total }

    func print(_ line: String) { if !ended { say(line) } }

    /// Whether every change of the commit that brought the ledger to `total` (or later) has
    /// been taken in: an upsert's slot change follows the ledger's in identifier order.
    func hasConsumed(total wanted: Int) -> Bool {
        total >= wanted && (commit.map { $0.upsert == nil || $0.seen } ?? true)
    }

    mutating func take(_ change: Change<SharedRecord, Int>, seed: UInt64) {
        let generation = change.token.generation
        guard change.identifier != FolioWritersWorkload.ledgerID else {
            if let commit, commit.upsert != nil && !commit.seen {
                print("torn \(commit.generation) its slot \(commit.slot) was not upserted")
            }
            guard let ledger = change.newValue else {
                print("torn \(generation) the ledger was deleted")
                return
            }
            let step = FolioWritersWorkload.slotStep(seed: seed, writer: ledger.writer, n: ledger.n)
            let slot = FolioWritersWorkload.slotID(writer: ledger.writer, slot: step.slot)
            let upsert = SharedRecord(id: slot, writer: ledger.writer, n: ledger.n, seq: ledger.seq)
            commit = (generation, slot, step.deletes ? nil : upsert, false)
            total = ledger.seq
            print("tx \(generation) \(ledger.seq) \(ledger.writer) \(ledger.n)")
            return
        }
        guard let commit, commit.generation == generation, commit.slot == change.identifier, !commit.seen else {
            print("torn \(generation) slot \(change.identifier) changed (\(change.kind)) outside its transaction")
            return
        }
        self.commit?.seen = true
        if change.newValue != commit.upsert {
            print("torn \(generation) slot \(change.identifier) is \(String(describing: change.newValue))")
        }
    }

    mutating func reloaded(at token: ObservationToken, total: Int) {
        commit = nil
        self.total = max(self.total, total)
        print("reload \(token.generation) \(total)")
    }
}

/// Reads the whole store in one snapshot, again and again until cancelled: the ledger's
/// count of each writer equals its own datastore's, the total their sum, and the total
/// never goes back. Returns how many snapshots it read.
private func readSnapshots(
    _ persistence: Persistence<ReadOnly>, writers: Int, state: ObserverLock
) async throws -> Int {
    let shared = persistence.datastore(for: SharedFormat.self)
    var read = 0, last = 0
    while !Task.isCancelled {
        let problem: String? = try await persistence.read {
            let ledger = try await shared.load(FolioWritersWorkload.ledgerID) ?? .emptyLedger
            var sum = 0
            for writer in 0..<writers {
                let count = try await entryCount(persistence, writerEntriesFormats[writer])
                if count != ledger.count(of: writer) {
                    return "writer \(writer) has \(count) entries, the ledger counts \(ledger.count(of: writer))"
                }
                sum += count
            }
            if ledger.seq != sum { return "the ledger's total is \(ledger.seq), its counts add up to \(sum)" }
            if ledger.seq < last { return "the total went back from \(last) to \(ledger.seq)" }
            last = ledger.seq
            return nil
        }
        if let problem { state.withLock { $0.print("torn-snapshot \(problem)") } }
        read += 1
        try? await Task.sleep(for: .milliseconds(10))
    }
    return read
}

private func entryCount<Own: WriterEntriesFormat>(
    _ persistence: Persistence<ReadOnly>, _ format: Own.Type
)
    async throws -> Int
{
    try await persistence.datastore(for: format).count()
}
