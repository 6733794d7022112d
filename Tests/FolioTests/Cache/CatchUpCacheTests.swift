import Testing
import Foundation
@testable import Folio
import FolioStorage
import FolioTestSupport
import LibraryExample

/// A writer that lets its lock go while another process writes, then catches up
/// (`Store.withWriterLockReleased`, Docs/Durability.md §1.6), never serves a record or a
/// value it cached before the other process rewrote it, and its next commit follows the
/// other's. (The catch-up reports the other's generations with their changes, so the
/// caches drop only what changed; they would be exact without the report too, emptying
/// themselves at a generation they never heard of: this test holds either way.)
@Suite struct CatchUpCacheTests {
    struct ChildFailed: Error, CustomStringConvertible {
        let description: String
    }

    @Test func recordsAndValuesCachedBeforeAnotherProcessWroteAreNotServedAfterTheCatchUp() async throws {
        let (persistence, path, cleanup) = try diskPersistence("catch-up-cache")
        defer { cleanup() }
        let tool = try ProjectExecutable.path("folio-torture")
        // Another writer process, run whole while this one has let its lock go.
        func anotherProcessWrites(_ arguments: [String]) throws {
            try persistence.core.store.withWriterLockReleased {
                let child = try ChildProcess(tool, arguments)
                guard try child.wait() == 0 else { throw ChildFailed(description: child.errorOutput) }
            }
        }
        let authors = persistence.datastore(for: LibraryExample.AuthorFormat.self)
        let counter = ValueKey<Int>("counter", default: 0)

        // Round 1: transactions 0-19 set authors 0-39 (author 0: born 0); counter 1-3.
        try anotherProcessWrites(["authors", path, "20"])
        try anotherProcessWrites(["values", path, "3"])
        // Read, and so cached, here.
        #expect(try await authors.load(0)?.born == 0)
        #expect(persistence.values[counter] == 3)

        // Round 2: transactions 0-39 (author 0: born 20); counter 1-5.
        try anotherProcessWrites(["authors", path, "40"])
        try anotherProcessWrites(["values", path, "5"])
        #expect(try await authors.load(0)?.born == 20, "a record cached before the other process wrote")
        #expect(persistence.values[counter] == 5, "a value cached before the other process wrote")

        // And this writer's own next commit follows the other's.
        try await authors.persist(LibraryExample.Author(id: 0, name: "here", born: 99))
        #expect(try await authors.count() == 40)
        expectSound(persistence)
    }
}
