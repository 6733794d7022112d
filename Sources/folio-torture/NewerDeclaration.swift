import Foundation
@_spi(Engine) import Folio
import LibraryExample

/// The authors datastore as a newer release of the library would declare it: a second
/// version and an index the first release does not have. For the tests of two releases
/// sharing one store (an app updated before its extension).
struct AuthorFormatNext: DatastoreFormat {
    enum Version: String, CaseIterable, Sendable {
        case first = "2025-01"
        case next = "2026-11"
    }
    static let key = "authors"
    static let currentVersion = Version.next
    typealias Instance = LibraryExample.Author

    let name = Index(\LibraryExample.Author.name)
    let born = Index(\LibraryExample.Author.born)
    let byIdentifier = Index(\LibraryExample.Author.id)

    init() {}
}

/// `folio-torture authors-next STORE`: opens the store for writing as the newer release
/// would, persists author 1,000 (which prepares the datastore for the newer declaration:
/// its version recorded, its new index built), prints "prepared" and exits.
func runAuthorsNext(_ path: String) async throws {
    let persistence = try Persistence(at: path, options: PersistenceOptions(log: { _ in }))
    defer { persistence.close() }
    let authors = persistence.datastore(for: AuthorFormatNext.self)
    try await authors.persist(LibraryExample.Author(id: 1_000, name: "Newer", born: 2026))
    say("prepared")
}
