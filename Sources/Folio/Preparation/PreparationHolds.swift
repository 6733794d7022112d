import Synchronization

/// Which write transaction is preparing each datastore: a transaction that runs a
/// preparation step of a datastore (its first use inside `perform`, or a batch of a
/// preparation outside any) holds the datastore's *hold* until it commits or rolls back, and
/// another transaction that needs the datastore prepared waits for it to end, then finds it
/// prepared (and reads it: `WriteTransaction.advanceToTip()`) or, if it rolled back,
/// prepares it itself. So concurrent first uses prepare a datastore once, and migrate its
/// records once.
///
/// Why no wait here can deadlock (the invariant is upheld by ``take(_:for:mayWait:)``'s
/// callers and by `Persistence.commit`/`abandon`, which release every hold a transaction
/// has before giving its writer turn back, and before it waits for any turn again):
/// - a transaction waits only while it holds no hold, so no cycle runs through holds
///   (one that needs a second datastore held by another prepares it without the hold,
///   optimistically, as any concurrent transactions do, and conflicts if both commit);
/// - it waits only in a shared turn: a holder is a transaction inside its body or its
///   commit, which needs no turn to end (its append takes the store's write section only;
///   one that conflicts gives its holds back before it asks for the exclusive turn), so
///   the holder ends unless its own body waits for the waiter (a wait between two of the
///   user's transactions, which they must not make: `perform`'s documentation says so);
/// - in the exclusive turn no other transaction runs, so nobody holds a hold to wait for;
/// - a preparation outside any transaction takes the hold only inside its batch
///   transaction, without waiting (`Datastore.preparationBatch`), and waits for a holder
///   between batches, holding no writer turn.
final class PreparationHolds: Sendable {
    private struct Hold {
        /// The transaction holding it (its context).
        let owner: ObjectIdentifier
        /// Tasks waiting for it to be released.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// What ``take(_:for:mayWait:)`` found.
    enum Outcome {
        /// The caller holds the datastore's hold (now, or already).
        case taken
        /// Another transaction held it and has ended since: it may have prepared the
        /// datastore; the caller looks again before preparing.
        case waited
        /// Another transaction holds it and the caller may not wait (or the caller's
        /// transaction has ended): it goes on without the hold.
        case busy
    }

    private let holds = Mutex<[String: Hold]>([:])

    /// Takes the hold of the datastore of `key` for `context`'s transaction; if another
    /// transaction holds it, waits for that one to end when `mayWait` (the wait is not
    /// cancellable: a running transaction is never interrupted).
    func take(_ key: String, for context: TransactionContext, mayWait: Bool) async -> Outcome {
        guard let taken = claim(key, for: context) else { return .busy }
        if taken { return .taken }
        guard mayWait, context.heldPreparations.withLock({ $0.keys.isEmpty }) else { return .busy }
        await wait(for: key)
        return .waited
    }

    /// Takes the hold of `key` for `context` if nobody holds it (a preparation's batch);
    /// returns whether `context` holds it now.
    func tryTake(_ key: String, for context: TransactionContext) -> Bool {
        claim(key, for: context) ?? false
    }

    /// Takes the hold of `key` for `context` unless another transaction holds it; returns
    /// whether `context` holds it, or nil if its transaction has ended (it never takes a
    /// hold again: nothing would release it).
    private func claim(_ key: String, for context: TransactionContext) -> Bool? {
        let owner = ObjectIdentifier(context)
        return context.heldPreparations.withLock { held -> Bool? in
            guard !held.released else { return nil }
            let taken = holds.withLock { holds -> Bool in
                guard let hold = holds[key] else {
                    holds[key] = Hold(owner: owner)
                    return true
                }
                return hold.owner == owner
            }
            if taken { held.keys.insert(key) }
            return taken
        }
    }

    /// Waits until nobody holds the hold of `key` (returns at once if nobody does). The
    /// waiter registers under the lock the release takes: a release is never missed.
    func wait(for key: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let registered = holds.withLock { holds -> Bool in
                guard holds[key] != nil else { return false }
                holds[key]?.waiters.append(continuation)
                return true
            }
            if !registered { continuation.resume() }
        }
    }

    /// Whether a transaction holds the hold of `key` (for tests and diagnostics).
    func isHeld(_ key: String) -> Bool {
        holds.withLock { $0[key] != nil }
    }

    /// Tasks waiting for the hold of `key` (for tests).
    func waitingCount(_ key: String) -> Int {
        holds.withLock { $0[key]?.waiters.count ?? 0 }
    }

    /// Releases every hold `context`'s transaction has and wakes their waiters; from here
    /// on it takes none. Called once the transaction has ended (committed, with the
    /// datastores it prepared marked ready, or rolled back), before its writer turn is given
    /// back.
    func releaseAll(of context: TransactionContext) {
        let keys = context.heldPreparations.withLock { held -> Set<String> in
            held.released = true
            defer { held.keys = [] }
            return held.keys
        }
        guard !keys.isEmpty else { return }
        let owner = ObjectIdentifier(context)
        let woken = holds.withLock { holds -> [CheckedContinuation<Void, Never>] in
            var woken: [CheckedContinuation<Void, Never>] = []
            for key in keys where holds[key]?.owner == owner {
                woken += holds.removeValue(forKey: key)?.waiters ?? []
            }
            return woken
        }
        for continuation in woken { continuation.resume() }
    }
}
