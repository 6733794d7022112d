import FolioStorage

// The write path: a new write transaction in the writer slot, its body run, then committed
// and acknowledged once durable; for `perform` (whose body throws anything) and for a
// datastore's own writes (where everything thrown is a `FolioError`).

extension Persistence {
    /// Runs `body` in a new write transaction and commits it; rolls back if it throws.
    /// Throws `CancellationError` if the task is cancelled while it waits for its turn.
    ///
    /// Transactions run at once, each in a shared turn (``WriterTurns``). One that
    /// conflicts (a transaction committed since it began changed a tree it read, or wrote
    /// other than blind, Docs/Architecture.md invariant 7) is rolled back and `body` runs
    /// again, in a new transaction, in the exclusive turn, where nothing can conflict with
    /// it.
    nonisolated(nonsending) func performWrite<Result>(
        _ body: nonisolated(nonsending) (TransactionContext) async throws -> Result
    ) async throws -> Result {
        var turn = try await WriterTurn.take(.shared, in: writer)
        while true {
            let (transaction, context) = try await begin(in: &turn)
            let result: Result
            do {
                result = try await TransactionScope.$current.withValue(context) { try await body(context) }
            } catch {
                abandon(transaction, context: context, turn: turn)
                // A spill found the end of the file taken: run again alone.
                guard transaction.hasConflicted else { throw error }
                turn = try await WriterTurn.take(.exclusive, in: writer)
                continue
            }
            if try await commit(transaction, context: context, turn: turn) { return result }
            turn = try await WriterTurn.take(.exclusive, in: writer)
        }
    }

    /// Runs `body` in a new write transaction that commits when it returns; rolls back if it
    /// throws. Every step of this path throws `FolioError`; a task cancelled while it waits
    /// for its turn throws ``FolioError/cancelled``. A transaction that conflicts runs
    /// again alone, as in ``performWrite(_:)``.
    nonisolated(nonsending) func inNewTransaction<Value>(
        _ body: (WriteTransaction) throws(FolioError) -> Value
    ) async throws(FolioError) -> Value {
        var turn = try await WriterTurn.taking(.shared, in: writer)
        while true {
            let (transaction, context) = try await begin(in: &turn)
            let outcome = TransactionScope.$current.withValue(context) {
                Swift.Result { () throws(FolioError) -> Value in try body(transaction) }
            }
            let value: Value
            do throws(FolioError) {
                value = try outcome.get()
            } catch {
                abandon(transaction, context: context, turn: turn)
                guard transaction.hasConflicted else { throw error }
                turn = try await WriterTurn.taking(.exclusive, in: writer)
                continue
            }
            if try await commit(transaction, context: context, turn: turn) { return value }
            turn = try await WriterTurn.taking(.exclusive, in: writer)
        }
    }

    /// Begins a write transaction in the turn the caller holds, with the context its body
    /// runs in; gives the turn back if the engine refuses to begin. Values set outside
    /// transactions and still queued are committed first, in the exclusive turn
    /// (Docs/Architecture.md invariant 9 says why that commit runs alone); a caller in a
    /// shared turn takes the exclusive one for that commit only, and begins in a shared
    /// turn again.
    private nonisolated(nonsending) func begin(
        in turn: inout WriterTurn
    ) async throws(FolioError) -> (WriteTransaction, TransactionContext) {
        if core.values.hasQueued && turn == .shared {
            turn.release(writer)
            let exclusive = try await WriterTurn.taking(.exclusive, in: writer)
            do throws(FolioError) {
                try await commitQueuedValues()
            } catch {
                exclusive.release(writer)
                throw error
            }
            exclusive.release(writer)
            // A set that returned before this transaction was asked for is committed now;
            // one made from here on is concurrent with its start, in either order.
            turn = try await WriterTurn.taking(.shared, in: writer)
        }
        let transaction: WriteTransaction
        do throws(FolioError) {
            // Values set outside transactions commit first: a transaction sees every value
            // set before it began (KeyValueMemory's ordering argument).
            if turn == .exclusive { try await commitQueuedValues() }
            // A task waiting for another process's turn sleeps rather than blocking its thread.
            do throws(StorageError) {
                transaction = try await core.store.beginWriteSuspending()
            } catch {
                throw .storage(error)
            }
        } catch {
            turn.release(writer)
            throw error
        }
        return (
            transaction, TransactionContext(core: core, source: .write(transaction), isExclusive: turn == .exclusive)
        )
    }

