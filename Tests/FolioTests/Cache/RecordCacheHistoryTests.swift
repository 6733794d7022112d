import Testing
@testable import Folio
import FolioStorage

/// A read-only store that adopts another history (a writer that fell back to an older root
/// after damage, writing commits with generations this process had read) reports it; the
/// record cache then serves nothing read at that generation, in either history.
@Suite struct RecordCacheHistoryTests {
    static let format = ObjectIdentifier(Int.self)

    func lookup(_ cache: RecordCache, generation: UInt64) -> String? {
        cache.instance([1], in: "records/t", generation: generation, format: Self.format)
    }

    func insert(_ value: String, into cache: RecordCache, generation: UInt64) {
        cache.insert(value, [1], in: "records/t", generation: generation, bytes: 8, format: Self.format)
    }

    @Test func nothingReadAtAReplacedGenerationIsServed() {
        let cache = RecordCache(limits: RecordCacheLimits(count: 10), generation: 0)
        cache.generationCreated(CreatedGeneration(generation: 5, changes: nil))
        insert("first history", into: cache, generation: 5)
        #expect(lookup(cache, generation: 5) == "first history")

        cache.generationCreated(CreatedGeneration(generation: 5, changes: nil, replacesHistory: true))
        #expect(lookup(cache, generation: 5) == nil, "an entry of the first history's generation 5")
        // A read still on the first history inserts after the report: never served either.
        insert("first history, late", into: cache, generation: 5)
        #expect(lookup(cache, generation: 5) == nil)

        // The next generation is read and cached as usual.
        #expect(lookup(cache, generation: 6) == nil)
        insert("second history", into: cache, generation: 6)
        #expect(lookup(cache, generation: 6) == "second history")
    }
}
