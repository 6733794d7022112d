import Foundation
import FolioStorage
import FolioTestSupport
import Synchronization

/// Options of the `transfers` and `transfer-reader` commands, after the positional arguments.
struct TransferOptions {
    var grouped = false
    var compactEvery = 0
    var blobEvery = 0
    var blobBytes = 0
    var retentionMilliseconds = 0
    /// Declare, at open, that the store keeps its newest this many generations (0: declare
    /// nothing, leave any declaration as it is).
    var retainedGenerations = 0
    /// Commit a transaction after each background pass of every compaction.
    var commitDuringCompaction = false
    /// The store's `changeRecordKeyLimit` (0: the engine's default).
    var keyLimit = 0
    var wholesaleEvery = 0
    var wholesaleKeys = 0
    /// `transfer-reader`: also stop when standard input reaches end of file.
    var untilEndOfInput = false

    init(_ arguments: ArraySlice<String>) {
        var rest = arguments
        func number(_ flag: String) -> Int {
            guard let text = rest.popFirst(), let value = Int(text), value >= 0 else { fail("\(flag) needs a number") }
            return value
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--grouped": grouped = true
            case "--commit-during-compaction": commitDuringCompaction = true
            case "--until-eof": untilEndOfInput = true
            case "--key-limit": keyLimit = number(flag)
            case "--wholesale-every": wholesaleEvery = number(flag)
            case "--wholesale-keys": wholesaleKeys = number(flag)
            case "--compact-every": compactEvery = number(flag)
            case "--blob-every": blobEvery = number(flag)
            case "--blob-bytes": blobBytes = number(flag)
            case "--retention-ms": retentionMilliseconds = number(flag)
            case "--retain-generations": retainedGenerations = number(flag)
            default: fail("unknown option \(flag)")
            }
        }
    }

    func workload(seed: UInt64) -> TransferWorkload {
        TransferWorkload(
            seed: seed, blobEvery: blobEvery, blobBytes: blobBytes, wholesaleEvery: wholesaleEvery,
            wholesaleKeys: wholesaleKeys)
    }

    /// The store options of a `transfers` writer.
    var storeOptions: StoreOptions {
        var options = StoreOptions(
            durability: grouped ? .grouped(window: .milliseconds(5)) : .full,
            autoCompaction: nil,
            retention: SnapshotRetention(gracePeriod: .milliseconds(retentionMilliseconds)),
            log: { _ in })
        // A limit below the stamps' key count makes every stamps transaction a commit that
        // records its tree wholesale (format version 3).
        if keyLimit > 0 { options.changeRecordKeyLimit = keyLimit }
        return options
    }
}

/// `transfers STORE SEED N [options]`: runs the transfer workload until the store holds N
/// transactions, resuming from whatever count the store holds (so kills can be chained on
/// one store). `--key-limit L --wholesale-every K --wholesale-keys W`: every K-th
/// transaction rewrites W keys of tree `stamps`, recorded wholesale when W > L. Prints,
/// each line written before the next step:
///
///     open C G V        opened (after recovery) holding C transactions at generation G,
///                       the store's format version V (its root slots')
///     declared R G      `--retain-generations R`: the store did not declare R, and now does
///                       from generation G on (durable; a commit of tree `folio/retention`
///                       alone, which is no transaction: it leaves the count as it is)
///     attempt n         about to commit transaction n
///     ack n G           transaction n is durable, as generation G (in grouped mode, after
///                       the flush that made it durable)
///     compact G         about to compact generation G;  compacted G: done, new generation G
///     done C G          closed cleanly
func runTransfers(_ arguments: [String]) throws {
    guard arguments.count >= 3, let seed = UInt64(arguments[1]), let target = Int(arguments[2]) else {
        fail(
            "usage: folio-torture transfers STORE SEED N [--grouped] [--compact-every K] [--blob-every K] [--blob-bytes B] [--retention-ms M] [--retain-generations R] [--commit-during-compaction] [--key-limit L --wholesale-every K --wholesale-keys W]"
        )
    }
    let options = TransferOptions(arguments.dropFirst(3))
    let workload = options.workload(seed: seed)
    let store = try Store.open(at: arguments[0], options: options.storeOptions)
    var count = try TransferWorkload.count(in: store.read())
    // The format version on the same line, so that a child killed just after opening
    // has said both or neither.
    say("open \(count) \(store.generation) \(try store.describe().rootFormatVersion)")
    if options.retainedGenerations > 0 {
        try declareRetention(generations: UInt64(options.retainedGenerations), in: store)
    }

    // Generation -> transaction number, filled before each commit so that the observer,
    // which runs once the commit is durable, can say which transaction it acknowledges.
    let numbers = Mutex<[UInt64: Int]>([:])
    let observation = store.observe { event in
        guard case .committed(let notifications) = event else { return }
        for notification in notifications {
            let number = numbers.withLock { $0.removeValue(forKey: notification.generation) }
            say("ack \(number.map(String.init) ?? "?") \(notification.generation)")
        }
    }
    // The next transaction: its lines, its commit.
    let transfer = { @Sendable (number: Int) throws in
        let transaction = try workload.begin(number, in: store)
        numbers.withLock { $0[transaction.generation] = number }
        say("attempt \(number)")
        try transaction.commit()
    }
    if options.commitDuringCompaction {
        // One transaction after each background pass of a compaction: committed while the
        // compaction's copy exists and before its catch-up, into the old file.
        let shared = Mutex(count)
        store.onCompactionPass { _ in
            let number = shared.withLock { $0 } + 1
            guard number <= target else { return }
            do {
                try transfer(number)
                shared.withLock { $0 = number }
            } catch {
                fail("transaction \(number) during a compaction failed: \(error)")
            }
        }
        while count < target {
            let number = count + 1
            try transfer(number)
            shared.withLock { $0 = number }
            if options.compactEvery > 0 && number % options.compactEvery == 0 {
                say("compact \(store.generation)")
                try store.compact()
                say("compacted \(store.generation)")
            }
            count = shared.withLock { $0 }
        }
    }
    while count < target {
        let number = count + 1
        try transfer(number)
        count = number
        if options.compactEvery > 0 && number % options.compactEvery == 0 {
            say("compact \(store.generation)")
            try store.compact()
            say("compacted \(store.generation)")
        }
    }
    store.close()
    observation.cancel()
    say("done \(count) \(store.generation)")
}

