import Dispatch

// The exclusive mode a compaction's catch-up runs in: no write transaction active, none able
// to begin. Today that is the writer slot (`transactionActive`), taken as a waiting turn:
// the compaction is handed the slot when the active transaction ends, before any other
// transaction can begin, and `beginWrite()` waits (instead of refusing) while the
// compaction holds it. Kept in this one place so that a different exclusive mode (several
// concurrent transactions) replaces it whole.

extension Store {
    /// Runs `body` holding the writer slot: waits for an active write transaction to end
    /// (it hands the slot over as it ends), and makes `beginWrite()` wait meanwhile. Throws
    /// `StorageError.closed` if `stop` is set while it waits (the store is closing).
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
            if !writer.transactionActive {
                writer.transactionActive = true
                writer.exclusiveHeld = true
                return true
            }
            writer.exclusiveWaiter = waiter
            return false
        }
        if !holding {
            waiter.wait()
            // Woken by the hand-over (the slot is held) or by a stop (it is not).
            let granted = state.withLock { $0.writer?.exclusiveHeld == true }
            guard granted else { throw .closed(path: path) }
        }
        defer { endExclusive() }
        return try body()
    }

    /// Gives the writer slot back after ``withWritersExcluded(stop:_:)`` and wakes the
    /// `beginWrite()` calls that waited for it.
    private func endExclusive() {
        let waiting = state.withLock { state -> [DispatchSemaphore] in
            guard var writer = state.writer else { return [] }
            writer.exclusiveHeld = false
            writer.transactionActive = false
            defer {
                writer.waitingForExclusive = []
                state.writer = writer
            }
            return writer.waitingForExclusive
        }
        for waiter in waiting { waiter.signal() }
    }

    /// At the end of a write transaction: hands the slot to a compaction waiting for it
    /// (it stays taken, so no transaction begins in between) or frees it.
    func releaseWriterSlot() {
        let handedTo = state.withLock { state -> DispatchSemaphore? in
            guard var writer = state.writer else { return nil }
            defer { state.writer = writer }
            if let waiter = writer.exclusiveWaiter {
                writer.exclusiveWaiter = nil
                writer.exclusiveHeld = true
                return waiter
            }
            writer.transactionActive = false
            return nil
        }
        handedTo?.signal()
    }

    /// Wakes a compaction waiting for the writer slot, without the slot (close stops it).
    func wakeExclusiveWaiter() {
        let waiter = state.withLock { state -> DispatchSemaphore? in
            defer { state.writer?.exclusiveWaiter = nil }
            return state.writer?.exclusiveWaiter
        }
        waiter?.signal()
    }

    /// In `beginWrite()`, with the slot taken: a semaphore to wait on if a compaction's
    /// catch-up holds it (signalled when it ends), nil if a transaction does.
    func waitForExclusive(_ writer: inout WriterState) -> DispatchSemaphore? {
        guard writer.exclusiveHeld else { return nil }
        let waiter = DispatchSemaphore(value: 0)
        writer.waitingForExclusive.append(waiter)
        return waiter
    }
}
