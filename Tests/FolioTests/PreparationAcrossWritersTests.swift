import Testing
import Foundation
@testable import Folio
import FolioStorage
import FolioTestSupport
import LibraryExample

/// Two releases sharing one store (an app updated before its extension): a writer process
/// of the newer release prepares a datastore for its declaration (a new version, a new
/// index) while a writer of the older release has it open and prepared. The older one
/// learns of the change (its turn's catch-up, or its following between turns) and compares
/// its declaration with the catalog again: it refuses with a clear error instead of
/// dropping the newer index and writing records of its older version over the newer ones.
@Suite(.serialized) struct PreparationAcrossWritersTests {
    @Test func anOlderDeclarationDoesNotUndoANewerOnePreparedByAnotherWriter() async throws {
        let (persistence, path, cleanup) = try diskPersistence("preparation-across-writers")
        defer { cleanup() }
        let authors = persistence.datastore(for: LibraryExample.AuthorFormat.self)
        try await authors.persist(LibraryExample.Author(id: 1, name: "Older", born: 1900))

        // The newer release, in another process, while this one is open and idle.
        let child = try ChildProcess(try ProjectExecutable.path("folio-torture"), ["authors-next", path])
        #expect(try child.wait() == 0, "the newer writer failed: \(child.errorOutput)")

        func isRefusal(_ error: any Error) -> Bool {
            guard case FolioError.incompatibleDeclaration(let datastore, let reason) = error else { return false }
            return datastore == "authors" && reason.contains("2026-11")
        }
        await #expect(
            performing: {
                try await authors.persist(LibraryExample.Author(id: 2, name: "Older again", born: 1901))
            }, throws: isRefusal)
        await #expect(performing: { _ = try await authors.load(1) }, throws: isRefusal)

        // The newer declaration finds its index whole, and nothing of the older one's.
        persistence.close()
        let newer = try Persistence(readingFrom: path, options: PersistenceOptions(log: { _ in }))
        defer { newer.close() }
        let next = newer.datastore(for: LibraryExample.AuthorFormatNext.self)
        #expect(try await next.count() == 2)
        #expect(try await next.load(2) == nil)
        #expect(try await next.load(...).collect().map(\.id) == [1, 1_000])
        #expect(newer.verify().isClean)
    }
}