    /// Rolls back a transaction whose body failed, gives back the preparation holds it took
    /// (before the turn: see PreparationHolds), then the turn.
    private nonisolated func abandon(_ transaction: WriteTransaction, context: TransactionContext, turn: WriterTurn) {
        transaction.rollback()
        core.preparationHolds.releaseAll(of: context)
        turn.release(writer)
    }

    /// Appends the transaction's commit, gives the turn back, then returns true once the
    /// commit is durable. Returns false, having rolled back and given the turn back, if it
    /// conflicted with a commit made since it began (the caller runs it again alone); any
    /// other failure to append rolls it back and throws.
    ///
    /// A transaction that set values of the key-value store commits in its shared turn like
    /// any other: its sets are blind writes (`WriteTransaction.putBlind`), replayed onto a
    /// newer key-value tree if another commit changed it meanwhile, and the values' batch
    /// gets its generation from the store as the commit takes it (Docs/Architecture.md
    /// invariant 9).
    private nonisolated(nonsending) func commit(
        _ transaction: WriteTransaction, context: TransactionContext, turn: WriterTurn
    ) async throws(FolioError) -> Bool {
        let written = context.writtenValues.withLock { $0 }
        // Sets of the keys this transaction wrote, made outside it while it ran, lose to it:
        // they leave the queue as the commit takes its generation, under the store's write
        // section (so batches enter `inFlight` in generation order), readable until this
        // commit is published (KeyValueMemory).
        var replaced: KeyValueMemory.Batch?
        let appended: AppendedCommit
        do throws(FolioError) {
            appended = try core.append(transaction) { generation in
                if !written.isEmpty { replaced = core.values.transactionCommitting(written, generation: generation) }
            }
        } catch {
            abandon(transaction, context: context, turn: turn)
            if case .storage(.writeConflict) = error { return false }
            throw error
        }
        let retired = replaced.map { core.values.transactionAppended($0, as: appended) }
        // Marked ready before the holds are given back: a transaction that waited for one
        // finds the datastore ready when it wakes, and reads it from this commit on.
        core.markReady(context.prepared.withLock { $0 }, asOf: context.catalogChangesAtBegin)
        core.preparationHolds.releaseAll(of: context)
        // The turn is given back before the sync: the next writer's transaction runs while
        // this one's sync is in flight, and shares the next sync (group commit).
        // Acknowledged, and so returned, only once durable.
        turn.release(writer)
        do throws(FolioError) {
            try await core.acknowledge(appended)
        } catch {
            // The sync failed: the store refuses every later commit, so sets of values must
            // not be accepted into memory any more (they would never be kept).
            if case .storage(let cause) = error { core.values.noteFailure(cause) }
            throw error
        }
        if let retired { core.values.published(retired) }
        return true
    }

    /// Appends a commit of the key-value store's queued writes, if any. The caller holds the
    /// exclusive turn. The commit is published by a task of its own (it is durable no later
    /// than the transaction that follows it).
    nonisolated(nonsending) func commitQueuedValues() async throws(FolioError) {
        // Another process's turn is waited for asleep (`commitQueued(in:) async`).
        guard core.values.hasQueued, let batch = try await core.values.commitQueued(in: core.store) else { return }
        let memory = core.values
        Task.detached { try? await memory.awaitPublished(batch) }
    }
}

/// Which of the writers' turns (``WriterTurns``) a write path holds.
enum WriterTurn: Equatable {
    case shared
    case exclusive

    /// Takes a turn of this kind; throws `CancellationError` if the task is cancelled while
    /// it waits.
    static func take(_ kind: WriterTurn, in turns: WriterTurns) async throws(CancellationError) -> WriterTurn {
        switch kind {
        case .shared: try await turns.acquireShared()
        case .exclusive: try await turns.acquire()
        }
        return kind
    }

    /// ``take(_:in:)`` for the paths that throw `FolioError` (``FolioError/cancelled``).
    static func taking(_ kind: WriterTurn, in turns: WriterTurns) async throws(FolioError) -> WriterTurn {
        do {
            return try await take(kind, in: turns)
        } catch {
            throw .cancelled
        }
    }

    /// Gives the turn back.
    func release(_ turns: WriterTurns) {
        switch self {
        case .shared: turns.releaseShared()
        case .exclusive: turns.release()
        }
    }
}
