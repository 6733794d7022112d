import Foundation
import FolioStorage

/// A store of datastores: on disk in a directory, or in memory.
///
/// ```swift
/// let persistence = try Persistence(at: "/path/to/Library.folio")  // Persistence<ReadWrite>
/// let books = persistence.datastore(for: BookFormat.self)
/// try await books.persist(book)
///
/// let helper = try Persistence(readingFrom: "/path/to/Library.folio")  // Persistence<ReadOnly>
/// ```
///
/// One process writes a store at a time (an exclusive lock on its lock file); any number of
/// processes read it. Write transactions run at once and are serializable: one that
/// conflicts with a commit made while it ran runs again, alone (see `perform`). Reads do
/// not go through the actor: they read the newest committed state directly and never wait
/// for a writer.
public actor Persistence<Access: AccessMode> {
    nonisolated let core: PersistenceCore
    /// The writers' turns: write transactions run at once (shared turns); a retry after a
    /// conflict, `compact`, commits of queued values and close run alone (the exclusive
    /// turn), in the order they asked (Docs/Architecture.md, "Concurrent writers").
    nonisolated let writer = WriterTurns()

    /// A persistence over `core` (the openers in Persistence+Open.swift make the core).
    init(core: PersistenceCore) {
        self.core = core
    }

    /// The engine underneath, for tools built on it (the `folio` command, benchmarks,
    /// tests): `@_spi(Engine) import Folio`. Applications use ``statistics()``,
    /// ``makeDurable()``, ``compact(progress:)``, ``backup(to:at:progress:)`` and ``verify(progress:)``.
    @_spi(Engine) public nonisolated var store: Store { core.store }

    /// The store's directory (a path in an in-memory file system for in-memory persistences).
    public nonisolated var path: String { core.store.path }

    /// A datastore of this persistence, declared by `format`. Cheap; the declaration is
    /// checked against the store (and indexes built or dropped) on first use.
    public nonisolated func datastore<Format: DatastoreFormat>(for format: Format.Type) -> Datastore<Format, Access> {
        Datastore(persistence: self, schema: DatastoreSchema<Format>())
    }

    /// Makes pending grouped commits durable and closes the store. Later calls fail. Values
    /// of ``values`` set outside transactions are committed first, after the writers already
    /// waiting for the writer slot (at most 2 seconds: a transaction may hold it).
    ///
    /// What close waits for: a transaction already committing (its commit's write to
    /// disk) finishes first, so every `perform`, `persist` or `delete` that returned is
    /// durable when close returns. A transaction that has not reached its commit when
    /// close runs is not waited for: it fails with a `.closed` storage error and keeps
    /// nothing. Observers receive the commits flushed here. Nonisolated: it does not queue
    /// behind waiting writers (see `Store.close()` in the engine), except to commit values
    /// queued (above).
    public nonisolated func close() {
        commitQueuedValuesForClose()
        core.store.close()
    }

    /// Refuses later sets of ``values`` and commits the ones queued, if any, holding the
    /// writer slot: it waits for its turn behind the writers already waiting, among them the
    /// commits of values under way, blocking the thread (close is synchronous), for at
    /// most `core.valuesCloseWait`. If the slot does not come, the values are lost with the
    /// transaction that holds it, and the log says so (call `values.flush()` before closing
    /// to be sure).
    private nonisolated func commitQueuedValuesForClose() {
        // Nothing queued and no commit of values between taking the queue and appending it:
        // nothing to wait for (later sets throw from here on).
        guard core.values.close() else { return }
        let wait = DispatchTimeInterval.milliseconds(core.valuesCloseWait.load(ordering: .relaxed))
        guard writer.acquireBlocking(deadline: .now() + wait) else {
            core.store.openOptions.log(
                "closing \(path): values set and not yet committed are lost: a transaction holds the writer")
            return
        }
        defer { writer.release() }
        do throws(FolioError) {
            _ = try core.values.commitQueued(in: core.store)  // nil if nothing is queued any more
        } catch {
            core.store.openOptions.log(
                "closing \(path): values set and not yet committed could not be committed: \(error)")
        }
    }
}
