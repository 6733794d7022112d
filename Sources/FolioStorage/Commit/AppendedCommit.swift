/// A commit whose run is appended but that is not yet acknowledged: the second half of
/// ``WriteTransaction/commit()``, for a caller that frees its own writer queue between
/// the two halves so that the next transaction overlaps this one's sync (group commit,
/// Docs/Durability.md §1.4).
package struct AppendedCommit: Sendable {
    let store: Store
    /// The commit's event, as observers will receive it.
    package let notification: CommitNotification

    /// Returns once the commit is durable (in ``Durability/full`` mode; at once in grouped
    /// mode) and published to readers, after handing queued events to observers. Outside
    /// every lock of the caller: observers run here.
    ///
    /// Throws `StorageError.needsReopen(path:cause:)` if the sync that would have made
    /// this commit durable failed (the commit is not acknowledged; a reopen's recovery may
    /// or may not find it), and `StorageError.closed(path:)` if the store was closed and
    /// its closing flush failed.
    @discardableResult
    package func waitUntilDurable() throws(StorageError) -> CommitNotification {
        // Observers run here, outside this transaction's lock and the store's, with the
        // writer slot free: a handler may read the store or begin a write of its own.
        defer { store.deliverQueued() }
        try store.waitUntilDurable(notification.generation)
        return notification
    }

    /// ``waitUntilDurable()`` for async callers: while another caller's sync is in flight
    /// this suspends rather than blocks its thread, so other writers can append meanwhile
    /// and share the next sync.
    @discardableResult
    package func waitUntilDurable() async throws(StorageError) -> CommitNotification {
        defer { store.deliverQueued() }
        try await store.waitUntilDurable(notification.generation)
        return notification
    }
}
