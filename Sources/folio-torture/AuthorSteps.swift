import Foundation
import Folio
import FolioTestSupport
import LibraryExample

/// `author-steps STORE SEED KEY_LIMIT`: the writer of the cross-process wholesale test
/// (CrossProcessWholesaleTests). Opens the worked example's authors at STORE with
/// `changeRecordKeyLimit` KEY_LIMIT, persists authors 0..<10 and prints "ready G"; then, for
/// each line read from standard input, runs the next seeded step in one transaction and
/// prints "step n G" once it is durable (G its generation); prints "done G" at end of input.
///
/// Odd steps are large (30-59 operations, more than a commit lists when KEY_LIMIT is 20:
/// recorded wholesale) and always change author 3; even steps are small (1-5 operations).
/// Each operation persists or (one in five) deletes one of authors 0..<80, born 1900-1949.
func runAuthorSteps(_ arguments: [String]) async throws {
    guard arguments.count >= 3, let seed = UInt64(arguments[1]), let keyLimit = Int(arguments[2]) else {
        fail("usage: folio-torture author-steps STORE SEED KEY_LIMIT")
    }
    var options = PersistenceOptions(log: { _ in })
    options.changeRecordKeyLimit = keyLimit
    let persistence = try Persistence(at: arguments[0], options: options)
    defer { persistence.close() }
    let authors = persistence.datastore(for: AuthorFormat.self)
    try await persistence.perform {
        for id in 0..<10 { try await authors.persist(Author(id: id, name: "a\(id)", born: 1900 + id)) }
    }
    say("ready \(persistence.currentToken.generation)")
    var random = SplitMix64(seed: seed)
    var step = 0
    while readLine() != nil {
        let large = step % 2 == 1
        let operations = large ? 30 + random.index(30) : 1 + random.index(5)
        var plan: [(id: Int, born: Int?)] = []
        for _ in 0..<operations {
            let id = random.index(80)
            let born: Int? = random.index(5) == 0 ? nil : 1900 + random.index(50)
            plan.append((id, born))
        }
        if large { plan.append((3, 1900 + step)) }
        let number = step
        try await persistence.perform {
            for (id, born) in plan {
                if let born {
                    try await authors.persist(Author(id: id, name: "a\(id)-\(number)", born: born))
                } else {
                    try await authors.deleteIfPresent(id)
                }
            }
        }
        say("step \(step) \(persistence.currentToken.generation)")
        step += 1
    }
    say("done \(persistence.currentToken.generation)")
}
