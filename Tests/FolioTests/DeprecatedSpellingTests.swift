import Testing
import Foundation
import Folio
import FolioStorage

/// The spellings of earlier releases still compile and do what they did: `warm`,
/// `WarmProgress`, `IndexStorage.direct`, `purge`, `Persistence.flush()`,
/// `first(_:from:)`, `KeyBound`, and `Folio.RangeBound` (now FolioKeys', re-exported).
/// Each test is itself deprecated, so that calling them warns nowhere in the build.
@Suite struct DeprecatedSpellingTests {
    @available(*, deprecated, message: "exercises deprecated spellings")
    @Test func earlierSpellingsForwardToTheirReplacements() async throws {
        let persistence = Persistence.inMemory()
        defer { persistence.close() }
        let books = persistence.datastore(for: BookFormat.self)
        for n in 0..<30 { try await books.persist(makeBook(n)) }

        var progress: [WarmProgress] = []
        try await books.warm { progress.append($0) }
        #expect(progress.first == .evaluating && progress.last == .complete(total: 0))

        #expect(IndexStorage.direct == .covering)
        // The catalog and index fingerprints store the raw value: it must not change.
        #expect(IndexStorage.covering.rawValue == "direct")
        #expect(IndexStorage(rawValue: "direct") == .covering)

        let first = try await books.first(3, from: \.authors)
        #expect(first == (try await books.load(3, from: \.authors, limit: 1).collect().first))
        #expect(first != nil)

        #expect(try await books.purge(makeBook(0).id))
        #expect(try await books.purge(makeBook(0).id) == false)
        #expect(try await books.load(makeBook(0).id) == nil)

        try persistence.flush()

        let bound: KeyBound = .included([1, 2])
        let range = KeyRange(lower: bound, upper: .unbounded)
        #expect(range.lower == RangeBound<[UInt8]>.included([1, 2]))
        let qualified: Folio.RangeBound<Int> = .excluded(4)
        #expect(AnyRange(upper: qualified).upper == .excluded(4))
    }
}
