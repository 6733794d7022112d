import Testing
import Foundation
@_spi(Engine) @testable import Folio
import FolioStorage
import FolioTestSupport

/// A datastore prepared while an undo runs (an index built over the records as they are
/// then) must make the undo run again, and find itself blocked: otherwise it would restore
/// a record that the index, marked built, does not hold. The undo's body is run as
/// `Persistence.revertNewest` runs it, with its commit held back while the preparation
/// commits.
@Suite struct ForcedUndoRaceTests {
    struct Box: Codable, Identifiable, Sendable, Equatable { var id: Int; var shelf: Int; var bin: Int }
    struct V1: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "boxes"
        static let currentVersion = Version.one
        typealias Instance = Box
        let shelf = Index(\Box.shelf)
    }
    /// A later declaration (another process, a newer release): one more index.
    struct V2: DatastoreFormat {
        enum Version: Int, CaseIterable { case one = 1 }
        static let key = "boxes"
        static let currentVersion = Version.one
        typealias Instance = Box
        let shelf = Index(\Box.shelf)
        let bin = Index(\Box.bin)
    }

    /// A store where a named action ("Clear") deleted the only box of V1, reopened.
    static func storeWithAClearedBox() async throws -> (Persistence<ReadWrite>, cleanup: () -> Void) {
        let (older, path, cleanup) = try diskPersistence("forced-undo-race")
        let v1 = older.datastore(for: V1.self)
        try await v1.persist(Box(id: 1, shelf: 1, bin: 7))
        try await older.perform(named: "Clear") { _ = try await v1.delete(1) }
        older.close()
        let persistence = try Persistence(at: path, options: PersistenceOptions(log: { _ in }))
        return (
            persistence,
            {
                persistence.close(); cleanup()
            }
        )
    }

    /// The forced undo's body as `Persistence.revertNewest` runs it, with its commit held
    /// back while a preparation commits (what another task or process may do meanwhile).
    @Test func aPreparationCommittedDuringAnUndoIsAConflict() async throws {
        // The app's next release: V2 declares one more index. Undo needs no datastore.
        let (persistence, cleanup) = try await Self.storeWithAClearedBox()
        defer { cleanup() }
        let store = persistence.core.store
        let transaction = try store.beginWrite()
        let base = transaction.baseView
        _ = try transaction.get(HistoryLayout.undo, in: HistoryLayout.tree)
        _ = try transaction.get([], in: DatastoreLayout.catalogTree)
        let found = try #require(try ActionHistory.undoable(in: store, from: base, scope: .namedActions))
        #expect(found.blockedBy == nil)
        let g = found.action.token.generation
        try Reversion.revert(
            g, from: try store.read(at: g, in: base), to: try store.read(at: g - 1, in: base), current: base,
            force: true, in: transaction, store: store)
        try transaction.putBlind(HistoryLayout.encode(g), for: HistoryLayout.undo, in: HistoryLayout.tree)
        // Meanwhile: the datastore is prepared with one more index. It has no records at its
        // base, so the index is built at once, with no entries.
        let v2 = persistence.datastore(for: V2.self)
        #expect(try await v2.count() == 0)
        // The undo read the catalog, which the preparation changed: it conflicts.
        #expect(throws: StorageError.self) { _ = try transaction.commit() }
        #expect(try await v2.load(1) == nil)
        #expect(persistence.verify().isClean, "\(persistence.verify().lines)")
        // Run again, it finds the preparation in its way.
        await #expect(throws: FolioError.self) { try await persistence.undo(forcing: found.action.token) }
    }

    /// The same two, one after the other: the undo is refused (the preparation blocks it).
    @Test func serially() async throws {
        let (persistence, cleanup) = try await Self.storeWithAClearedBox()
        defer { cleanup() }
        #expect(try await persistence.datastore(for: V2.self).count() == 0)
        await #expect(throws: FolioError.self) { try await persistence.undo() }
    }
}