/// Commits the declaration that `store` keeps its newest `generations` generations, unless
/// it declares exactly that already: one commit that writes tree `folio/retention` only.
/// Made before the observer is installed, so that no `ack` line names it: the parent learns
/// its generation from the `declared` line, printed once `commit` returned (durable).
private func declareRetention(generations: UInt64, in store: Store) throws {
    let policy = RetentionLayout.encodePolicy(RetainedHistory(generations: generations))
    let transaction = try store.beginWrite()
    guard try transaction.get(RetentionLayout.policy, in: RetentionLayout.tree) != policy else {
        transaction.rollback()
        return
    }
    do {
        try transaction.put(policy, for: RetentionLayout.policy, in: RetentionLayout.tree)
    } catch {
        transaction.rollback()
        throw error
    }
    let notification = try transaction.commit()
    say("declared \(generations) \(notification.generation)")
}

/// `transfer-reader STORE SEED SECONDS [options]`: a read-only process that follows the
/// store for SECONDS (or, with `--until-eof`, until its standard input ends), checking every
/// view it takes against the workload's model: a view mixing pages of two generations, or
/// showing anything but the exact state after some number of transactions, fails the
/// process (exit 2). Generations and counts must never go backwards, and the store's format
/// version must be 3 exactly when the view holds a stamps transaction (a commit recorded
/// wholesale). Prints `views V generations G count C wholesale W` at the end, W the number
/// of stamps transactions the reader's views moved across.
func runTransferReader(_ arguments: [String]) throws {
    guard arguments.count >= 3, let seed = UInt64(arguments[1]), let seconds = Double(arguments[2]) else {
        fail(
            "usage: folio-torture transfer-reader STORE SEED SECONDS [--blob-every K] [--blob-bytes B] [--wholesale-every K --wholesale-keys W] [--until-eof]"
        )
    }
    let options = TransferOptions(arguments.dropFirst(3))
    let workload = options.workload(seed: seed)
    let stop = Atomic<Bool>(false)
    if options.untilEndOfInput {
        Thread {
            while readLine() != nil {}
            stop.store(true, ordering: .relaxed)
        }.start()
    }
    let store = try Store.openReadOnly(at: arguments[0], options: quiet)
    let deadline = Date().addingTimeInterval(seconds)
    var views = 0, lastGeneration: UInt64 = 0, lastCount = 0, wholesale = 0
    var generations = Set<UInt64>()
    var expected: (count: Int, model: TreeModel)? = nil
    while Date() < deadline && !stop.load(ordering: .relaxed) {
        try store.refresh()
        let view = try store.read()
        let count = try TransferWorkload.count(in: view)
        if expected?.count != count {
            expected = (count, workload.expectedContents(after: count))
            // Version 3 from the first commit recorded wholesale on, version 2 before it.
            // (This process refreshes nowhere else, so the store's root is the view's.)
            if let first = workload.firstWholesale {
                let version = try store.describe().rootFormatVersion
                if version != (count >= first ? 3 : 2) {
                    fail("format version \(version) at generation \(view.generation), count \(count)")
                }
            }
        }
        let found = try TransferWorkload.contents(of: view)
        if found != expected!.model {
            fail(
                "mixed or wrong read at generation \(view.generation), count \(count): "
                    + TreeModel.difference(found, expected!.model))
        }
        if view.generation < lastGeneration || count < lastCount {
            fail("went backwards: generation \(lastGeneration) -> \(view.generation), count \(lastCount) -> \(count)")
        }
        if views > 0 && count > lastCount { wholesale += (lastCount + 1...count).filter(workload.writesStamps).count }
        lastGeneration = view.generation
        lastCount = count
        views += 1
        generations.insert(view.generation)
    }
    say("views \(views) generations \(generations.count) count \(lastCount) wholesale \(wholesale)")
}
