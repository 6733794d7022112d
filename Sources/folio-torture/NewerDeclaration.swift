import Foundation
@_spi(Engine) import Folio
import LibraryExample

/// `folio-torture authors-next STORE`: opens the store for writing as the newer release
/// would, persists author 1,000 (which prepares the datastore for the newer declaration:
/// its version recorded, its new index built), prints "prepared" and exits.
func runAuthorsNext(_ path: String) async throws {
    let persistence = try Persistence(at: path, options: PersistenceOptions(log: { _ in }))
    defer { persistence.close() }
    let authors = persistence.datastore(for: LibraryExample.AuthorFormatNext.self)
    try await authors.persist(LibraryExample.Author(id: 1_000, name: "Newer", born: 2026))
    say("prepared")
}
