import Dispatch

// The exclusive mode a compaction's catch-up runs in, and a writer taking the store's lock
// (Store+WriterTurns.swift): no write transaction active, none able to begin. Write transactions run concurrently (a count of them, `activeTransactions`); the
// catch-up waits until the count falls to zero and is handed exclusive use by the last
// transaction to end, before another can begin.
//
// Why `beginWrite()` may block here without a deadlock: exclusive use is held only by a
// compaction's catch-up, on the compaction's own thread, by one try of the store's lock
// and the catch-up after it, or by a writer following other writers between turns; none
// waits for a transaction, task or gate while it holds
// it (they take `writeSection` and `rootFileLock`, which are held only for bounded work,
// and a try of the lock never blocks). While the compaction merely waits for the active
// transactions to end, new transactions still begin: blocking them then could park every
// thread of a small pool while the transactions being waited for need one to finish.

extension Store {
    /// Runs `body` with no write transaction active and none able to begin: waits for the
    /// active ones to end (the last hands exclusive use over as it ends), and makes
    /// `beginWrite()` wait while `body` runs. Throws `StorageError.closed` if `stop` is set
    /// while it waits (the store is closing).
    func withWritersExcluded<Result>(
        stop: CompactionStop, _ body: () throws(StorageError) -> Result
    ) throws(StorageError) -> Result {
        let waiter = DispatchSemaphore(value: 0)
        let holding = try state.withLock { (state) throws(StorageError) -> Bool in
            // Checked under the lock that `wakeExclusiveWaiter()` takes: a stop set before
            // this is seen here; one set after finds the waiter registered and wakes it.
            if state.closed || stop.isStopped { throw .closed(path: path) }
            guard var writer = state.writer else { throw .closed(path: path) }
            if let cause = writer.poisoned { throw .needsReopen(path: path, cause: cause) }
            defer { state.writer = writer }
            if writer.activeTransactions == 0 && !writer.exclusive {
                writer.exclusive = true
                return true
            }
            writer.exclusiveWaiter = waiter
            return false
        }
        if !holding {
            waiter.wait()
            // Woken by the hand-over (exclusive use is held) or by a stop (it is not).
            let granted = state.withLock { $0.writer?.exclusive == true }
            guard granted else { throw .closed(path: path) }
        }
        defer { endExclusive() }
        return try body()
    }

    /// Ends exclusive use (``withWritersExcluded(stop:_:)``, or a try of the store's lock in
    /// ``enterTurn(_:)``) and wakes the `beginWrite()` calls that waited. If no transaction
    /// is active and a compaction waits for exclusive use, it is handed over instead, as
    /// the end of the last transaction would: a try that failed leaves no transaction to
    /// hand it over later.
    func endExclusive() {
        let (waiting, handedTo) = state.withLock { state -> ([DispatchSemaphore], DispatchSemaphore?) in
            guard var writer = state.writer else { return ([], nil) }
            writer.exclusive = false
            defer { state.writer = writer }
            if let handedTo = handOverExclusiveIfIdle(&writer) { return ([], handedTo) }
            defer { writer.waitingForExclusive = [] }
            releaseLockIfIdle(&writer)
            return (writer.waitingForExclusive, nil)
        }
        handedTo?.signal()
        for waiter in waiting { waiter.signal() }
    }

    /// At the end of a write transaction, with `state` locked: if it was the last active one
    /// and a compaction waits, hands it exclusive use (so no transaction begins in between)
    /// and returns its semaphore to signal once the lock is released.
    func handOverExclusiveIfIdle(_ writer: inout WriterState) -> DispatchSemaphore? {
        guard writer.activeTransactions == 0, let waiter = writer.exclusiveWaiter else { return nil }
        writer.exclusiveWaiter = nil
        writer.exclusive = true
        return waiter
    }

    /// Wakes a compaction waiting for exclusive use, without granting it (close stops it).
    func wakeExclusiveWaiter() {
        let waiter = state.withLock { state -> DispatchSemaphore? in
            defer { state.writer?.exclusiveWaiter = nil }
            return state.writer?.exclusiveWaiter
        }
        waiter?.signal()
    }

    /// In `beginWrite()`: a semaphore to wait on if a compaction's catch-up uses the store
    /// alone (signalled when it ends), nil if the transaction may begin.
    func waitForExclusive(_ writer: inout WriterState) -> DispatchSemaphore? {
        guard writer.exclusive else { return nil }
        let waiter = DispatchSemaphore(value: 0)
        writer.waitingForExclusive.append(waiter)
        return waiter
    }
}
