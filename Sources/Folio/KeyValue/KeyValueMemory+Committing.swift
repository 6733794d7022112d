import FolioStorage

// The committer of the key-value store's values set outside transactions: the queue moved
// into commits, a transaction's commit replacing the sets it wins over, commits waited for
// and their batches retired once published (the argument is on `KeyValueMemory`).
extension KeyValueMemory {
    /// Whether the scheduled background commit still has writes to commit. If not, its
    /// turn ends here, as taking the queue ends it: the next set schedules another.
    func backgroundCommitIsNeeded() -> Bool {
        state.withLock { state in
            if !state.queued.isEmpty { return true }
            state.drainScheduled = false
            return false
        }
    }

    /// Moves every queued write into a new batch in flight for the commit of `generation`.
    private func takeQueued(generation: UInt64) -> Batch? {
        state.withLock { state in
            state.drainScheduled = false
            guard !state.queued.isEmpty else { return nil }
            let batch = Batch(id: state.nextBatch, generation: generation, writes: state.queued, isCommitted: true)
            state.nextBatch += 1
            state.queued = [:]
            state.inFlight.append(batch)
            // Out of the queue, not yet in the store: counted until appended or put back,
            // in the same lock as the move, so that `close()` sees one or the other.
            state.appending += 1
            return batch
        }
    }

    /// Puts the writes of a commit of the queue (`takeQueued`) that failed back in the
    /// queue, except those a newer write replaced; the commit ends here.
    private func requeue(_ batch: Batch) {
        state.withLock { state in
            state.appending -= 1
            guard let position = state.inFlight.firstIndex(where: { $0.id == batch.id }) else { return }
            let newer = state.inFlight[(position + 1)...]
            state.inFlight.remove(at: position)
            for (key, slot) in batch.writes
            where state.queued[key] == nil && !newer.contains(where: { $0.writes[key] != nil }) {
                state.queued[key] = slot
            }
        }
    }

    /// Appends one commit of every queued write. The caller holds the writer slot. Returns
    /// nil if nothing was queued. If the commit cannot be appended, the writes go back in
    /// the queue (nothing set is dropped) and the error is thrown.
    func commitQueued(in store: Store) throws(FolioError) -> Batch? {
        guard startQueuedCommit() else { return nil }
        let transaction: WriteTransaction
        do throws(StorageError) {
            transaction = try store.beginWrite()
        } catch {
            if case .needsReopen = error { noteFailure(error) }
            throw .storage(error)
        }
        return try commitQueued(into: transaction)
    }

    /// ``commitQueued(in:)`` for async callers: while another process's turn holds the
    /// store's lock, the task sleeps between tries instead of blocking its thread.
    func commitQueued(in store: Store) async throws(FolioError) -> Batch? {
        guard startQueuedCommit() else { return nil }
        let transaction: WriteTransaction
        do throws(StorageError) {
            transaction = try await store.beginWriteSuspending()
        } catch {
            if case .needsReopen = error { noteFailure(error) }
            throw .storage(error)
        }
        return try commitQueued(into: transaction)
    }

    /// Whether anything is queued; whatever is, this ends the turn of the scheduled
    /// background commit (nothing may be queued: a transaction's commit may have taken the
    /// only set).
    private func startQueuedCommit() -> Bool {
        state.withLock { state in
            state.drainScheduled = false  // this commit takes the queue: a later set schedules another
            return !state.queued.isEmpty
        }
    }

    /// The queued writes, taken and appended in `transaction` (begun by the caller).
    private func commitQueued(into transaction: WriteTransaction) throws(FolioError) -> Batch? {
        guard var batch = takeQueued(generation: transaction.generation) else {
            transaction.rollback()
            return nil
        }
        do throws(StorageError) {
            do throws(StorageError) {
                for (key, slot) in batch.writes {
                    // Keys were checked against the limit when they were set.
                    if let bytes = slot.bytes {
                        _ = try transaction.put(bytes, for: key.bytes, in: KeyValueLayout.tree)
                    } else {
                        _ = try transaction.remove(key.bytes, from: KeyValueLayout.tree)
                    }
                }
            } catch {
                transaction.rollback()
                throw error
            }
            let appended = try transaction.commitAppending()
            batch.commit = appended
            state.withLock { state in
                state.lastCommit = appended
                state.appending -= 1
            }
            return batch
        } catch {
            requeue(batch)
            if case .needsReopen = error { noteFailure(error) }
            throw .storage(error)
        }
    }

    /// A write transaction that wrote `keys` is appending the commit of `generation`: the
    /// caller is the store's `generationAssigned`, under its write section, so batches
    /// enter `inFlight` in generation order and none is seen before its generation is
    /// exact. Sets of those keys still queued lose to the transaction, and wait in a batch
    /// of that generation, readable until it is published (see the type's comment).
    /// Returns the batch, or nil if no queued set was replaced.
    func transactionCommitting(_ keys: Set<HashedKey>, generation: UInt64) -> Batch? {
        state.withLock { state in
            var replaced: [HashedKey: ValueSlot] = [:]
            for key in keys {
                if let slot = state.queued.removeValue(forKey: key) { replaced[key] = slot }
            }
            guard !replaced.isEmpty else { return nil }
            let batch = Batch(id: state.nextBatch, generation: generation, writes: replaced, isCommitted: false)
            state.nextBatch += 1
            state.inFlight.append(batch)
            return batch
        }
    }

    /// The transaction of a ``transactionCommitting(_:generation:)`` batch was appended as
    /// `commit`: `flush` waits for it (or for a newer commit: transactions committing in
    /// their shared turns report their appends in any order).
    func transactionAppended(_ batch: Batch, as commit: AppendedCommit) -> Batch {
        var appended = batch
        appended.commit = commit
        state.withLock { state in
            let generation = commit.notification.generation
            if state.lastCommit.map({ $0.notification.generation < generation }) ?? true { state.lastCommit = commit }
        }
        return appended
    }

    /// Waits until `batch`'s commit is durable and published, then retires it
    /// (``published(_:)``).
    func awaitPublished(_ batch: Batch) async throws(FolioError) {
        guard let commit = batch.commit else { return }
        do throws(StorageError) {
            try await commit.waitUntilDurable()
        } catch {
            noteFailure(error)
            throw .storage(error)
        }
        published(batch)
    }

    /// Waits until the newest commit holding or replacing queued writes is durable, and
    /// throws why if it cannot be.
    func awaitLastCommit() async throws(FolioError) {
        let (commit, failure) = state.withLock { ($0.lastCommit, $0.failure) }
        if let failure { throw failure }
        guard let commit else { return }
        do throws(StorageError) {
            try await commit.waitUntilDurable()
        } catch {
            throw .storage(error)
        }
    }

    /// `batch`'s commit is published: it and the batches before it (published too:
    /// commits are published in generation order) are retired, and its values enter the
    /// cache as of its generation (refused if the cache has seen a newer one).
    func published(_ batch: Batch) {
        guard batch.commit != nil else { return }
        state.withLock { state in state.inFlight.removeAll { $0.generation <= batch.generation } }
        guard let cache, batch.isCommitted else { return }
        for (key, slot) in batch.writes {
            cache.insert(
                slot, key.bytes, in: KeyValueLayout.tree, generation: batch.generation,
                bytes: slot.cost + key.bytes.count, format: Self.slotFormat)
        }
    }
}
